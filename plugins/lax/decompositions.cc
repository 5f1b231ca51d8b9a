// Legacy lowerings of the matrix factorizations and solves; the recipes are
// in plugin/linalg_plan.h, shared with the IR pipeline.
#include "plugin/eig_plan.h"
#include "plugin/linalg_plan.h"
#include "plugin/linalg_update_plan.h"
#include "plugin/qr_plan.h"
#include "plugin/registry.h"
#include "plugins/lax/legacy_emitter.h"

namespace jax2onnx::plugins {

// Called from RegisterLinalg (plugins/lax/linalg.cc).
void RegisterDecompositions() {
  using Em = NeutralLegacyEmitter;
  struct Entry {
    const char* name;
    plugin::LegacyLoweringFn fn;
  };
  const Entry entries[] = {
      {"cholesky", &WithNeutralEmitter<&plugin::LowerCholesky<Em>>},
      {"triangular_solve",
       &WithNeutralEmitter<&plugin::LowerTriangularSolve<Em>>},
      {"lu", &WithNeutralEmitter<&plugin::LowerLu<Em>>},
      {"lu_pivots_to_permutation",
       &WithNeutralEmitter<&plugin::LowerLuPivotsToPermutation<Em>>},
      {"custom_linear_solve",
       &WithNeutralEmitter<&plugin::LowerCustomLinearSolve<Em>>},
      {"eigh", &WithNeutralEmitter<&plugin::LowerEigh<Em>>},
      {"svd", &WithNeutralEmitter<&plugin::LowerSvd<Em>>},
      {"qr", &WithNeutralEmitter<&plugin::LowerQr<Em>>},
      {"geqrf", &WithNeutralEmitter<&plugin::LowerGeqrf<Em>>},
      {"householder_product",
       &WithNeutralEmitter<&plugin::LowerHouseholderProduct<Em>>},
      {"ormqr", &WithNeutralEmitter<&plugin::LowerOrmqr<Em>>},
      {"hessenberg", &WithNeutralEmitter<&plugin::LowerHessenberg<Em>>},
      {"symmetric_product",
       &WithNeutralEmitter<&plugin::LowerSymmetricProduct<Em>>},
      {"cholesky_update",
       &WithNeutralEmitter<&plugin::LowerCholeskyUpdate<Em>>},
      {"tridiagonal_solve",
       &WithNeutralEmitter<&plugin::LowerTridiagonalSolve<Em>>},
  };
  plugin::Registry& r = plugin::Registry::Global();
  for (const Entry& e : entries) {
    r.RegisterLegacy(e.name, e.fn, plugin::LinalgLoweringInfo(e.name));
  }
}

}  // namespace jax2onnx::plugins
