// The legacy pipeline's lowering API (DESIGN.md §5 "Legacy"). A lowering in
// plugins/ receives a State and the equation; it reads operand names with
// Input(), appends NodeProtos with AddNode() (which registers every output's
// dtype and shape in shape_env), and binds every non-dropped outvar with
// SetOutput(). The graph is an onnx::GraphProto built directly; the core never
// names a JAX primitive, and ONNX ops only where it computes symbolic dims.
#ifndef JAX2ONNX_CONVERTER_STATE_H_
#define JAX2ONNX_CONVERTER_STATE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "jaxpr/array.h"
#include "jaxpr/dim_expr.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/mesh.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::converter {

// One dimension of a shape_env entry: a static size, a symbolic size (the
// DimExpr text, written to ONNX as dim_param), or unknown.
class Dim {
 public:
  Dim() = default;                      // unknown
  Dim(int64_t size) : v_(size) {}       // NOLINT: {2, 3} reads as a shape
  Dim(int size) : v_(int64_t{size}) {}  // NOLINT
  Dim(std::string param) : v_(std::move(param)) {}    // NOLINT
  Dim(const char* param) : v_(std::string(param)) {}  // NOLINT
  static Dim Of(const jaxpr::DimExpr& dim);

  bool is_static() const { return std::holds_alternative<int64_t>(v_); }
  bool is_symbolic() const { return std::holds_alternative<std::string>(v_); }
  bool is_unknown() const { return v_.index() == 0; }
  int64_t size() const { return std::get<int64_t>(v_); }
  const std::string& param() const { return std::get<std::string>(v_); }
  // "3", "B", "?".
  std::string ToString() const;

  friend bool operator==(const Dim& a, const Dim& b) { return a.v_ == b.v_; }
  friend bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }

 private:
  std::variant<std::monostate, int64_t, std::string> v_;
};

// What shape_env knows about a value: its ONNX element type and its dims
// (or, when has_shape is false, not even its rank).
struct ValueInfo {
  int dtype = onnx::TensorProto::UNDEFINED;
  bool has_shape = true;
  std::vector<Dim> dims;

  static ValueInfo Tensor(int dtype, std::vector<Dim> dims) {
    return ValueInfo{dtype, true, std::move(dims)};
  }
  static ValueInfo UnknownShape(int dtype) {
    return ValueInfo{dtype, false, {}};
  }
  // The ONNX type of a JAX aval; an error for avals ONNX cannot hold.
  static absl::StatusOr<ValueInfo> OfAval(const jaxpr::Aval& aval);
  static absl::StatusOr<ValueInfo> Of(jaxpr::DType dtype,
                                      const std::vector<jaxpr::DimExpr>& dims);

  // "FLOAT[B,3]", "INT64[?]", "FLOAT[*]" (unknown rank).
  std::string ToString() const;
  // Writes elem_type and shape into a ValueInfoProto's tensor type.
  void WriteTo(const std::string& name, onnx::ValueInfoProto* proto) const;
};

using ShapeEnv = absl::flat_hash_map<std::string, ValueInfo>;

// ---- attribute helpers ----
onnx::AttributeProto AttrInt(absl::string_view name, int64_t value);
onnx::AttributeProto AttrInts(absl::string_view name,
                              absl::Span<const int64_t> values);
onnx::AttributeProto AttrFloat(absl::string_view name, float value);
onnx::AttributeProto AttrFloats(absl::string_view name,
                                absl::Span<const float> values);
onnx::AttributeProto AttrString(absl::string_view name,
                                absl::string_view value);
onnx::AttributeProto AttrTensor(absl::string_view name,
                                onnx::TensorProto value);
onnx::AttributeProto AttrGraph(absl::string_view name, onnx::GraphProto value);

// A TensorProto holding `array` (raw_data, row-major); error for dtypes ONNX
// cannot hold.
absl::StatusOr<onnx::TensorProto> TensorOf(const jaxpr::Array& array);

class State {
 public:
  State(onnx::GraphProto* graph, int opset,
        const std::vector<jaxpr::Array>* elided_literals);
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  int opset() const { return opset_; }
  // The counter mode of random_split/random_bits (jaxpr/prng.h), as the
  // conversion options give it; default true (JAX's default since 0.5).
  bool threefry_partitionable() const { return threefry_partitionable_; }
  void set_threefry_partitionable(bool partitionable) {
    threefry_partitionable_ = partitionable;
  }
  // Sizes of mesh axes a printed shard_map mesh does not show (`--mesh`).
  const std::vector<jaxpr::MeshAxis>& mesh_axis_sizes() const {
    return mesh_axis_sizes_;
  }
  void set_mesh_axis_sizes(std::vector<jaxpr::MeshAxis> sizes) {
    mesh_axis_sizes_ = std::move(sizes);
  }
  // The graph nodes are currently appended to (the main graph, or the body
  // being built by BuildSubgraph). Writing to it directly bypasses shape_env.
  onnx::GraphProto& graph() { return *current_; }
  onnx::GraphProto& main_graph() { return *main_; }

  // Value name -> (ONNX dtype, dims) of every value in the model.
  ShapeEnv& shape_env() { return shape_env_; }
  const ShapeEnv& shape_env() const { return shape_env_; }
  // The entry for `name`, or nullptr.
  const ValueInfo* Info(absl::string_view name) const;
  // Sets (or refines) the entry for `name`.
  void SetInfo(const std::string& name, ValueInfo info);

  // ---- names ----
  // A name no value, initializer or graph I/O of the model has: `hint`, else
  // `hint_1`, `hint_2`, ... Deterministic and O(1) amortized.
  std::string FreshName(absl::string_view hint);
  // Marks `name` as taken (graph I/O names are reserved up front).
  void ReserveName(const std::string& name);

  // ---- equation operands and results ----
  // The value name of operand `i`; literals become deduplicated initializers
  // of the literal's dtype.
  absl::StatusOr<std::string> Input(const jaxpr::Eqn& eqn, int i);
  // The value name of a var, or of a literal materialized as an initializer;
  // `context` types untyped literals.
  absl::StatusOr<std::string> ValueOf(const jaxpr::Atom& atom,
                                      const jaxpr::Eqn* context);
  static const jaxpr::Aval& InAval(const jaxpr::Eqn& eqn, int i);
  static const jaxpr::Aval& OutAval(const jaxpr::Eqn& eqn, int i) {
    return eqn.outputs[i]->aval;
  }
  // The JAX dtype of operand `i` (an untyped literal takes it from context).
  static jaxpr::DType InDType(const jaxpr::Eqn& eqn, int i);
  // The shape_env entry an output of the equation must have.
  static absl::StatusOr<ValueInfo> OutInfo(const jaxpr::Eqn& eqn, int i);

  // Binds output `i` to `value`. The value's shape_env dtype must equal the
  // outvar's: a mismatch is an internal error naming the primitive (no
  // lowering may change a value's dtype silently). Static dims that
  // contradict the outvar's are an error too; unknown dims are refined
  // from the outvar.
  absl::Status SetOutput(const jaxpr::Eqn& eqn, int i,
                         const std::string& value);
  void Bind(const jaxpr::Var* var, const std::string& value);
  // Forgets a binding (temporary vars a lowering creates and destroys).
  void Unbind(const jaxpr::Var* var) { env_.erase(var); }
  bool IsBound(const jaxpr::Var* var) const { return env_.contains(var); }

  // ---- emitting nodes ----
  // Appends a node to graph() with fresh output names and registers each
  // output's type in shape_env; returns the output name(s). An input "" is an
  // omitted optional input.
  std::string AddNode(absl::string_view op_type,
                      std::vector<std::string> inputs, ValueInfo output,
                      std::vector<onnx::AttributeProto> attrs = {});
  std::vector<std::string> AddNodeMulti(
      absl::string_view op_type, std::vector<std::string> inputs,
      std::vector<ValueInfo> outputs,
      std::vector<onnx::AttributeProto> attrs = {});

  // ---- initializers and constants ----
  // Adds an initializer to the main graph under FreshName(hint), registers
  // its type, and returns its name (not deduplicated: use Const for that).
  std::string AddInitializer(absl::string_view hint, onnx::TensorProto tensor);
  // A deduplicated (by dtype, dims and bytes) initializer. While a body is
  // built, a small int64 tensor is instead a Constant node of that body
  // (deduplicated per body): ONNX shape inference of a subgraph does not see
  // the values of outer-scope initializers, so an Unsqueeze/Reshape/Slice
  // whose axes or shape live in the main graph would leave its output (and
  // everything computed from it) of unknown rank.
  std::string Const(onnx::TensorProto tensor);
  absl::StatusOr<std::string> ConstArray(const jaxpr::Array& array);
  std::string ConstI64(absl::Span<const int64_t> values);  // 1-D
  std::string ConstI64Scalar(int64_t value);               // 0-D
  // 0-D of a JAX dtype; error for dtypes ONNX cannot hold.
  absl::StatusOr<std::string> ConstScalar(jaxpr::DType dtype, double value);

  // ---- symbolic dimensions ----
  // Registers that symbol `symbol` can be read at runtime as axis `axis` of
  // value `value` (the core does it for graph inputs; the first wins).
  void AddDimOrigin(const std::string& symbol, const std::string& value,
                    int axis);
  // Name of a 1-D int64 [1] tensor holding the runtime value of `dim` (a
  // constant for static dims; Shape/arith nodes for symbolic ones, with
  // floor-division semantics for floordiv). A symbol with no origin is an
  // error naming it.
  absl::StatusOr<std::string> DimValue(const jaxpr::DimExpr& dim);
  // Name of a 1-D int64 tensor holding a whole shape (constant when static).
  absl::StatusOr<std::string> ShapeValue(
      const std::vector<jaxpr::DimExpr>& dims);

  // ---- shape assertions ----
  // A rewrite that makes a graph output depend on the program's shape
  // checks (plugin::LowerShapeAssertion): the core applies the newest to
  // every output of the main graph.
  using OutputGuard = std::function<absl::StatusOr<std::string>(
      std::string value, const jaxpr::Aval& aval)>;
  // Sets the newest check value and its guard; an error while a body is
  // built (its outputs are not the graph's).
  absl::Status SetOutputGuard(std::string check, OutputGuard guard);
  // The newest check value, if any.
  const std::optional<std::string>& output_guard_check() const {
    return output_guard_check_;
  }
  const OutputGuard& output_guard() const { return output_guard_; }

  // ---- calls and subgraphs ----
  // Lowers `jaxpr` inline: binds its invars to `args`, lowers its equations
  // into graph(), returns the names of its outvars.
  absl::StatusOr<std::vector<std::string>> Inline(
      const jaxpr::ClosedJaxpr& jaxpr, absl::Span<const std::string> args);
  // Builds a body graph (If/Loop/Scan): while `build` runs, graph() is a
  // fresh GraphProto named `name`; `build` declares the body's inputs with
  // AddGraphInput and returns the names of its outputs. The body may use
  // values of enclosing graphs by name; initializers always go to the main
  // graph, except small int64 constants (axes, shapes, slice bounds) asked
  // for while a body is built: those are Constant nodes of the body (see
  // Const). An output not produced inside the body gets an Identity.
  absl::StatusOr<onnx::GraphProto> BuildSubgraph(
      absl::string_view name,
      const std::function<absl::StatusOr<std::vector<std::string>>()>& build);
  // Declares an input of the body being built; returns its name.
  std::string AddGraphInput(absl::string_view hint, ValueInfo info);

  // Lowers the equations of `jaxpr` (after its vars are bound) with the
  // registered legacy lowerings, applying the per-equation guardrail.
  absl::Status LowerEquations(const jaxpr::ClosedJaxpr& jaxpr);

  // An error naming the equation (index when >= 0, primitive, source line).
  static absl::Status EqnError(const jaxpr::Eqn& eqn, int index,
                               absl::StatusCode code, absl::string_view message,
                               const absl::Status& cause = absl::OkStatus());

 private:
  onnx::GraphProto* main_;
  onnx::GraphProto* current_;
  int opset_;
  bool threefry_partitionable_ = true;
  std::vector<jaxpr::MeshAxis> mesh_axis_sizes_;
  const std::vector<jaxpr::Array>* elided_literals_;
  absl::flat_hash_map<const jaxpr::Var*, std::string> env_;
  ShapeEnv shape_env_;
  // FreshName: every taken name, and the last suffix tried per hint.
  absl::flat_hash_set<std::string> taken_;
  absl::flat_hash_map<std::string, int64_t> name_counters_;
  int64_t node_count_ = 0;
  // Constant dedup: (dtype, dims, bytes) -> initializer name.
  std::map<std::tuple<int, std::vector<int64_t>, std::string>, std::string>
      consts_;
  // The same for the body-local Constant nodes of the body being built.
  std::map<std::tuple<int, std::vector<int64_t>, std::string>, std::string>
      body_consts_;
  absl::flat_hash_map<std::string, std::pair<std::string, int>> dim_origins_;
  // DimExpr text -> value name; scoped to the graph being built.
  absl::flat_hash_map<std::string, std::string> dim_values_;
  std::optional<std::string> output_guard_check_;
  OutputGuard output_guard_;
};

}  // namespace jax2onnx::converter

#endif  // JAX2ONNX_CONVERTER_STATE_H_
