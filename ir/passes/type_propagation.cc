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
// noop_with_empty_axes). Also, per the ONNX shape-inference rules:
// Gather (data.shape[:axis] + indices.shape + data.shape[axis+1:]),
// Unsqueeze with constant axes (input, or the attribute before opset 13;
// axes index the output, 1s inserted there), Concat (equal rank; the axis
// dim is the sum when all are static, else unknown; other dims the first
// static one, else the first symbol), Range (1-D of start's dtype; the
// length max(ceil((limit - start) / delta), 0) for constant int32/int64
// operands, else unknown) and Slice with constant starts/ends (and
// axes/steps when given): per sliced axis of static size, start and end
// made non-negative by adding the dim and clamped ([0, dim] for a positive
// step, [0, dim-1] and [-1, dim-1] for a negative one), the size
// max(ceil((end - start) / step), 0); a symbolic sliced axis is unknown;
// BitShift as a broadcasting binary op.
// Runs to a fixpoint within one pass by walking the (sorted) graph in order.
//
// Refuses: known dtypes or known dims of an existing type (never changed:
// an inferred type that disagrees with one is dropped), inputs of unknown
// type, shapes whose broadcast is not decidable statically (different
// symbols), Conv with SAME_* auto_pad, Unsqueeze/Slice with run-time
// axes/starts/ends/steps, out-of-range or repeated axes, a zero Slice step or
// Range delta, every other op.
#include <algorithm>
#include <limits>
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

// Gather's output: data.shape[:axis] + indices.shape + data.shape[axis+1:].
std::optional<Type> GatherType(const Node* n, const Type* data,
                               const Type* indices) {
  if (data == nullptr || indices == nullptr) return std::nullopt;
  const std::vector<Dim>& dd = data->shape()->dims();
  const int64_t rank = static_cast<int64_t>(dd.size());
  int64_t axis = IntAttr(n, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  std::vector<Dim> dims(dd.begin(), dd.begin() + axis);
  for (const Dim& d : indices->shape()->dims()) dims.push_back(d);
  dims.insert(dims.end(), dd.begin() + axis + 1, dd.end());
  return Type::Tensor(data->elem_type(), Shape(std::move(dims)));
}

// Unsqueeze's output: rank + len(axes), a 1 at each (output) axis, the input
// dims in order elsewhere.
std::optional<Type> UnsqueezeType(const Node* n, const Type* t) {
  if (t == nullptr) return std::nullopt;
  std::optional<std::vector<int64_t>> axes =
      n->num_inputs() >= 2 && n->input(1) != nullptr ? ConstInts(n->input(1))
                                                     : IntsAttr(n, "axes");
  if (!axes.has_value()) return std::nullopt;
  const std::vector<Dim>& in = t->shape()->dims();
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes->size());
  std::optional<std::vector<int64_t>> normalized =
      NormalizeAxes(*axes, out_rank);
  if (!normalized.has_value() ||
      std::adjacent_find(normalized->begin(), normalized->end()) !=
          normalized->end()) {
    return std::nullopt;
  }
  std::vector<Dim> dims;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (std::binary_search(normalized->begin(), normalized->end(), i)) {
      dims.push_back(Dim(1));
    } else {
      dims.push_back(in[next++]);
    }
  }
  return Type::Tensor(t->elem_type(), Shape(std::move(dims)));
}

// Concat's output; see the top comment.
std::optional<Type> ConcatType(const Node* n,
                               const std::vector<const Type*>& ins) {
  if (ins.empty()) return std::nullopt;
  for (const Type* t : ins) {
    if (t == nullptr || t->elem_type() != ins[0]->elem_type() ||
        t->shape()->rank() != ins[0]->shape()->rank()) {
      return std::nullopt;
    }
  }
  const int64_t rank = static_cast<int64_t>(ins[0]->shape()->rank());
  const Attr* axis_attr = n->attr("axis");
  if (axis_attr == nullptr || axis_attr->is_ref() ||
      axis_attr->type() != onnx::AttributeProto::INT) {
    return std::nullopt;
  }
  int64_t axis = axis_attr->i();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  std::vector<Dim> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (i == axis) {
      int64_t sum = 0;
      bool all_static = true;
      for (const Type* t : ins) {
        const Dim& d = (*t->shape())[i];
        all_static = all_static && d.is_value();
        if (d.is_value()) sum += d.value();
      }
      dims.push_back(all_static ? Dim(sum) : Dim::Unknown());
      continue;
    }
    // ONNX merges the inputs' dims: a static size wins (two different ones
    // are an error), else the first symbol.
    Dim merged = Dim::Unknown();
    for (const Type* t : ins) {
      const Dim& d = (*t->shape())[i];
      if (d.is_value()) {
        if (merged.is_value() && merged.value() != d.value()) {
          return std::nullopt;
        }
        merged = d;
      } else if (d.is_param() && merged.is_unknown()) {
        merged = d;
      }
    }
    dims.push_back(merged);
  }
  return Type::Tensor(ins[0]->elem_type(), Shape(std::move(dims)));
}

// The single element of a constant int32/int64 scalar (or 1-element) input.
std::optional<int64_t> ConstScalarInt(const Value* v) {
  std::optional<std::vector<int64_t>> ints = ConstInts(v);
  if (!ints.has_value() || ints->size() != 1) return std::nullopt;
  return (*ints)[0];
}

// ceil(a / b) for b != 0, in integers.
int64_t CeilDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

// Range's output: 1-D of start's dtype, its length from constant int
// operands (max(ceil((limit - start) / delta), 0)), else unknown.
std::optional<Type> RangeType(const Node* n, const Type* start) {
  if (start == nullptr || n->num_inputs() != 3) return std::nullopt;
  Dim length = Dim::Unknown();
  std::optional<int64_t> s = ConstScalarInt(n->input(0));
  std::optional<int64_t> l = ConstScalarInt(n->input(1));
  std::optional<int64_t> d = ConstScalarInt(n->input(2));
  if (s && l && d) {
    if (*d == 0) return std::nullopt;
    // The difference is taken in 128 bits; one outside (INT64_MIN,
    // INT64_MAX] is refused, so neither it nor its quotient by any nonzero
    // delta overflows int64.
    const __int128 diff = static_cast<__int128>(*l) - *s;
    if (diff > std::numeric_limits<int64_t>::max() ||
        diff <= std::numeric_limits<int64_t>::min()) {
      return std::nullopt;
    }
    length = Dim(std::max<int64_t>(CeilDiv(static_cast<int64_t>(diff), *d), 0));
  }
  return Type::Tensor(start->elem_type(), Shape({length}));
}

// Slice's output; see the top comment.
std::optional<Type> SliceType(const Node* n, const Type* t) {
  if (t == nullptr || n->num_inputs() < 3) return std::nullopt;
  const std::vector<Dim>& in = t->shape()->dims();
  const int64_t rank = static_cast<int64_t>(in.size());
  std::optional<std::vector<int64_t>> starts = ConstInts(n->input(1));
  std::optional<std::vector<int64_t>> ends = ConstInts(n->input(2));
  if (!starts.has_value() || !ends.has_value() ||
      starts->size() != ends->size()) {
    return std::nullopt;
  }
  const size_t k = starts->size();
  std::vector<int64_t> axes(k), steps(k, 1);
  for (size_t i = 0; i < k; ++i) axes[i] = static_cast<int64_t>(i);
  if (n->num_inputs() >= 4 && n->input(3) != nullptr) {
    std::optional<std::vector<int64_t>> a = ConstInts(n->input(3));
    if (!a.has_value() || a->size() != k) return std::nullopt;
    axes = *a;
  }
  if (n->num_inputs() >= 5 && n->input(4) != nullptr) {
    std::optional<std::vector<int64_t>> st = ConstInts(n->input(4));
    if (!st.has_value() || st->size() != k) return std::nullopt;
    steps = *st;
  }
  std::vector<Dim> dims = in;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < k; ++i) {
    int64_t axis = axes[i];
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || seen[axis]) return std::nullopt;
    seen[axis] = true;
    const int64_t step = steps[i];
    if (step == 0) return std::nullopt;
    if (!in[axis].is_value()) {
      dims[axis] = Dim::Unknown();
      continue;
    }
    const int64_t dim = in[axis].value();
    if (dim == 0) {
      dims[axis] = Dim(0);
      continue;
    }
    int64_t start = (*starts)[i];
    int64_t end = (*ends)[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    // |end - start| <= dim + 1, so no overflow.
    dims[axis] = Dim(std::max<int64_t>(CeilDiv(end - start, step), 0));
  }
  return Type::Tensor(t->elem_type(), Shape(std::move(dims)));
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
  if (IsOp(n, "Gather")) return GatherType(n, in_type(0), in_type(1));
  if (IsOp(n, "Unsqueeze")) return UnsqueezeType(n, in_type(0));
  if (IsOp(n, "Concat")) {
    std::vector<const Type*> ins;
    for (int i = 0; i < n->num_inputs(); ++i) ins.push_back(in_type(i));
    return ConcatType(n, ins);
  }
  if (IsOp(n, "Range")) return RangeType(n, in_type(0));
  if (IsOp(n, "Slice")) return SliceType(n, in_type(0));
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
