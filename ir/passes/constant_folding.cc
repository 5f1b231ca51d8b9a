// constant-folding: evaluates data-movement and cast nodes whose inputs are
// all initializers (weights and shape constants) in the main graph, function
// bodies (whose initializers ir::ToProto writes as Constant nodes) and their
// subgraphs, replacing the node's output by a new initializer:
// Identity, Transpose, Reshape, Squeeze, Unsqueeze, Flatten, Concat and
// Cast between integer types, bool, f32 and f64. Each folded value is
// computed exactly: data movement copies element bytes, Cast follows C++
// static_cast as ONNX Runtime's CPU kernel does (integer targets wrap
// modulo 2^n, f64 -> f32 rounds to nearest even). Identity, Reshape,
// Squeeze, Unsqueeze and Flatten share the input's bytes (no copy).
//
// Size cap: a fold never grows the model by more than 1 KiB. It happens when
// the result is at most 1 KiB, or at most the bytes of the initializers that
// only this node reads (those become unused and are pruned), so reshaping or
// transposing a weight replaces it while a weight shared with other nodes
// is not duplicated.
//
// Refuses: string tensors, external data, float -> integer casts (ORT's
// static_cast is undefined out of range) and f16/bf16/float8 casts, Reshape
// with a target the input's element count cannot take, nodes whose output
// is a graph output (its name is the interface).
#include <algorithm>
#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"
#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

using TP = onnx::TensorProto;
constexpr int64_t kSmallFoldBytes = 1024;

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string TransposeBytes(absl::string_view in,
                           const std::vector<int64_t>& dims,
                           const std::vector<int64_t>& perm, int elem) {
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> in_strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) {
    in_strides[i] = in_strides[i + 1] * dims[i + 1];
  }
  std::vector<int64_t> out_dims(rank), stride_of_out(rank);
  for (int i = 0; i < rank; ++i) {
    out_dims[i] = dims[perm[i]];
    stride_of_out[i] = in_strides[perm[i]];
  }
  const int64_t n = Product(dims);
  std::string out(static_cast<size_t>(n * elem), '\0');
  std::vector<int64_t> index(rank, 0);
  int64_t src = 0;
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(&out[k * elem], in.data() + src * elem, elem);
    for (int i = rank - 1; i >= 0; --i) {
      ++index[i];
      src += stride_of_out[i];
      if (index[i] < out_dims[i]) break;
      src -= stride_of_out[i] * out_dims[i];
      index[i] = 0;
    }
  }
  return out;
}

bool IsInt(int t) {
  return t == TP::INT8 || t == TP::UINT8 || t == TP::INT16 || t == TP::UINT16 ||
         t == TP::INT32 || t == TP::UINT32 || t == TP::INT64 ||
         t == TP::UINT64 || t == TP::BOOL;
}

// Reads element k as an exact integer (signed values sign-extended, unsigned
// zero-extended into the 128-bit-free pair (value, is_unsigned_big)).
struct IntElem {
  int64_t s = 0;
  uint64_t u = 0;
  bool from_unsigned = false;
};

IntElem ReadInt(const char* p, int t) {
  IntElem e;
  switch (t) {
    case TP::BOOL:
      e.s = *reinterpret_cast<const uint8_t*>(p) != 0;
      break;
    case TP::INT8: {
      int8_t v;
      std::memcpy(&v, p, 1);
      e.s = v;
      break;
    }
    case TP::UINT8: {
      uint8_t v;
      std::memcpy(&v, p, 1);
      e.s = v;
      break;
    }
    case TP::INT16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      e.s = v;
      break;
    }
    case TP::UINT16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      e.s = v;
      break;
    }
    case TP::INT32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      e.s = v;
      break;
    }
    case TP::UINT32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      e.s = v;
      break;
    }
    case TP::INT64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      e.s = v;
      break;
    }
    case TP::UINT64: {
      std::memcpy(&e.u, p, 8);
      e.from_unsigned = true;
      e.s = static_cast<int64_t>(e.u);
      break;
    }
  }
  return e;
}

template <typename T>
void Put(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Cast one element; false when the cast is not folded.
bool CastElem(const char* in, int from, char* out, int to) {
  if (IsInt(from)) {
    const IntElem e = ReadInt(in, from);
    switch (to) {
      case TP::BOOL:
        Put<uint8_t>(out, e.s != 0);
        return true;
      case TP::INT8:
        Put(out, static_cast<int8_t>(e.s));
        return true;
      case TP::UINT8:
        Put(out, static_cast<uint8_t>(e.s));
        return true;
      case TP::INT16:
        Put(out, static_cast<int16_t>(e.s));
        return true;
      case TP::UINT16:
        Put(out, static_cast<uint16_t>(e.s));
        return true;
      case TP::INT32:
        Put(out, static_cast<int32_t>(e.s));
        return true;
      case TP::UINT32:
        Put(out, static_cast<uint32_t>(e.s));
        return true;
      case TP::INT64:
        Put(out, e.s);
        return true;
      case TP::UINT64:
        Put(out, static_cast<uint64_t>(e.s));
        return true;
      case TP::FLOAT:
        Put(out, e.from_unsigned ? static_cast<float>(e.u)
                                 : static_cast<float>(e.s));
        return true;
      case TP::DOUBLE:
        Put(out, e.from_unsigned ? static_cast<double>(e.u)
                                 : static_cast<double>(e.s));
        return true;
      default:
        return false;
    }
  }
  if (from == TP::FLOAT && to == TP::DOUBLE) {
    float v;
    std::memcpy(&v, in, 4);
    Put(out, static_cast<double>(v));
    return true;
  }
  if (from == TP::DOUBLE && to == TP::FLOAT) {
    double v;
    std::memcpy(&v, in, 8);
    Put(out, static_cast<float>(v));
    return true;
  }
  return false;
}

class ConstantFolding : public Pass {
 public:
  absl::string_view name() const override { return "constant-folding"; }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    // Function bodies too: a constant folded there becomes an initializer
    // of the body, written as a Constant node (ir::ToProto).
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        if (node->num_outputs() != 1 || node->output(0)->is_graph_output() ||
            node->output(0)->num_uses() == 0 || !node->Subgraphs().empty()) {
          continue;
        }
        std::optional<Tensor> folded = Fold(node);
        if (!folded.has_value()) continue;
        if (!WithinSizeCap(node, *folded)) continue;
        Value* out = node->output(0);
        Graph* root = g->root();
        const int dtype = folded->dtype();
        std::vector<Dim> dims(folded->dims().begin(), folded->dims().end());
        // The folded value keeps the name of the equation that computes it.
        const std::string name = out->name();
        out->SetName(root->FreshName(absl::StrCat(name, "_unfolded")));
        absl::StatusOr<Value*> init =
            root->AddInitializer(name, *std::move(folded));
        if (!init.ok()) return init.status();
        (*init)->SetType(Type::Tensor(dtype, Shape(std::move(dims))));
        ReplaceAllUsesWith(out, *init);
        changed = true;
      }
    }
    return changed;
  }

 private:
  static bool WithinSizeCap(const Node* node, const Tensor& folded) {
    const int64_t bytes = folded.num_elements() * DataTypeSize(folded.dtype());
    if (bytes <= kSmallFoldBytes) return true;
    int64_t freed = 0;
    std::vector<const Value*> seen;
    for (const Value* in : node->inputs()) {
      if (in == nullptr ||
          std::find(seen.begin(), seen.end(), in) != seen.end()) {
        continue;
      }
      seen.push_back(in);
      bool only_here = !in->is_graph_output() && !in->is_graph_input();
      for (const Use& u : in->uses()) only_here &= u.node == node;
      if (only_here) {
        freed += in->const_value()->num_elements() *
                 DataTypeSize(in->const_value()->dtype());
      }
    }
    return bytes <= freed;
  }

  static std::optional<Tensor> Fold(const Node* node) {
    static constexpr absl::string_view kOps[] = {
        "Identity",  "Transpose", "Reshape", "Squeeze",
        "Unsqueeze", "Flatten",   "Concat",  "Cast"};
    bool known = false;
    for (absl::string_view op : kOps) known |= IsOp(node, op);
    if (!known || node->num_inputs() == 0) return std::nullopt;
    for (const Value* in : node->inputs()) {
      if (in == nullptr || in->const_value() == nullptr ||
          in->is_graph_input()) {
        return std::nullopt;
      }
      const Tensor& t = *in->const_value();
      if (t.is_string() || t.is_external() || DataTypeSize(t.dtype()) == 0) {
        return std::nullopt;
      }
    }
    const Tensor& x = *node->input(0)->const_value();
    const std::vector<int64_t>& dims = x.dims();
    const int64_t rank = static_cast<int64_t>(dims.size());
    const int elem = DataTypeSize(x.dtype());
    // The same bytes under new dims: borrowed from the input's tensor (kept
    // alive by the new one), not copied, so reshaping a weight (DenseGeneral
    // kernels: 113 MB in ViT-B/16) costs no memory.
    auto moved = [&](std::vector<int64_t> new_dims) -> std::optional<Tensor> {
      if (Product(new_dims) != x.num_elements()) return std::nullopt;
      return Tensor::Borrowed(x.dtype(), std::move(new_dims), x.bytes(),
                              node->input(0)->shared_const_value());
    };
    const std::string& op = node->op_type();
    if (op == "Identity") return moved(dims);
    if (op == "Transpose") {
      std::vector<int64_t> perm;
      if (auto p = IntsAttr(node, "perm")) {
        perm = *p;
      } else {
        for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
      }
      if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int64_t> out_dims;
      for (int64_t i = 0; i < rank; ++i) {
        if (sorted[i] != i) return std::nullopt;
        out_dims.push_back(dims[perm[i]]);
      }
      return Tensor(x.dtype(), std::move(out_dims),
                    TransposeBytes(x.bytes(), dims, perm, elem));
    }
    if (op == "Reshape") {
      if (node->num_inputs() != 2) return std::nullopt;
      std::optional<std::vector<int64_t>> shape = ConstInts(node->input(1));
      if (!shape) return std::nullopt;
      const bool allowzero = IntAttr(node, "allowzero", 0) != 0;
      int infer = -1;
      int64_t known_product = 1;
      for (size_t i = 0; i < shape->size(); ++i) {
        int64_t& d = (*shape)[i];
        if (d == 0 && !allowzero) {
          if (static_cast<int64_t>(i) >= rank) return std::nullopt;
          d = dims[i];
        }
        if (d == -1) {
          if (infer >= 0) return std::nullopt;
          infer = static_cast<int>(i);
          continue;
        }
        if (d < 0) return std::nullopt;
        known_product *= d;
      }
      if (infer >= 0) {
        if (known_product == 0 || x.num_elements() % known_product != 0) {
          return std::nullopt;
        }
        (*shape)[infer] = x.num_elements() / known_product;
      }
      return moved(*shape);
    }
    if (op == "Flatten") {
      int64_t axis = IntAttr(node, "axis", 1);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis > rank) return std::nullopt;
      int64_t outer = 1;
      for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
      return moved({outer, x.num_elements() / std::max<int64_t>(outer, 1)});
    }
    if (op == "Squeeze" || op == "Unsqueeze") {
      std::optional<std::vector<int64_t>> axes = node->num_inputs() > 1
                                                     ? ConstInts(node->input(1))
                                                     : IntsAttr(node, "axes");
      if (op == "Squeeze" && !axes) {
        std::vector<int64_t> out_dims;
        for (int64_t d : dims) {
          if (d != 1) out_dims.push_back(d);
        }
        return moved(out_dims);
      }
      if (!axes) return std::nullopt;
      if (op == "Squeeze") {
        auto norm = NormalizeAxes(*axes, rank);
        if (!norm) return std::nullopt;
        std::vector<int64_t> out_dims;
        for (int64_t i = 0; i < rank; ++i) {
          const bool squeezed =
              std::find(norm->begin(), norm->end(), i) != norm->end();
          if (squeezed && dims[i] != 1) return std::nullopt;
          if (!squeezed) out_dims.push_back(dims[i]);
        }
        return moved(out_dims);
      }
      const int64_t out_rank = rank + static_cast<int64_t>(axes->size());
      auto norm = NormalizeAxes(*axes, out_rank);
      if (!norm) return std::nullopt;
      std::vector<int64_t> out_dims;
      size_t next = 0;
      for (int64_t i = 0; i < out_rank; ++i) {
        if (std::find(norm->begin(), norm->end(), i) != norm->end()) {
          out_dims.push_back(1);
        } else {
          out_dims.push_back(dims[next++]);
        }
      }
      return moved(out_dims);
    }
    if (op == "Concat") {
      int64_t axis = IntAttr(node, "axis", 0);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) return std::nullopt;
      std::vector<int64_t> out_dims = dims;
      out_dims[axis] = 0;
      for (const Value* in : node->inputs()) {
        const Tensor& t = *in->const_value();
        if (t.dtype() != x.dtype() || t.dims().size() != dims.size()) {
          return std::nullopt;
        }
        for (int64_t i = 0; i < rank; ++i) {
          if (i != axis && t.dims()[i] != dims[i]) return std::nullopt;
        }
        out_dims[axis] += t.dims()[axis];
      }
      int64_t outer = 1, inner = elem;
      for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
      for (int64_t i = axis + 1; i < rank; ++i) inner *= dims[i];
      std::string bytes;
      bytes.reserve(static_cast<size_t>(Product(out_dims) * elem));
      for (int64_t o = 0; o < outer; ++o) {
        for (const Value* in : node->inputs()) {
          const Tensor& t = *in->const_value();
          const int64_t chunk = t.dims()[axis] * inner;
          bytes.append(t.bytes().data() + o * chunk, chunk);
        }
      }
      return Tensor(x.dtype(), std::move(out_dims), std::move(bytes));
    }
    if (op == "Cast") {
      const Attr* to_attr = node->attr("to");
      if (to_attr == nullptr || to_attr->is_ref()) return std::nullopt;
      const int to = static_cast<int>(to_attr->i());
      const int out_elem = DataTypeSize(to);
      if (out_elem == 0) return std::nullopt;
      const int64_t n = x.num_elements();
      std::string bytes(static_cast<size_t>(n * out_elem), '\0');
      for (int64_t k = 0; k < n; ++k) {
        if (!CastElem(x.bytes().data() + k * elem, x.dtype(),
                      &bytes[k * out_elem], to)) {
          return std::nullopt;
        }
      }
      return Tensor(to, dims, std::move(bytes));
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateConstantFoldingPass() {
  return std::make_unique<ConstantFolding>();
}

}  // namespace jax2onnx::ir
