// The IR pipeline's lowering API (DESIGN.md §5). A lowering in plugins2/
// receives a LoweringContext and the equation; it reads operands with
// Input(), emits ONNX nodes with Op(), and binds every non-dropped output
// with SetOutput(). The core never names an op: everything op-specific lives
// in plugins2/.
#ifndef JAX2ONNX_CONVERTER2_LOWERING_CONTEXT_H_
#define JAX2ONNX_CONVERTER2_LOWERING_CONTEXT_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/ir.h"
#include "jaxpr/array.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/mesh.h"

namespace jax2onnx::converter2 {

class FunctionTable;

// Builds an attribute list (ir::Attr is move-only, so a braced list cannot
// be used): Op("Shape", {x}, Attrs(ir::Attr::Int("start", 1))).
template <typename... A>
std::vector<ir::Attr> Attrs(A&&... attrs) {
  std::vector<ir::Attr> out;
  out.reserve(sizeof...(attrs));
  (out.push_back(std::forward<A>(attrs)), ...);
  return out;
}

class LoweringContext {
 public:
  LoweringContext(ir::Graph* graph, int opset,
                  const std::vector<jaxpr::Array>* elided_literals);

  int opset() const { return opset_; }
  ir::Graph& graph() { return *graph_; }
  // The counter mode of random_split/random_bits (jaxpr/prng.h), as
  // IrConvertOptions gives it; default true (JAX's default since 0.5).
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

  // ---- equation operands and results ----
  // The value of operand `i`; literals become (deduplicated) constants of
  // the literal's dtype.
  absl::StatusOr<ir::Value*> Input(const jaxpr::Eqn& eqn, int i);
  static const jaxpr::Aval& InAval(const jaxpr::Eqn& eqn, int i);
  static const jaxpr::Aval& OutAval(const jaxpr::Eqn& eqn, int i) {
    return eqn.outputs[i]->aval;
  }
  // Binds output `i` to `value` and stamps the outvar's dtype and shape on
  // it. A value whose known ONNX dtype differs from the outvar's is an
  // internal error (no lowering may change a value's dtype silently).
  absl::Status SetOutput(const jaxpr::Eqn& eqn, int i, ir::Value* value);

  // Binding of JAX variables, for the core and for call inlining.
  absl::StatusOr<ir::Value*> ValueOf(const jaxpr::Atom& atom,
                                     const jaxpr::Eqn* context);
  void Bind(const jaxpr::Var* var, ir::Value* value);
  // Forgets a binding (temporary vars a lowering creates and destroys).
  void Unbind(const jaxpr::Var* var) { env_.erase(var); }
  bool IsBound(const jaxpr::Var* var) const { return env_.contains(var); }

  // ---- emitting nodes ----
  // Appends a node and returns its (single / first) output.
  ir::Value* Op(absl::string_view op_type, std::vector<ir::Value*> inputs,
                std::vector<ir::Attr> attrs = {});
  std::vector<ir::Value*> OpMulti(absl::string_view op_type,
                                  std::vector<ir::Value*> inputs,
                                  int num_outputs,
                                  std::vector<ir::Attr> attrs = {},
                                  absl::string_view domain = "");
  // Sets the dtype (JAX dtype) and static/symbolic shape of an intermediate
  // value; optional, but helps shape inference and readable dumps.
  void SetType(ir::Value* value, jaxpr::DType dtype,
               const std::vector<jaxpr::DimExpr>& shape);

  // ---- constants (initializers, deduplicated by content) ----
  ir::Value* Const(ir::Tensor tensor);
  ir::Value* ConstArray(const jaxpr::Array& array);
  ir::Value* ConstI64(std::vector<int64_t> values);          // 1-D
  ir::Value* ConstI64Scalar(int64_t value);                  // 0-D
  ir::Value* ConstScalar(jaxpr::DType dtype, double value);  // 0-D

  // ---- symbolic dimensions ----
  // Registers that symbolic dim `symbol` can be read at runtime as axis
  // `axis` of `value` (done for graph inputs by the core).
  void AddDimOrigin(const std::string& symbol, ir::Value* value, int axis);
  // 1-D int64 tensor [1] holding the runtime value of `dim` (a constant for
  // static dims; Shape/arith nodes for symbolic ones). A symbol with no
  // origin is an error naming it.
  absl::StatusOr<ir::Value*> DimValue(const jaxpr::DimExpr& dim);
  // 1-D int64 tensor holding a whole shape (a constant when static).
  absl::StatusOr<ir::Value*> ShapeValue(
      const std::vector<jaxpr::DimExpr>& dims);

  // ---- shape assertions ----
  // A rewrite that makes a graph output depend on the program's shape
  // checks (plugin::LowerShapeAssertion): the core applies the newest to
  // every output of the main graph.
  using OutputGuard = std::function<absl::StatusOr<ir::Value*>(
      ir::Value* value, const jaxpr::Aval& aval)>;
  // Whether this context lowers the model's main graph (the core says so;
  // a function body's context does not apply guards).
  void set_lowers_main_graph(bool v) { lowers_main_graph_ = v; }
  // Sets the newest check value and its guard; an error while a body or a
  // function is built (its outputs are not the graph's).
  absl::Status SetOutputGuard(ir::Value* check, OutputGuard guard);
  ir::Value* output_guard_check() const { return output_guard_check_; }
  const OutputGuard& output_guard() const { return output_guard_; }

  // ---- calls ----
  // The ONNX functions of this conversion (ConvertOptions::functions), or
  // nullptr when no call becomes a function.
  FunctionTable* functions() const { return functions_; }
  void set_functions(FunctionTable* table) { functions_ = table; }
  const std::vector<jaxpr::Array>* elided_literals() const {
    return elided_literals_;
  }
  // Appends a node of `domain` (a call of a model-local function).
  std::vector<ir::Value*> OpInDomain(absl::string_view domain,
                                     absl::string_view op_type,
                                     std::vector<ir::Value*> inputs,
                                     int num_outputs);
  // The ONNX tensor type of a JAX aval (PRNG keys as their u32 key data,
  // complex as real [..., 2] pairs); `what` names the value in errors.
  static absl::StatusOr<ir::Type> TypeOfAval(const jaxpr::Aval& aval,
                                             absl::string_view what);
  // Lowers `jaxpr` inline: binds its invars to `args`, lowers its equations
  // in this graph, returns the values of its outvars.
  absl::StatusOr<std::vector<ir::Value*>> Inline(
      const jaxpr::ClosedJaxpr& jaxpr, absl::Span<ir::Value* const> args);

  // ---- subgraphs (If/Loop/Scan bodies) ----
  // Builds a body graph: while `build` runs, Op() appends to a fresh graph
  // named `name`; `build` declares the body's inputs with AddGraphInput and
  // returns its outputs, each of which must carry a type (SetType). The body
  // may use values of enclosing graphs (ONNX outer-scope references);
  // initializers go to the main graph (small int64 ones to the body: see
  // Const) and every name is fresh in the whole model. An output not produced
  // by a node of the body gets an Identity. The caller attaches the result with
  // ir::Attr::GraphValue.
  absl::StatusOr<std::unique_ptr<ir::Graph>> BuildSubgraph(
      absl::string_view name,
      const std::function<absl::StatusOr<std::vector<ir::Value*>>()>& build);
  // Declares an input of the body being built.
  ir::Value* AddGraphInput(absl::string_view hint, ir::Type type);

  // Lowers the equations of `jaxpr` (after its vars are bound) with the
  // registered IR lowerings, applying the per-equation guardrail.
  absl::Status LowerEquations(const jaxpr::ClosedJaxpr& jaxpr);

  // An error naming the equation (primitive, index when >= 0, source line).
  static absl::Status EqnError(const jaxpr::Eqn& eqn, int index,
                               absl::StatusCode code, absl::string_view message,
                               const absl::Status& cause = absl::OkStatus());

 private:
  ir::Graph* main_;  // owns initializers and the model's name table
  // The node Op()/OpMulti() emit, named and documented.
  ir::Node* AddOpNode(absl::string_view op_type, std::vector<ir::Value*> inputs,
                      int num_outputs, std::vector<ir::Attr> attrs,
                      absl::string_view domain);

  // Names `value`, bound to result `i` of `eqn`, after that equation.
  void NameAfterEquation(ir::Value* value, const jaxpr::Eqn& eqn, int i);

  ir::Graph* graph_;  // where Op() appends: main_ or a body being built
  int opset_;
  bool threefry_partitionable_ = true;
  std::vector<jaxpr::MeshAxis> mesh_axis_sizes_;
  const std::vector<jaxpr::Array>* elided_literals_;
  FunctionTable* functions_ = nullptr;
  absl::flat_hash_map<const jaxpr::Var*, ir::Value*> env_;
  // Constant dedup: (dtype, dims, bytes) -> value.
  std::map<std::tuple<int, std::vector<int64_t>, std::string>, ir::Value*>
      consts_;
  // The same for the body being built: its small int64 constants are its own
  // initializers (Const).
  std::map<std::tuple<int, std::vector<int64_t>, std::string>, ir::Value*>
      body_consts_;
  static constexpr int64_t kMaxBodyLocalElements = 64;
  absl::flat_hash_map<std::string, std::pair<ir::Value*, int>> dim_origins_;
  // DimExpr text -> value; scoped to the graph being built.
  absl::flat_hash_map<std::string, ir::Value*> dim_values_;
  // Names and doc strings of the nodes Op() emits: the equation being
  // lowered, nested for inlined calls and bodies ("eqn5/pjit/eqn2/
  // dot_general/" + op type), and its jaxpr source line.
  std::string name_scope_;
  std::string doc_;
  // Names of the values: an equation's result is named after its var and
  // primitive ("c/add"), nested under the enclosing equation's result for
  // inlined calls and bodies ("d/pjit/c/add"); the intermediate values of a
  // lowering after the equation's first result and their op type
  // ("c/dot_general/Transpose"). `value_outer_` is the prefix of the
  // equations being lowered, `value_scope_` that of the current one.
  std::string value_outer_;
  std::string value_scope_;
  int depth_ = 0;  // nesting of LowerEquations
  // Values already named after an equation, with the nesting depth of that
  // equation: an outer equation's result takes the name from an inner one
  // (a call's result is named after the call), an alias at the same depth
  // keeps the first name.
  absl::flat_hash_map<const ir::Value*, int> named_at_depth_;
  bool lowers_main_graph_ = false;
  ir::Value* output_guard_check_ = nullptr;
  OutputGuard output_guard_;
};

}  // namespace jax2onnx::converter2

#endif  // JAX2ONNX_CONVERTER2_LOWERING_CONTEXT_H_
