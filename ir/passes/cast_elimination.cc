// cast-elimination: removes casts that cannot change a value.
//  - Cast(x, to=T) where x already has element type T: the consumers read x.
//  - Cast(Cast(x, to=A), to=T) where x has element type T and every value of
//    T is exactly representable in A (a widening round trip such as
//    f32 -> f64 -> f32 or i32 -> i64 -> i32): the consumers read x.
//
// Refuses: round trips through a narrower or differently ranged type
// (f64 -> f32 -> f64 rounds, i64 -> i32 -> i64 wraps, f32 -> i32 -> f32
// truncates, i32 -> f32 -> i32 loses integers above 2^24); casts whose
// input type is unknown; CastLike; casts whose output is a graph output
// (the name is the interface). saturate= only matters for float8 targets,
// which are never treated as exact here.
#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

using TP = onnx::TensorProto;

// Every value of `from` is exactly representable in `to` (so from -> to ->
// from is the identity, NaN payloads aside, which compare equal).
bool ExactlyRepresentable(int from, int to) {
  if (from == to) return true;
  switch (from) {
    case TP::BOOL:
      return to == TP::INT8 || to == TP::UINT8 || to == TP::INT16 ||
             to == TP::UINT16 || to == TP::INT32 || to == TP::UINT32 ||
             to == TP::INT64 || to == TP::UINT64 || to == TP::FLOAT16 ||
             to == TP::BFLOAT16 || to == TP::FLOAT || to == TP::DOUBLE;
    case TP::INT8:
      // bf16 has 8 significand bits, so every |x| <= 256 is exact.
      return to == TP::INT16 || to == TP::INT32 || to == TP::INT64 ||
             to == TP::FLOAT16 || to == TP::BFLOAT16 || to == TP::FLOAT ||
             to == TP::DOUBLE;
    case TP::UINT8:
      return to == TP::INT16 || to == TP::UINT16 || to == TP::INT32 ||
             to == TP::UINT32 || to == TP::INT64 || to == TP::UINT64 ||
             to == TP::FLOAT16 || to == TP::BFLOAT16 || to == TP::FLOAT ||
             to == TP::DOUBLE;
    case TP::INT16:
      return to == TP::INT32 || to == TP::INT64 || to == TP::FLOAT ||
             to == TP::DOUBLE;
    case TP::UINT16:
      return to == TP::INT32 || to == TP::UINT32 || to == TP::INT64 ||
             to == TP::UINT64 || to == TP::FLOAT || to == TP::DOUBLE;
    case TP::INT32:
      return to == TP::INT64 || to == TP::DOUBLE;
    case TP::UINT32:
      return to == TP::INT64 || to == TP::UINT64 || to == TP::DOUBLE;
    case TP::FLOAT16:
    case TP::BFLOAT16:
      return to == TP::FLOAT || to == TP::DOUBLE;
    case TP::FLOAT:
      return to == TP::DOUBLE;
    default:
      return false;
  }
}

bool IsPlainCast(const Node* node) {
  return IsOp(node, "Cast") && node->num_inputs() == 1 &&
         node->input(0) != nullptr && node->num_outputs() == 1 &&
         node->attr("to") != nullptr && !node->attr("to")->is_ref();
}

class CastElimination : public Pass {
 public:
  absl::string_view name() const override { return "cast-elimination"; }
  std::vector<absl::string_view> AnchorOps() const override {
    return {"Cast"};
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        if (!IsPlainCast(node)) continue;
        Value* out = node->output(0);
        if (out->is_graph_output() || out->num_uses() == 0) continue;
        const int to = static_cast<int>(IntAttr(node, "to", 0));
        Value* in = node->input(0);
        if (in->dtype() == to) {
          ReplaceAllUsesWith(out, in);
          changed = true;
          continue;
        }
        Node* inner = in->producer();
        if (!IsPlainCast(inner)) continue;
        Value* source = inner->input(0);
        const int middle = static_cast<int>(IntAttr(inner, "to", 0));
        if (source->dtype() == to && ExactlyRepresentable(to, middle)) {
          ReplaceAllUsesWith(out, source);
          changed = true;
        }
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateCastEliminationPass() {
  return std::make_unique<CastElimination>();
}

}  // namespace jax2onnx::ir
