// fuse-gelu: rewrites the GELU chains of jax.nn.gelu into Gelu (opset >= 20).
//
// Recognised (x float32; products in any association and operand order,
// walked through Mul nodes used once; constants compared after rounding to
// float32, which is how JAX prints and the IR stores them):
//   tanh form (approximate=True):
//     x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//     with x^3 as Mul(x, Mul(x, x)) (integer_pow y=3) or Pow(x, 3)
//     -> Gelu(approximate="tanh")
//   erf form (approximate=False written with erf, as older JAX and
//   jax.scipy.special.erf users print it):
//     x * 0.5 * (1 + Erf(x * (1/sqrt 2)))  or  (1 + Erf(x / sqrt 2)),
//     or x * (Erf(x / sqrt 2) + 1) / 2 (jax.nn.gelu before the erfc form)
//     -> Gelu(approximate="none")
//   erfc form (jax.nn.gelu(approximate=False) in current JAX):
//     0.5 * x * erfc(-x * (1/sqrt 2))  (or -(x * (1/sqrt 2)), x * -(1/sqrt
//     2), -x / sqrt 2), where erfc of float32 is the IR pipeline's lowering
//     (plugin/elementwise_plan.h ErfcF64Approx): Cast to float64, Numerical
//     Recipes' erfcc t * exp(P(t) - z^2) with t = 1 / (1 + z/2), z = |a|,
//     reflected as 2 - erfc(|a|) for a < 0, Cast back to float32; every node
//     and all ten coefficients are matched exactly (float64 constants
//     compared bit for bit) -> Gelu(approximate="none"), since
//     erfc(-x / sqrt 2) = 1 + erf(x / sqrt 2).
//
// Semantics: ONNX Gelu(approximate="tanh") is
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) and Gelu() is
// 0.5 x (1 + erf(x / sqrt 2)): the matched expressions exactly, rounding
// aside. For the erfc form the rounding differs most in the far negative
// tail, where 1 + erf(x / sqrt 2) cancels in float32: the Gelu result is
// off by the order of |x| * 2^-24 absolute (a few float32 steps of 1 times
// |x| / 2; below 1e-6 for |x| < 16) where JAX's erfc keeps relative
// accuracy.
//
// Refuses: other element types than float32, any other constant (e.g. a
// cubic coefficient of 0.0447, an erfcc coefficient changed in the
// lowering), a different x anywhere in the chain, intermediates used
// outside it, and the float64 erfc lowering (a series / continued fraction,
// not this chain; float64 chains are never fused).
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <vector>

#include "ir/passes/fusion_match.h"
#include "ir/passes/fusions.h"

namespace jax2onnx::ir {
namespace {

using fusion::Match;

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kCubicCoefficient = 0.044715;
constexpr double kSqrtHalf = 0.7071067811865476;  // 1 / sqrt(2)
constexpr double kSqrt2 = 1.4142135623730951;

// Removes one factor satisfying `pred` from `factors`; false if none.
template <class Pred>
bool TakeFactor(std::vector<Value*>& factors, Pred pred) {
  auto it = std::find_if(factors.begin(), factors.end(), pred);
  if (it == factors.end()) return false;
  factors.erase(it);
  return true;
}

bool IsOne(Value* v) { return fusion::IsFloatConstant(v, 1.0); }

// v = x^3: Pow(x, 3), or the factors {x, x*x} / {x, x, x}.
bool MatchCube(std::vector<Value*> factors, Value* x, Match* m) {
  if (factors.size() == 1) {
    Node* p = fusion::ProducerIs(factors[0], "Pow");
    if (p == nullptr || !fusion::SameValue(p->input(0), x) ||
        !fusion::IsFloatConstant(p->input(1), 3.0)) {
      return false;
    }
    m->Add(p);
    return true;
  }
  if (factors.size() == 2) {
    for (int i = 0; i < 2; ++i) {
      if (!fusion::SameValue(factors[i], x)) continue;
      Match t2 = *m;
      if (fusion::SameValue(fusion::MatchSquare(factors[1 - i], &t2), x)) {
        *m = std::move(t2);
        return true;
      }
    }
    return false;
  }
  if (factors.size() == 3) {
    return std::all_of(factors.begin(), factors.end(),
                       [x](Value* f) { return fusion::SameValue(f, x); });
  }
  return false;
}

// inner = x + 0.044715 * x^3: returns x.
Value* MatchTanhInner(Value* inner, Match* m) {
  Node* add = fusion::ProducerIs(inner, "Add");
  if (add == nullptr) return nullptr;
  for (int i = 0; i < 2; ++i) {
    Value* x = add->input(i);
    Match t2 = *m;
    t2.Add(add);
    std::vector<Value*> f = fusion::MulFactors(add->input(1 - i), &t2);
    if (!TakeFactor(f, [](Value* v) {
          return fusion::IsFloatConstant(v, kCubicCoefficient);
        })) {
      continue;
    }
    if (!MatchCube(f, x, &t2)) continue;
    *m = std::move(t2);
    return x;
  }
  return nullptr;
}

// The float64 constants of the erfc lowering (ErfcF64Approx in
// plugin/elementwise_plan.h: Numerical Recipes' erfcc). They must stay equal
// to the lowering's; FusionTest.JaxErfcGeluBecomesGelu fails otherwise.
constexpr double kErfccCoefficients[] = {
    -1.26551223, 1.00002368,  0.37409196, 0.09678418,  -0.18628806,
    0.27886807,  -1.13520398, 1.48851587, -0.82215223, 0.17087277};

// A float64 scalar constant equal to `expected` bit for bit.
bool IsF64Constant(const Value* v, double expected) {
  if (fusion::DtypeOf(v) != onnx::TensorProto::DOUBLE) return false;
  std::optional<double> c = fusion::ScalarConstant(v);
  return c.has_value() && *c == expected;
}

// The producer of `v` when it is a plain `op` node with two inputs; with
// `*other` the input that is not `operand` (either order: Add and Mul are
// commutative in IEEE arithmetic), or nullptr.
Node* BinaryWith(Value* v, absl::string_view op,
                 const std::function<bool(Value*)>& operand, Value** other) {
  Node* n = v == nullptr ? nullptr : v->producer();
  if (n == nullptr || !n->domain().empty() || n->op_type() != op ||
      n->num_inputs() != 2) {
    return nullptr;
  }
  for (int i = 0; i < 2; ++i) {
    if (operand(n->input(i))) {
      *other = n->input(1 - i);
      return n;
    }
  }
  return nullptr;
}

Node* PlainProducer(Value* v, absl::string_view op) {
  Node* n = v == nullptr ? nullptr : v->producer();
  if (n == nullptr || !n->domain().empty() || n->op_type() != op) {
    return nullptr;
  }
  return n;
}

// v = erfc(a) for a float32 a, as the IR pipeline lowers it (see the top
// comment): returns a.
Value* MatchErfcF32(Value* v, Match* m) {
  Node* back = PlainProducer(v, "Cast");
  if (back == nullptr) return nullptr;
  const Attr* to = back->attr("to");
  if (to == nullptr || to->i() != onnx::TensorProto::FLOAT) return nullptr;
  Node* where = PlainProducer(back->input(0), "Where");
  if (where == nullptr || where->num_inputs() != 3) return nullptr;
  // Where(a64 < 0, 2 - ans, ans).
  Node* less = PlainProducer(where->input(0), "Less");
  if (less == nullptr || !IsF64Constant(less->input(1), 0.0)) return nullptr;
  Value* a64 = less->input(0);
  Node* widen = PlainProducer(a64, "Cast");
  if (widen == nullptr || widen->attr("to") == nullptr ||
      widen->attr("to")->i() != onnx::TensorProto::DOUBLE ||
      fusion::DtypeOf(widen->input(0)) != onnx::TensorProto::FLOAT) {
    return nullptr;
  }
  Value* ans = where->input(2);
  Node* reflect = PlainProducer(where->input(1), "Sub");
  if (reflect == nullptr || !IsF64Constant(reflect->input(0), 2.0) ||
      reflect->input(1) != ans) {
    return nullptr;
  }
  // ans = t * Exp(poly - z * z), z = Abs(a64).
  Match t2 = *m;
  for (Node* n : {back, where, less, widen, reflect}) t2.Add(n);
  auto is_exp = [](Value* x) { return PlainProducer(x, "Exp") != nullptr; };
  Value* t = nullptr;
  Node* ans_mul = BinaryWith(ans, "Mul", is_exp, &t);
  if (ans_mul == nullptr) return nullptr;
  Node* exp = PlainProducer(
      ans_mul->input(0) == t ? ans_mul->input(1) : ans_mul->input(0), "Exp");
  if (exp == nullptr) return nullptr;
  Node* sub = PlainProducer(exp->input(0), "Sub");
  if (sub == nullptr) return nullptr;
  Node* square = PlainProducer(sub->input(1), "Mul");
  if (square == nullptr || square->input(0) != square->input(1)) {
    return nullptr;
  }
  Value* z = square->input(0);
  Node* abs = PlainProducer(z, "Abs");
  if (abs == nullptr || abs->input(0) != a64) return nullptr;
  // t = 1 / (1 + 0.5 * z).
  Node* recip = PlainProducer(t, "Div");
  if (recip == nullptr || !IsF64Constant(recip->input(0), 1.0)) return nullptr;
  auto is_one = [](Value* x) { return IsF64Constant(x, 1.0); };
  auto is_half = [](Value* x) { return IsF64Constant(x, 0.5); };
  Value* half_z = nullptr;
  Value* z_again = nullptr;
  Node* denominator = BinaryWith(recip->input(1), "Add", is_one, &half_z);
  if (denominator == nullptr) return nullptr;
  Node* scale = BinaryWith(half_z, "Mul", is_half, &z_again);
  if (scale == nullptr || z_again != z) return nullptr;
  for (Node* n : {ans_mul, exp, sub, square, abs, recip, denominator, scale}) {
    t2.Add(n);
  }
  // poly = c0 + t * (c1 + t * (... (c8 + t * c9))), by Horner.
  Value* poly = sub->input(0);
  for (int i = 0; i < 9; ++i) {
    const double c = kErfccCoefficients[i];
    Value* product = nullptr;
    Node* add = BinaryWith(
        poly, "Add", [c](Value* x) { return IsF64Constant(x, c); }, &product);
    if (add == nullptr) return nullptr;
    Value* rest = nullptr;
    Node* mul = BinaryWith(
        product, "Mul", [t](Value* x) { return x == t; }, &rest);
    if (mul == nullptr) return nullptr;
    t2.Add(add);
    t2.Add(mul);
    poly = rest;
  }
  if (!IsF64Constant(poly, kErfccCoefficients[9])) return nullptr;
  *m = std::move(t2);
  return widen->input(0);
}

// a = -x * (1/sqrt 2) in one of the forms of the top comment: returns x.
Value* MatchNegatedScaledX(Value* a, Match* m) {
  Match t2 = *m;
  if (Node* neg = fusion::ProducerIs(a, "Neg")) {
    // -(x * (1/sqrt 2)).
    t2.Add(neg);
    std::vector<Value*> f = fusion::MulFactors(neg->input(0), &t2);
    if (f.size() == 2 && TakeFactor(f, [](Value* v) {
          return fusion::IsFloatConstant(v, kSqrtHalf);
        })) {
      *m = std::move(t2);
      return f[0];
    }
    return nullptr;
  }
  if (Node* d = fusion::ProducerIs(a, "Div")) {
    // -x / sqrt 2.
    Node* neg = fusion::ProducerIs(d->input(0), "Neg");
    if (neg == nullptr || !fusion::IsFloatConstant(d->input(1), kSqrt2)) {
      return nullptr;
    }
    t2.Add(d);
    t2.Add(neg);
    *m = std::move(t2);
    return neg->input(0);
  }
  std::vector<Value*> f = fusion::MulFactors(a, &t2);
  if (f.size() != 2) return nullptr;
  for (int i = 0; i < 2; ++i) {
    if (fusion::IsFloatConstant(f[1 - i], -kSqrtHalf)) {
      // x * -(1/sqrt 2).
      *m = std::move(t2);
      return f[i];
    }
    Node* neg = fusion::ProducerIs(f[i], "Neg");
    if (neg != nullptr && fusion::IsFloatConstant(f[1 - i], kSqrtHalf)) {
      // (-x) * (1/sqrt 2), as jax.nn.gelu prints it.
      t2.Add(neg);
      *m = std::move(t2);
      return neg->input(0);
    }
  }
  return nullptr;
}

// h = 1 + Tanh(sqrt(2/pi) * inner), 1 + Erf(x / sqrt 2) or
// erfc(-x / sqrt 2): returns x and sets *tanh.
Value* MatchHalfCdf(Value* h, bool* tanh, Match* m) {
  {
    // erfc(-x / sqrt 2) = 1 + erf(x / sqrt 2).
    Match t2 = *m;
    Value* a = MatchErfcF32(h, &t2);
    Value* x = a == nullptr ? nullptr : MatchNegatedScaledX(a, &t2);
    if (x != nullptr) {
      *tanh = false;
      *m = std::move(t2);
      return x;
    }
  }
  Node* add = fusion::ProducerIs(h, "Add");
  if (add == nullptr) return nullptr;
  for (int i = 0; i < 2; ++i) {
    if (!IsOne(add->input(1 - i))) continue;
    Match t2 = *m;
    t2.Add(add);
    Value* act = add->input(i);
    if (Node* t = fusion::ProducerIs(act, "Tanh")) {
      t2.Add(t);
      std::vector<Value*> f = fusion::MulFactors(t->input(0), &t2);
      if (f.size() != 2 || !TakeFactor(f, [](Value* v) {
            return fusion::IsFloatConstant(v, kSqrt2OverPi);
          })) {
        continue;
      }
      Value* x = MatchTanhInner(f[0], &t2);
      if (x == nullptr) continue;
      *tanh = true;
      *m = std::move(t2);
      return x;
    }
    if (Node* e = fusion::ProducerIs(act, "Erf")) {
      t2.Add(e);
      Value* x = nullptr;
      if (Node* d = fusion::ProducerIs(e->input(0), "Div")) {
        if (fusion::IsFloatConstant(d->input(1), kSqrt2)) {
          t2.Add(d);
          x = d->input(0);
        }
      } else {
        std::vector<Value*> f = fusion::MulFactors(e->input(0), &t2);
        if (f.size() == 2 && TakeFactor(f, [](Value* v) {
              return fusion::IsFloatConstant(v, kSqrtHalf);
            })) {
          x = f[0];
        }
      }
      if (x == nullptr) continue;
      *tanh = false;
      *m = std::move(t2);
      return x;
    }
  }
  return nullptr;
}

absl::StatusOr<bool> FuseAt(Graph& graph, Node* root,
                            const FusionOptions& options) {
  if (!root->domain().empty()) return false;
  Value* out = root->output(0);
  if (fusion::DtypeOf(out) != onnx::TensorProto::FLOAT) return false;
  Match m;
  std::vector<Value*> factors;
  if (root->op_type() == "Mul") {
    factors = fusion::MulFactors(out, &m);
    if (factors.size() != 3 || !TakeFactor(factors, [](Value* v) {
          return fusion::IsFloatConstant(v, 0.5);
        })) {
      return false;
    }
  } else if (root->op_type() == "Div" &&
             fusion::IsFloatConstant(root->input(1), 2.0)) {
    // Older jax.nn.gelu(approximate=False): x * (erf(x / sqrt 2) + 1) / 2.
    m.Add(root);
    factors = fusion::MulFactors(root->input(0), &m);
    if (factors.size() != 2) return false;
  } else {
    return false;
  }
  Value* x = nullptr;
  bool tanh = false;
  for (int i = 0; i < 2 && x == nullptr; ++i) {
    Match t2 = m;
    Value* inner_x = MatchHalfCdf(factors[1 - i], &tanh, &t2);
    if (inner_x != nullptr && fusion::SameValue(inner_x, factors[i])) {
      x = factors[i];
      m = std::move(t2);
    }
  }
  if (x == nullptr) return false;
  const char* rule = "fuse-gelu";
  if (fusion::DtypeOf(x) != onnx::TensorProto::FLOAT) {
    fusion::NearMiss(options, rule, root, fusion::kNotFloat32);
    return false;
  }
  if (!fusion::SameShape(out, x)) {
    fusion::NearMiss(options, rule, root, fusion::kShapeChanges);
    return false;
  }
  if (!fusion::UsesStayInside(m, root, options.fuse_low_precision_chains)) {
    fusion::NearMiss(options, rule, root, fusion::kUsedOutside);
    return false;
  }
  std::vector<Attr> attrs;
  if (tanh) attrs.push_back(Attr::String("approximate", "tanh"));
  Node* fused = graph.InsertBefore(
      root, Node::Create("", "Gelu", {x}, {graph.FreshName("fused_gelu")},
                         std::move(attrs)));
  fused->output(0)->SetType(fusion::FusedType(out, x));
  if (absl::Status s =
          fusion::ReplaceAndErase(graph, root, fused->output(0), m);
      !s.ok()) {
    return s;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> FuseGeluAt(Graph& graph, Node* root,
                                const FusionOptions& options) {
  return FuseAt(graph, root, options);
}

}  // namespace jax2onnx::ir
