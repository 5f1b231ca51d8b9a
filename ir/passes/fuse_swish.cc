// fuse-swish: rewrites x * Sigmoid(x) (jax.nn.silu / jax.nn.swish print
// `logistic`, lowered to Sigmoid) into Swish (opset >= 24, alpha = 1).
//
// Semantics: ONNX Swish(alpha) is x * sigmoid(alpha * x); with alpha = 1 it
// is the matched product exactly, rounding aside.
//
// Refuses: other element types than float32, a Sigmoid of another value
// than the multiplied one, a Sigmoid output used elsewhere, opset < 24.
#include <vector>

#include "ir/passes/fusion_match.h"
#include "ir/passes/fusions.h"

namespace jax2onnx::ir {
namespace {

using fusion::Match;

absl::StatusOr<bool> FuseAt(Graph& graph, Node* root,
                            const FusionOptions& options) {
  if (!root->domain().empty() || root->op_type() != "Mul" ||
      root->num_inputs() != 2) {
    return false;
  }
  Value* out = root->output(0);
  if (fusion::DtypeOf(out) != onnx::TensorProto::FLOAT) return false;
  for (int i = 0; i < 2; ++i) {
    Value* x = root->input(i);
    Node* sig = fusion::ProducerIs(root->input(1 - i), "Sigmoid");
    if (sig == nullptr || !fusion::SameValue(sig->input(0), x)) continue;
    if (!fusion::SameShape(out, x)) {
      fusion::NearMiss(options, "fuse-swish", root, fusion::kShapeChanges);
      return false;
    }
    Match m;
    m.Add(root);
    m.Add(sig);
    if (!fusion::UsesStayInside(m, root, options.fuse_low_precision_chains)) {
      fusion::NearMiss(options, "fuse-swish", root, fusion::kUsedOutside);
      return false;
    }
    std::vector<Attr> attrs;
    attrs.push_back(Attr::Float("alpha", 1.0f));
    Node* fused = graph.InsertBefore(
        root, Node::Create("", "Swish", {x}, {graph.FreshName("fused_swish")},
                           std::move(attrs)));
    fused->output(0)->SetType(fusion::FusedType(out, x));
    if (absl::Status s =
            fusion::ReplaceAndErase(graph, root, fused->output(0), m);
        !s.ok()) {
      return s;
    }
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> FuseSwishAt(Graph& graph, Node* root,
                                 const FusionOptions& options) {
  return FuseAt(graph, root, options);
}

}  // namespace jax2onnx::ir
