// Interpreter kernels of the special functions whose scalar math lives in
// special_math.cc (igamma family, Bessel i0e/i1e, zeta, polygamma,
// regularized incomplete beta). Operands share one float dtype and
// broadcast like any n-ary op; f16/bf16/f32 results are the long double
// values rounded once.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/eval/eval_util.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/eval/special_math.h"

namespace jax2onnx::jaxpr {
namespace {

using Result = absl::StatusOr<std::vector<Array>>;

// What a special function sees of its element dtype: the log of the largest
// finite value XLA's compute dtype holds (f16/bf16 compute in f32), and
// whether that dtype is f64.
struct Precision {
  double log_max;
  bool f64;
};

using Scalar1 = double (*)(double, Precision);
using Scalar2 = double (*)(double, double, Precision);
using Scalar3 = double (*)(double, double, double, Precision);

template <typename Fn>
Result Apply(const EvalContext& ctx, absl::Span<const Array> in, size_t arity,
             Fn fn) {
  const std::string& prim = ctx.eqn().primitive;
  if (in.size() != arity) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", prim, "' takes ", arity, " operands, got ", in.size()));
  }
  const DType d = in[0].dtype();
  for (const Array& a : in) {
    if (a.dtype() != d) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", prim, "' needs operands of one dtype, got ",
                       ShortName(d), " and ", ShortName(a.dtype())));
    }
  }
  if (d != DType::kF16 && d != DType::kBF16 && d != DType::kF32 &&
      d != DType::kF64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", prim, "' takes floating operands, got ", ShortName(d)));
  }
  std::vector<std::vector<int64_t>> shapes;
  for (const Array& a : in) shapes.push_back(a.shape());
  auto shape = eval::BroadcastShapes(shapes);
  if (!shape.ok()) return shape.status();
  auto ops = eval::BroadcastAll(in, *shape);
  if (!ops.ok()) return ops.status();
  const Precision p =
      d == DType::kF64
          ? Precision{std::log(DBL_MAX), true}
          : Precision{std::log(static_cast<double>(FLT_MAX)), false};
  return eval::VisitDType(d, [&](auto tag) -> Result {
    constexpr DType D = decltype(tag)::value;
    if constexpr (!eval::kIsFloat<eval::ComputeT<D>>) {
      return absl::InternalError("unreachable dtype");
    } else {
      using C = eval::ComputeT<D>;
      Array out(D, *shape);
      const int64_t n = out.num_elements();
      double args[3] = {0, 0, 0};
      for (int64_t i = 0; i < n; ++i) {
        for (size_t k = 0; k < arity; ++k) {
          args[k] = static_cast<double>(eval::Load<D>((*ops)[k], i));
        }
        eval::Store<D>(&out, i, static_cast<C>(fn(args, p)));
      }
      return std::vector<Array>{std::move(out)};
    }
  });
}

#define J2O_SPECIAL_KERNEL(NAME, ARITY, EXPR)                       \
  Result NAME(const EvalContext& ctx, absl::Span<const Array> in) { \
    return Apply(ctx, in, ARITY, [](const double* v, Precision p) { \
      (void)p;                                                      \
      return EXPR;                                                  \
    });                                                             \
  }

J2O_SPECIAL_KERNEL(IgammaKernel, 2, special::Igamma(v[0], v[1], p.log_max))
J2O_SPECIAL_KERNEL(IgammacKernel, 2, special::Igammac(v[0], v[1], p.log_max))
J2O_SPECIAL_KERNEL(IgammaGradAKernel, 2,
                   special::IgammaGradA(v[0], v[1], p.log_max))
J2O_SPECIAL_KERNEL(RandomGammaGradKernel, 2,
                   special::RandomGammaGrad(v[0], v[1], p.log_max))
J2O_SPECIAL_KERNEL(BesselI0eKernel, 1, special::BesselI0e(v[0]))
J2O_SPECIAL_KERNEL(BesselI1eKernel, 1, special::BesselI1e(v[0]))
J2O_SPECIAL_KERNEL(ZetaKernel, 2, special::Zeta(v[0], v[1]))
J2O_SPECIAL_KERNEL(PolygammaKernel, 2, special::Polygamma(v[0], v[1]))
J2O_SPECIAL_KERNEL(BetaincKernel, 3,
                   special::RegularizedIncompleteBeta(v[0], v[1], v[2], p.f64))
#undef J2O_SPECIAL_KERNEL

}  // namespace

void RegisterSpecialKernels() {
  RegisterEvalKernel("igamma", &IgammaKernel);
  RegisterEvalKernel("igammac", &IgammacKernel);
  RegisterEvalKernel("igamma_grad_a", &IgammaGradAKernel);
  RegisterEvalKernel("random_gamma_grad", &RandomGammaGradKernel);
  RegisterEvalKernel("bessel_i0e", &BesselI0eKernel);
  RegisterEvalKernel("bessel_i1e", &BesselI1eKernel);
  RegisterEvalKernel("zeta", &ZetaKernel);
  RegisterEvalKernel("polygamma", &PolygammaKernel);
  RegisterEvalKernel("regularized_incomplete_beta", &BetaincKernel);
}

}  // namespace jax2onnx::jaxpr
