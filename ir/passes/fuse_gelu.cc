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
//
// Semantics: ONNX Gelu(approximate="tanh") is
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) and Gelu() is
// 0.5 x (1 + erf(x / sqrt 2)): the matched expressions exactly, rounding
// aside.
//
// Refuses: other element types than float32, any other constant (e.g. a
// cubic coefficient of 0.0447), a different x anywhere in the chain,
// intermediates used outside it. The current jax.nn.gelu(approximate=False)
// prints erfc(-x * sqrt(1/2)), which the IR pipeline lowers (float32) to a
// float64 rational approximation of erfc, not to Erf; that chain is not
// matched and stays as it is.
#include <algorithm>
#include <cmath>
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

// h = 1 + Tanh(sqrt(2/pi) * inner) or 1 + Erf(x / sqrt 2): returns x and
// sets *tanh.
Value* MatchHalfCdf(Value* h, bool* tanh, Match* m) {
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
  if (x == nullptr || fusion::DtypeOf(x) != onnx::TensorProto::FLOAT) {
    return false;
  }
  if (!fusion::SameShape(out, x)) return false;
  if (!fusion::UsesStayInside(m, root, options.fuse_low_precision_chains)) {
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

class FuseGelu : public Pass {
 public:
  explicit FuseGelu(FusionOptions options) : options_(options) {}
  absl::string_view name() const override { return "fuse-gelu"; }
  absl::StatusOr<bool> Run(Model& model) override {
    if (fusion::DefaultOpset(model) < 20) return false;
    return fusion::ForEachNodeBackwards(
        model, [this](Graph& g, Node* n) { return FuseAt(g, n, options_); });
  }

 private:
  FusionOptions options_;
};

}  // namespace

std::unique_ptr<Pass> CreateFuseGeluPass(FusionOptions options) {
  return std::make_unique<FuseGelu>(options);
}

}  // namespace jax2onnx::ir
