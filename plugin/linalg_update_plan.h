// Pipeline-independent lowerings of symmetric_product and cholesky_update,
// the two lax.linalg products JAX's CPU lowering computes with its own jax
// functions (_symmetric_product_jax_fn, _cholesky_update_jax_fn), written
// against plugin/emit.h with linalg_plan.h's Builder.
#ifndef JAX2ONNX_PLUGIN_LINALG_UPDATE_PLAN_H_
#define JAX2ONNX_PLUGIN_LINALG_UPDATE_PLAN_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/linalg_plan.h"

namespace jax2onnx::plugin {

// symmetric_product(a, c) = alpha a aᵀ + beta c, a [..., n, k], c
// [..., n, n]: JAX's CPU lowering (_symmetric_product_jax_fn), the whole
// matrix (syrk on GPU writes only the lower triangle, which agrees).
template <class E>
absl::Status LowerSymmetricProduct(E& e) {
  namespace lp = linalg_plan;
  using linalg_plan::V;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 2 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        "symmetric_product takes 2 operands, 1 result");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const jaxpr::DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "symmetric_product"));
  J2O_ASSIGN_OR_RETURN(double alpha, eqn.params.GetFloat("alpha"));
  J2O_ASSIGN_OR_RETURN(double beta, eqn.params.GetFloat("beta"));
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(V<E> a, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> c, e.In(1));
  V<E> gram = e.Op("MatMul", {a, b.TransposeLast2(a, aval.rank(), dt)}, dt);
  // beta c is kept when beta == 0: 0 x NaN is NaN in JAX too.
  return e.SetOut(0, b.Bin("Add", b.Bin("Mul", b.Scalar(alpha), gram, dt),
                           b.Bin("Mul", b.Scalar(beta), c, dt), dt));
}

// cholesky_update(r, w): JAX's CPU lowering (_cholesky_update_jax_fn) in
// one Loop over k: the Givens rotation (c, s) of (r[k][k], w[k]) (drotg:
// (1, 0) where w[k] == 0, else both scaled by the larger magnitude,
// rh = 1 / sqrt(x² + y²), c = x rh, s = -y rh) turns the whole row k and w
// into c row - s w and c w + s row. Unbatched, as JAX defines it.
template <class E>
absl::Status LowerCholeskyUpdate(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using linalg_plan::V;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 2 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        "cholesky_update takes 2 operands, 1 result");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "cholesky_update"));
  if (aval.rank() != 2) {
    return absl::InvalidArgumentError("cholesky_update: r must be [n, n]");
  }
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(V<E> r, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> w, e.In(1));
  J2O_ASSIGN_OR_RETURN(V<E> n, b.Size(aval.shape[1]));
  V<E> rows = b.Unsqueeze(b.Iota(n), 1, DType::kI64);  // [n, 1]
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(n, {r, w},
             {CarriedType(dt, aval.shape), CarriedType(dt, {aval.shape[1]})},
             [&](V<E> k, const std::vector<V<E>>& carried)
                 -> absl::StatusOr<std::vector<V<E>>> {
               V<E> m = carried[0];
               V<E> z = carried[1];
               V<E> row = b.Take(m, k, 0, dt);  // [n]
               V<E> x = b.Take(row, k, 0, dt);
               V<E> y = b.Take(z, k, 0, dt);
               V<E> ax = e.Op("Abs", {x}, dt);
               V<E> ay = e.Op("Abs", {y}, dt);
               V<E> rotate =
                   e.Op("Not", {b.Bin("Equal", y, b.Scalar(0), DType::kBool)},
                        DType::kBool);
               V<E> denominator = b.Where(
                   rotate,
                   b.Where(b.Bin("Greater", ax, ay, DType::kBool), ax, ay, dt),
                   b.Scalar(1), dt);
               V<E> xs = b.Bin("Div", x, denominator, dt);
               V<E> ys = b.Bin("Div", y, denominator, dt);
               V<E> rh = b.Bin("Div", b.Scalar(1),
                               e.Op("Sqrt",
                                    {b.Bin("Add", b.Bin("Mul", xs, xs, dt),
                                           b.Bin("Mul", ys, ys, dt), dt)},
                                    dt),
                               dt);
               V<E> c =
                   b.Where(rotate, b.Bin("Mul", xs, rh, dt), b.Scalar(1), dt);
               V<E> s =
                   b.Where(rotate, e.Op("Neg", {b.Bin("Mul", ys, rh, dt)}, dt),
                           b.Scalar(0), dt);
               V<E> new_row = b.Bin("Sub", b.Bin("Mul", c, row, dt),
                                    b.Bin("Mul", s, z, dt), dt);
               V<E> new_z = b.Bin("Add", b.Bin("Mul", c, z, dt),
                                  b.Bin("Mul", s, row, dt), dt);
               m = b.Where(b.Bin("Equal", rows, k, DType::kBool),
                           b.Unsqueeze(new_row, 0, dt), m, dt);
               return std::vector<V<E>>{m, new_z};
             }));
  return e.SetOut(0, out[0]);
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_LINALG_UPDATE_PLAN_H_
