// The rules of the matrix factorizations and solves (plugin/rules.h): the
// recipes are in linalg_plan.h, linalg_update_plan.h, qr_plan.h and
// eig_plan.h; their ops and notes in LinalgLoweringInfo.
#ifndef JAX2ONNX_PLUGIN_DECOMPOSITION_RULES_H_
#define JAX2ONNX_PLUGIN_DECOMPOSITION_RULES_H_

#include "plugin/eig_plan.h"
#include "plugin/linalg_plan.h"
#include "plugin/linalg_update_plan.h"
#include "plugin/qr_plan.h"
#include "plugin/rules.h"

namespace jax2onnx::plugin {

template <class R>
void DecompositionRules(R& r) {
  using E = typename R::Emitter;
  r.template Neutral<&LowerCholesky<E>>("cholesky",
                                        LinalgLoweringInfo("cholesky"));
  r.template Neutral<&LowerTriangularSolve<E>>(
      "triangular_solve", LinalgLoweringInfo("triangular_solve"));
  r.template Neutral<&LowerLu<E>>("lu", LinalgLoweringInfo("lu"));
  r.template Neutral<&LowerLuPivotsToPermutation<E>>(
      "lu_pivots_to_permutation",
      LinalgLoweringInfo("lu_pivots_to_permutation"));
  r.template Neutral<&LowerCustomLinearSolve<E>>(
      "custom_linear_solve", LinalgLoweringInfo("custom_linear_solve"));
  r.template Neutral<&LowerEigh<E>>("eigh", LinalgLoweringInfo("eigh"));
  r.template Neutral<&LowerSvd<E>>("svd", LinalgLoweringInfo("svd"));
  r.template Neutral<&LowerQr<E>>("qr", LinalgLoweringInfo("qr"));
  r.template Neutral<&LowerGeqrf<E>>("geqrf", LinalgLoweringInfo("geqrf"));
  r.template Neutral<&LowerHouseholderProduct<E>>(
      "householder_product", LinalgLoweringInfo("householder_product"));
  r.template Neutral<&LowerOrmqr<E>>("ormqr", LinalgLoweringInfo("ormqr"));
  r.template Neutral<&LowerHessenberg<E>>("hessenberg",
                                          LinalgLoweringInfo("hessenberg"));
  r.template Neutral<&LowerSymmetricProduct<E>>(
      "symmetric_product", LinalgLoweringInfo("symmetric_product"));
  r.template Neutral<&LowerCholeskyUpdate<E>>(
      "cholesky_update", LinalgLoweringInfo("cholesky_update"));
  r.template Neutral<&LowerTridiagonalSolve<E>>(
      "tridiagonal_solve", LinalgLoweringInfo("tridiagonal_solve"));
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_DECOMPOSITION_RULES_H_
