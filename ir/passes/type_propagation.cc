// type-propagation: gives a type to node outputs that have none, or
// completes a tensor type whose shape is unknown or has unknown dims, where
// the ONNX operator's type rule makes it a function of the input types
// (and constant inputs) alone, so every intermediate value carries its
// dtype and full shape in value_info (what Netron shows on each edge).
// Covered: unary elementwise ops (same type; IsNaN/IsInf give bool), Cast
// (its `to`, same shape), broadcasting binary ops and Where (numpy
// broadcast of the input shapes; comparisons give bool), Transpose
// (permuted shape), Shape (1-D int64), MatMul (numpy matmul: 1-D operands
// promoted and their axis dropped, batch axes broadcast), Reshape with a
// constant target (0 copies the input dim unless allowzero, -1 is the
// quotient of static sizes), and Conv with explicit pads or
// auto_pad=NOTSET/VALID (out = floor((in + pads - dilation * (k - 1) - 1) /
// stride) + 1 per spatial axis; a symbolic input size gives an unknown dim),
// and ReduceMax/ReduceMin with constant axes (input or attribute; reduced axes
// kept as 1 or dropped by keepdims, all axes when none are given unless
// noop_with_empty_axes).
// Runs to a fixpoint within one pass by walking the (sorted) graph in order.
//
// Refuses: known dtypes or known dims of an existing type (never changed:
// an inferred type that disagrees with one is dropped), inputs of unknown
// type, shapes whose broadcast is not decidable statically (different
// symbols), Conv with SAME_* auto_pad, every other op.
#include <algorithm>
#include <string>
#include <vector>

#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

bool OneOf(const Node* n, std::initializer_list<absl::string_view> ops) {
  for (absl::string_view op : ops) {
    if (IsOp(n, op)) return true;
  }
  return false;
}

// Conv's output: [N, M, spatial...] from X [N, C, in...] and W [M, C/g,
// k...]; see the top comment.
std::optional<Type> ConvType(const Node* n, const Type* x, const Type* w) {
  if (x == nullptr || w == nullptr) return std::nullopt;
  const std::vector<Dim>& xd = x->shape()->dims();
  const std::vector<Dim>& wd = w->shape()->dims();
  if (xd.size() < 3 || wd.size() != xd.size()) return std::nullopt;
  const size_t spatial = xd.size() - 2;
  const Attr* auto_pad = n->attr("auto_pad");
  const std::string pad_mode =
      auto_pad == nullptr ? "NOTSET" : std::string(auto_pad->s());
  if (pad_mode != "NOTSET" && pad_mode != "VALID") return std::nullopt;
  auto ints_or = [&](absl::string_view name, size_t size,
                     int64_t fallback) -> std::optional<std::vector<int64_t>> {
    std::optional<std::vector<int64_t>> v = IntsAttr(n, name);
    if (!v.has_value()) return std::vector<int64_t>(size, fallback);
    if (v->size() != size) return std::nullopt;
    return v;
  };
  std::optional<std::vector<int64_t>> strides = ints_or("strides", spatial, 1);
  std::optional<std::vector<int64_t>> dilations =
      ints_or("dilations", spatial, 1);
  std::optional<std::vector<int64_t>> pads = ints_or("pads", 2 * spatial, 0);
  if (!strides || !dilations || !pads) return std::nullopt;
  if (pad_mode == "VALID") pads->assign(2 * spatial, 0);
  std::optional<std::vector<int64_t>> kernel = IntsAttr(n, "kernel_shape");
  if (kernel.has_value() && kernel->size() != spatial) return std::nullopt;
  std::vector<Dim> dims = {xd[0], wd[0]};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t k = 0;
    if (kernel.has_value()) {
      k = (*kernel)[i];
    } else if (wd[2 + i].is_value()) {
      k = wd[2 + i].value();
    }
    const int64_t s = (*strides)[i];
    const int64_t d = (*dilations)[i];
    if (k <= 0 || s <= 0 || d <= 0 || !xd[2 + i].is_value()) {
      dims.push_back(Dim::Unknown());
      continue;
    }
    const int64_t span =
        xd[2 + i].value() + (*pads)[i] + (*pads)[spatial + i] - d * (k - 1) - 1;
    if (span < 0) return std::nullopt;  // ONNX Runtime rejects it
    dims.push_back(Dim(span / s + 1));
  }
  return Type::Tensor(x->elem_type(), Shape(std::move(dims)));
}

std::optional<Type> Infer(const Node* n) {
  auto in_type = [&](int i) -> const Type* {
    if (i >= n->num_inputs() || n->input(i) == nullptr) return nullptr;
    const Type* t = n->input(i)->type();
    return t != nullptr && t->is_tensor() && t->shape().has_value() &&
                   t->elem_type() != onnx::TensorProto::UNDEFINED
               ? t
               : nullptr;
  };
  if (OneOf(
          n,
          {"Abs",       "Acos",      "Acosh",      "Asin",        "Asinh",
           "Atan",      "Atanh",     "Ceil",       "Cos",         "Cosh",
           "Erf",       "Exp",       "Floor",      "Identity",    "Log",
           "Neg",       "Not",       "Reciprocal", "Relu",        "Round",
           "Sigmoid",   "Sign",      "Sin",        "Sinh",        "Sqrt",
           "Tan",       "Tanh",      "Softplus",   "Softsign",    "BitwiseNot",
           "LeakyRelu", "Elu",       "Selu",       "HardSigmoid", "Celu",
           "Mish",      "HardSwish", "Gelu"})) {
    if (const Type* t = in_type(0)) return *t;
    return std::nullopt;
  }
  if (OneOf(n, {"IsNaN", "IsInf"})) {
    if (const Type* t = in_type(0)) {
      return Type::Tensor(onnx::TensorProto::BOOL, t->shape());
    }
    return std::nullopt;
  }
  if (IsOp(n, "Cast")) {
    const Type* t = in_type(0);
    const int64_t to = IntAttr(n, "to", 0);
    if (t == nullptr || to == 0) return std::nullopt;
    return Type::Tensor(static_cast<int>(to), t->shape());
  }
  const bool comparison =
      OneOf(n, {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"});
  const bool arithmetic = OneOf(
      n, {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "And", "Or",
          "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitShift"});
  const bool where = IsOp(n, "Where");
  if (comparison || arithmetic || where) {
    std::vector<Dim> dims;
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Type* t = in_type(i);
      if (t == nullptr) return std::nullopt;
      std::optional<std::vector<Dim>> b =
          BroadcastDims(dims, t->shape()->dims());
      if (!b.has_value()) return std::nullopt;
      dims = std::move(*b);
    }
    const int dtype = comparison ? onnx::TensorProto::BOOL
                                 : in_type(where ? 1 : 0)->elem_type();
    return Type::Tensor(dtype, Shape(std::move(dims)));
  }
  if (IsOp(n, "Transpose")) {
    const Type* t = in_type(0);
    if (t == nullptr) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(t->shape()->rank());
    std::vector<int64_t> perm;
    if (auto p = IntsAttr(n, "perm")) {
      perm = *p;
    } else {
      for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
    }
    if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
    std::vector<Dim> dims;
    for (int64_t p : perm) {
      if (p < 0 || p >= rank) return std::nullopt;
      dims.push_back((*t->shape())[p]);
    }
    return Type::Tensor(t->elem_type(), Shape(std::move(dims)));
  }
  if (IsOp(n, "MatMul")) {
    const Type* a = in_type(0);
    const Type* b = in_type(1);
    if (a == nullptr || b == nullptr || a->shape()->rank() == 0 ||
        b->shape()->rank() == 0) {
      return std::nullopt;
    }
    std::vector<Dim> ad = a->shape()->dims();
    std::vector<Dim> bd = b->shape()->dims();
    const bool a_vector = ad.size() == 1;
    const bool b_vector = bd.size() == 1;
    if (a_vector) ad.insert(ad.begin(), Dim(1));
    if (b_vector) bd.push_back(Dim(1));
    std::optional<std::vector<Dim>> batch =
        BroadcastDims(std::vector<Dim>(ad.begin(), ad.end() - 2),
                      std::vector<Dim>(bd.begin(), bd.end() - 2));
    if (!batch.has_value()) return std::nullopt;
    std::vector<Dim> dims = std::move(*batch);
    if (!a_vector) dims.push_back(ad[ad.size() - 2]);
    if (!b_vector) dims.push_back(bd.back());
    return Type::Tensor(a->elem_type(), Shape(std::move(dims)));
  }
  if (IsOp(n, "Reshape")) {
    const Type* t = in_type(0);
    std::optional<std::vector<int64_t>> target =
        n->num_inputs() == 2 && n->input(1) != nullptr ? ConstInts(n->input(1))
                                                       : std::nullopt;
    if (t == nullptr || !target.has_value()) return std::nullopt;
    const bool allowzero = IntAttr(n, "allowzero", 0) != 0;
    const std::vector<Dim>& in = t->shape()->dims();
    std::vector<Dim> dims;
    int infer_at = -1;
    for (size_t i = 0; i < target->size(); ++i) {
      const int64_t v = (*target)[i];
      if (v == 0 && !allowzero) {
        if (i >= in.size()) return std::nullopt;
        dims.push_back(in[i]);
      } else if (v == -1 && infer_at < 0) {
        infer_at = static_cast<int>(i);
        dims.push_back(Dim::Unknown());
      } else if (v >= 0) {
        dims.push_back(Dim(v));
      } else {
        return std::nullopt;
      }
    }
    if (infer_at >= 0) {
      // -1: the input's element count over the other dims', when static.
      int64_t total = 1, rest = 1;
      for (const Dim& d : in) {
        if (!d.is_value()) return std::nullopt;
        total *= d.value();
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        if (static_cast<int>(i) == infer_at) continue;
        if (!dims[i].is_value()) return std::nullopt;
        rest *= dims[i].value();
      }
      if (rest == 0 || total % rest != 0) return std::nullopt;
      dims[infer_at] = Dim(total / rest);
    }
    return Type::Tensor(t->elem_type(), Shape(std::move(dims)));
  }
  if (IsOp(n, "Conv")) return ConvType(n, in_type(0), in_type(1));
  // ReduceMax/ReduceMin only (the exact max/min fix-ups' reductions): typing
  // ReduceSum as well made the IR pipeline read a function's symbolic batch
  // from a ReduceSum output instead of the function's input
  // (FunctionsTest.SymbolicDimIsReadFromTheFunctionsOwnInput).
  if (OneOf(n, {"ReduceMax", "ReduceMin"})) {
    const Type* t = in_type(0);
    if (t == nullptr || !t->shape().has_value()) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(t->shape()->rank());
    // Axes: the constant second input (ReduceSum >= 13, the rest >= 18) or
    // the `axes` attribute; none means all, unless noop_with_empty_axes.
    std::optional<std::vector<int64_t>> axes =
        n->num_inputs() >= 2 && n->input(1) != nullptr
            ? ConstInts(n->input(1))
            : IntsAttr(n, "axes");
    if (n->num_inputs() >= 2 && n->input(1) != nullptr && !axes.has_value()) {
      return std::nullopt;  // axes computed at run time
    }
    std::vector<int64_t> all(rank);
    for (int64_t i = 0; i < rank; ++i) all[i] = i;
    if (!axes.has_value() || axes->empty()) {
      if (IntAttr(n, "noop_with_empty_axes", 0) != 0) return *t;
      axes = all;
    }
    std::optional<std::vector<int64_t>> normalized =
        NormalizeAxes(*axes, rank);
    if (!normalized.has_value()) return std::nullopt;
    const bool keepdims = IntAttr(n, "keepdims", 1) != 0;
    std::vector<Dim> dims;
    for (int64_t i = 0; i < rank; ++i) {
      const bool reduced = std::binary_search(normalized->begin(),
                                              normalized->end(), i);
      if (!reduced) {
        dims.push_back((*t->shape())[i]);
      } else if (keepdims) {
        dims.push_back(Dim(1));
      }
    }
    return Type::Tensor(t->elem_type(), Shape(std::move(dims)));
  }
  if (IsOp(n, "Shape")) {
    const Type* t = in_type(0);
    if (t == nullptr) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(t->shape()->rank());
    int64_t start = IntAttr(n, "start", 0);
    int64_t end = IntAttr(n, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    return Type::Tensor(onnx::TensorProto::INT64,
                        Shape({std::max<int64_t>(end - start, 0)}));
  }
  return std::nullopt;
}

// A tensor type missing its dtype, its shape or some dim.
bool Incomplete(const Type& t) {
  if (!t.is_tensor()) return false;
  if (t.elem_type() == onnx::TensorProto::UNDEFINED) return true;
  if (!t.shape().has_value()) return true;
  for (const Dim& d : t.shape()->dims()) {
    if (d.is_unknown()) return true;
  }
  return false;
}

// `known` with its unknown parts taken from `inferred`; nullopt when the two
// disagree on anything `known` states (then `known` stays as it is).
std::optional<Type> Completed(const Type& known, const Type& inferred) {
  if (!inferred.is_tensor()) return std::nullopt;
  int dtype = known.elem_type();
  if (dtype == onnx::TensorProto::UNDEFINED) {
    dtype = inferred.elem_type();
  } else if (dtype != inferred.elem_type()) {
    return std::nullopt;
  }
  if (!known.shape().has_value()) return Type::Tensor(dtype, inferred.shape());
  if (!inferred.shape().has_value() ||
      inferred.shape()->rank() != known.shape()->rank()) {
    return std::nullopt;
  }
  std::vector<Dim> dims = known.shape()->dims();
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim& d = (*inferred.shape())[i];
    if (dims[i].is_unknown()) {
      dims[i] = d;
    } else if (dims[i].is_value() && d.is_value() &&
               dims[i].value() != d.value()) {
      return std::nullopt;
    }
  }
  return Type::Tensor(dtype, Shape(std::move(dims)));
}

class TypePropagation : public Pass {
 public:
  absl::string_view name() const override { return "type-propagation"; }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        if (node->num_outputs() != 1 || node->output(0)->name().empty()) {
          continue;
        }
        Value* out = node->output(0);
        if (out->type() != nullptr && !Incomplete(*out->type())) continue;
        std::optional<Type> t = Infer(node);
        if (!t.has_value()) continue;
        if (out->type() != nullptr) {
          t = Completed(*out->type(), *t);
          if (!t.has_value() || *t == *out->type()) continue;
        }
        out->SetType(std::move(t));
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateTypePropagationPass() {
  return std::make_unique<TypePropagation>();
}

}  // namespace jax2onnx::ir
