// gemm-bias-folding: a rank-2 dense layer, Add(MatMul(a, b), c) (either
// operand order) with f32 a, b and c, becomes Gemm(a, b, c); a Gemm that
// transpose-folding made from a MatMul (no C, alpha = beta = 1) takes the
// bias the same way. JAX prints a dense layer as dot_general + add of the
// broadcast bias; expand-elimination leaves Add(MatMul(x, W), b) with b of
// shape [N].
//
// What changes numerically: nothing in the products; ONNX Runtime's CPU
// Gemm (MLAS SGEMM with beta = 1) starts each output element's sum from the
// bias instead of adding it after the last product, so the bias's position
// within one element's sum moves (a reassociation of that sum, the
// accuracy class of the dot product itself; `jax2onnx check` compares
// within its noise-scaled bound, and shadow compare reports EQUIVALENT).
//
// Refuses: other dtypes (Gemm's f16/f64/bf16 kernels are not MLAS SGEMM),
// operands that are not rank 2, a bias whose shape is not unidirectionally
// broadcastable to the product's [M, N] (rank > 2, or a dim that is neither
// 1 nor the product's; unknown dims), an Add whose output is larger than
// the product (the bias would broadcast the product), products with other
// uses or that are graph outputs, Gemms that already have C or an alpha or
// beta other than 1.
#include <optional>
#include <vector>

#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

bool IsF32(const Value* v) {
  return v != nullptr && v->dtype() == onnx::TensorProto::FLOAT;
}

bool IsRank2F32(const Value* v) {
  return IsF32(v) && v->shape() != nullptr && v->shape()->rank() == 2;
}

float FloatAttr(const Node* node, absl::string_view name, float fallback) {
  const Attr* a = node->attr(name);
  return a == nullptr ? fallback : a->f();
}

// The product node of a bias Add operand: a MatMul of two rank-2 f32
// values, or a Gemm without C and with alpha = beta = 1.
Node* PlainProduct(Value* v) {
  Node* p = v == nullptr ? nullptr : v->producer();
  if (p == nullptr || p->num_outputs() != 1 || !HasSingleUse(v)) {
    return nullptr;
  }
  if (IsOp(p, "MatMul")) {
    if (p->num_inputs() != 2 || !IsRank2F32(p->input(0)) ||
        !IsRank2F32(p->input(1))) {
      return nullptr;
    }
    return p;
  }
  if (IsOp(p, "Gemm")) {
    if (p->num_inputs() != 2 || p->input(0) == nullptr ||
        p->input(1) == nullptr || FloatAttr(p, "alpha", 1.0f) != 1.0f ||
        FloatAttr(p, "beta", 1.0f) != 1.0f) {
      return nullptr;
    }
    return p;
  }
  return nullptr;
}

// Equal known sizes or equal symbol names (JAX's symbols denote one size).
bool SameDim(const Dim& a, const Dim& b) {
  return (a.is_value() && b.is_value() && a.value() == b.value()) ||
         (a.is_param() && b.is_param() && a.param() == b.param());
}

// `bias`'s shape broadcasts unidirectionally to the product's [M, N], and
// the Add's output keeps the product's shape.
bool BiasFits(const Value* bias, const Value* product, const Value* sum) {
  if (!IsF32(bias) || bias->shape() == nullptr || !IsRank2F32(product) ||
      sum->shape() == nullptr || sum->shape()->rank() != 2) {
    return false;
  }
  const std::vector<Dim>& out = product->shape()->dims();
  for (size_t i = 0; i < 2; ++i) {
    if (!SameDim(sum->shape()->dims()[i], out[i])) return false;
  }
  const std::vector<Dim>& b = bias->shape()->dims();
  if (b.size() > 2) return false;
  for (size_t i = 0; i < b.size(); ++i) {
    const Dim& bd = b[b.size() - 1 - i];
    const Dim& od = out[out.size() - 1 - i];
    const bool one = bd.is_value() && bd.value() == 1;
    if (!one && !SameDim(bd, od)) return false;
  }
  return true;
}

class GemmBiasFolding : public Pass {
 public:
  absl::string_view name() const override { return "gemm-bias-folding"; }
  std::vector<absl::string_view> AnchorOps() const override {
    return {"MatMul", "Gemm"};
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* add : g->nodes()) {
        if (!IsOp(add, "Add") || add->num_inputs() != 2 ||
            add->num_outputs() != 1) {
          continue;
        }
        for (int i = 0; i < 2; ++i) {
          Node* product = PlainProduct(add->input(i));
          Value* bias = add->input(1 - i);
          if (product == nullptr || product->graph() != add->graph() ||
              !BiasFits(bias, product->output(0), add->output(0))) {
            continue;
          }
          // The Add becomes the Gemm (it keeps the output value and its
          // name); the product node is left for dead-node-elimination.
          Value* a = product->input(0);
          Value* b = product->input(1);
          add->ReplaceInputWith(0, a);
          add->ReplaceInputWith(1, b);
          add->AppendInput(bias);
          for (const Attr& attr : product->attributes()) {
            if (attr.name() == "transA" || attr.name() == "transB") {
              add->SetAttr(Attr::Int(attr.name(), attr.i()));
            }
          }
          add->set_op_type("Gemm");
          add->set_name(DerivedNodeName(product, "Gemm"));
          changed = true;
          break;
        }
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateGemmBiasFoldingPass() {
  return std::make_unique<GemmBiasFolding>();
}

}  // namespace jax2onnx::ir
