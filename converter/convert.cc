// ConvertToProto: the legacy pipeline's conversion loop and finalize. Graph
// inputs and constvars are bound, the equations lowered through State, the
// outputs named, and the GraphProto finalized from shape_env (I/O types,
// value_info, pruning of dead nodes and unused initializers).
#include "converter/convert.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter/state.h"
#include "jaxpr/argument_shape_checks.h"
#include "jaxpr/status_macros.h"
#include "plugin/conversion_checks.h"
#include "plugin/io_names.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::converter {
namespace {

absl::StatusOr<ValueInfo> InfoOfAval(const jaxpr::Aval& aval,
                                     absl::string_view what) {
  absl::StatusOr<ValueInfo> info = ValueInfo::OfAval(aval);
  if (!info.ok()) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": ", info.status().message()));
  }
  return info;
}

jaxpr::Aval LiteralAval(const jaxpr::Literal& lit) {
  if (lit.aval.has_value()) return *lit.aval;
  return jaxpr::Aval::Static(jaxpr::LiteralDType(lit, nullptr), {});
}

// Calls fn on every body (If branches, Loop/Scan bodies) held by the node's
// attributes; not recursive.
void ForEachBody(const onnx::NodeProto& node,
                 const std::function<void(const onnx::GraphProto&)>& fn) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.has_g()) fn(attr.g());
    for (const onnx::GraphProto& g : attr.graphs()) fn(g);
  }
}

void ForEachMutableBody(onnx::NodeProto& node,
                        const std::function<void(onnx::GraphProto&)>& fn) {
  for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
    if (attr.has_g()) fn(*attr.mutable_g());
    for (onnx::GraphProto& g : *attr.mutable_graphs()) fn(g);
  }
}

// Every value name the node reads: its inputs and, for nodes with bodies,
// every name the bodies read (outer-scope captures included).
void CollectUses(const onnx::NodeProto& node,
                 absl::flat_hash_set<std::string>* uses) {
  for (const std::string& in : node.input()) {
    if (!in.empty()) uses->insert(in);
  }
  ForEachBody(node, [&](const onnx::GraphProto& body) {
    for (const onnx::NodeProto& n : body.node()) CollectUses(n, uses);
    for (const onnx::ValueInfoProto& out : body.output()) {
      uses->insert(out.name());
    }
  });
}

// Renames every read of a key of `renamed` in `graph` and its bodies to its
// value (names are unique model-wide, so no body shadows one). One pass over
// the graph however many outputs were renamed.
void RenameUses(onnx::GraphProto& graph,
                const absl::flat_hash_map<std::string, std::string>& renamed) {
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (std::string& in : *node.mutable_input()) {
      if (auto it = renamed.find(in); it != renamed.end()) in = it->second;
    }
    ForEachMutableBody(
        node, [&](onnx::GraphProto& body) { RenameUses(body, renamed); });
  }
  for (onnx::ValueInfoProto& out : *graph.mutable_output()) {
    if (auto it = renamed.find(out.name()); it != renamed.end()) {
      out.set_name(it->second);
    }
  }
}

// Error unless every node output in `graph` and its bodies has a shape_env
// entry: finalize writes value_info from it, and a missing entry means a
// lowering bypassed State::AddNode.
absl::Status CheckRegistered(const onnx::GraphProto& graph, const State& s) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& out : node.output()) {
      if (!out.empty() && s.Info(out) == nullptr) {
        return absl::InternalError(absl::StrCat(
            "node '", node.name(), "' (", node.op_type(), ") output '", out,
            "' has no shape_env entry; lowerings must add nodes through "
            "State::AddNode so every output's type is registered"));
      }
    }
    absl::Status status = absl::OkStatus();
    ForEachBody(node, [&](const onnx::GraphProto& body) {
      if (status.ok()) status = CheckRegistered(body, s);
    });
    J2O_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

// value_info for every node output of `graph` and its bodies that is not a
// graph output, in node order.
void WriteValueInfo(onnx::GraphProto& graph, const State& s) {
  absl::flat_hash_set<std::string> outputs;
  for (const onnx::ValueInfoProto& out : graph.output()) {
    outputs.insert(out.name());
  }
  graph.clear_value_info();
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (const std::string& out : node.output()) {
      if (out.empty() || outputs.contains(out)) continue;
      s.Info(out)->WriteTo(out, graph.add_value_info());
    }
    ForEachMutableBody(
        node, [&](onnx::GraphProto& body) { WriteValueInfo(body, s); });
  }
}

// Drops nodes none of whose outputs reach a graph output, and initializers
// nothing reads. Node order (topological by construction) is kept.
void Prune(onnx::GraphProto& graph) {
  absl::flat_hash_set<std::string> needed;
  for (const onnx::ValueInfoProto& out : graph.output()) {
    needed.insert(out.name());
  }
  std::vector<bool> keep(graph.node_size(), false);
  for (int i = graph.node_size() - 1; i >= 0; --i) {
    const onnx::NodeProto& node = graph.node(i);
    for (const std::string& out : node.output()) {
      if (needed.contains(out)) keep[i] = true;
    }
    if (keep[i]) CollectUses(node, &needed);
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (keep[i]) nodes.Add(std::move(*graph.mutable_node(i)));
  }
  graph.mutable_node()->Swap(&nodes);
  google::protobuf::RepeatedPtrField<onnx::TensorProto> inits;
  for (onnx::TensorProto& t : *graph.mutable_initializer()) {
    if (needed.contains(t.name())) inits.Add(std::move(t));
  }
  graph.mutable_initializer()->Swap(&inits);
}

// Error naming the first node that reads a value before it is produced.
absl::Status CheckTopologicalOrder(const onnx::GraphProto& graph) {
  absl::flat_hash_set<std::string> defined;
  for (const onnx::ValueInfoProto& in : graph.input())
    defined.insert(in.name());
  for (const onnx::TensorProto& t : graph.initializer())
    defined.insert(t.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& in : node.input()) {
      if (!in.empty() && !defined.contains(in)) {
        return absl::InternalError(absl::StrCat(
            "node '", node.name(), "' (", node.op_type(), ") reads '", in,
            "', which no earlier node, input or initializer defines"));
      }
    }
    for (const std::string& out : node.output()) defined.insert(out);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ConvertToProto(
    const jaxpr::Bundle& bundle, const LegacyConvertOptions& options) {
  const jaxpr::ClosedJaxpr& main = bundle.jaxpr();
  J2O_RETURN_IF_ERROR(plugin::CheckConversionRequest(
      main, options.opset, bundle.consts.size(), options.input_names.size(),
      options.output_names.size()));

  onnx::ModelProto model;
  model.set_ir_version(plugin::IrVersionForOpset(options.opset));
  model.set_producer_name("jax2onnx");
  model.set_producer_version("0.1.0");
  onnx::OperatorSetIdProto* opset_import = model.add_opset_import();
  opset_import->set_domain("");
  opset_import->set_version(options.opset);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(options.model_name);

  // The I/O names (plugin::ChooseIoNames, as in the IR pipeline), reserved
  // so no intermediate value takes them.
  State s(&graph, options.opset, &bundle.literals);
  s.set_threefry_partitionable(options.threefry_partitionable);
  s.set_mesh_axis_sizes(options.mesh_axis_sizes);
  J2O_ASSIGN_OR_RETURN(
      plugin::IoNames io,
      plugin::ChooseIoNames(main, options.input_names, options.output_names));
  const std::vector<std::string>& input_names = io.inputs;
  const std::vector<std::string>& output_names = io.outputs;
  for (const std::vector<std::string>* names : {&input_names, &output_names}) {
    for (const std::string& name : *names) s.ReserveName(name);
  }

  for (size_t i = 0; i < main.invars.size(); ++i) {
    const jaxpr::Var* var = main.invars[i];
    J2O_ASSIGN_OR_RETURN(
        ValueInfo info,
        InfoOfAval(var->aval, absl::StrCat("input ", i, " (", var->name, ")")));
    info.WriteTo(input_names[i], graph.add_input());
    s.SetInfo(input_names[i], std::move(info));
    s.Bind(var, input_names[i]);
    for (int axis = 0; axis < var->aval.rank(); ++axis) {
      const jaxpr::DimExpr& d = var->aval.shape[axis];
      if (d.kind() == jaxpr::DimExpr::Kind::kSymbol) {
        s.AddDimOrigin(d.symbol(), input_names[i], axis);
      }
    }
  }
  for (size_t i = 0; i < main.constvars.size(); ++i) {
    absl::StatusOr<onnx::TensorProto> tensor = TensorOf(bundle.consts[i]);
    if (!tensor.ok()) {
      return absl::UnimplementedError(
          absl::StrCat("constvar ", i, " (", main.constvars[i]->name,
                       "): ", tensor.status().message()));
    }
    s.Bind(main.constvars[i],
           s.AddInitializer(absl::StrCat("const_", i), *std::move(tensor)));
  }

  // jax.export's checks of the argument shapes, which a printed jaxpr does
  // not show (none when it has no symbolic input dims).
  if (std::unique_ptr<jaxpr::ClosedJaxpr> checks =
          jaxpr::ArgumentShapeChecks(main)) {
    J2O_RETURN_IF_ERROR(s.LowerEquations(*checks));
  }
  J2O_RETURN_IF_ERROR(s.LowerEquations(main));

  // The value of each output, made to depend on the shape assertions' checks
  // where there are any (State::output_guard).
  std::vector<std::string> output_values;
  for (const jaxpr::Atom& atom : main.outvars) {
    J2O_ASSIGN_OR_RETURN(std::string value, s.ValueOf(atom, nullptr));
    if (s.output_guard_check().has_value()) {
      const jaxpr::Aval aval =
          atom.is_literal() ? LiteralAval(*atom.literal) : atom.var->aval;
      J2O_ASSIGN_OR_RETURN(std::string guarded, s.output_guard()(value, aval));
      // The same type as the value it guards.
      if (const ValueInfo* info = s.Info(value)) {
        ValueInfo copy = *info;  // SetInfo may move the map's entries
        s.SetInfo(guarded, std::move(copy));
      }
      value = std::move(guarded);
    }
    output_values.push_back(std::move(value));
  }

  // Producer of every main-graph value, for renaming outputs in place.
  absl::flat_hash_map<std::string, int> producer;
  for (int n = 0; n < graph.node_size(); ++n) {
    for (const std::string& out : graph.node(n).output()) producer[out] = n;
  }
  absl::flat_hash_set<std::string> is_output;
  // Old name -> output name, for vars returned more than once.
  absl::flat_hash_map<std::string, std::string> renamed;
  for (size_t i = 0; i < main.outvars.size(); ++i) {
    const jaxpr::Atom& atom = main.outvars[i];
    std::string value = output_values[i];
    if (auto r = renamed.find(value); r != renamed.end()) value = r->second;
    const jaxpr::Aval aval =
        atom.is_literal() ? LiteralAval(*atom.literal) : atom.var->aval;
    J2O_ASSIGN_OR_RETURN(ValueInfo info,
                         InfoOfAval(aval, absl::StrCat("output ", i)));
    const ValueInfo* have = s.Info(value);
    if (have == nullptr || have->dtype != info.dtype) {
      return absl::InternalError(
          absl::StrCat("output ", i, " is value '", value, "' of type ",
                       have == nullptr ? "unknown" : have->ToString(),
                       " but the jaxpr declares ", aval.ToString()));
    }
    const std::string& name = output_names[i];
    auto it = producer.find(value);
    if (it != producer.end() && !is_output.contains(value)) {
      for (std::string& out :
           *graph.mutable_node(it->second)->mutable_output()) {
        if (out == value) out = name;
      }
      // Its readers are renamed once, after the loop (RenameUses).
      producer[name] = it->second;
      producer.erase(value);
      s.shape_env().erase(value);
      renamed[value] = name;
    } else {
      // A graph input, initializer or value already named as an output.
      const std::string copy = s.AddNode("Identity", {value}, info);
      graph.mutable_node(graph.node_size() - 1)->set_output(0, name);
      s.shape_env().erase(copy);
    }
    s.SetInfo(name, std::move(info));
    is_output.insert(name);
    graph.add_output()->set_name(name);
  }

  RenameUses(graph, renamed);

  // Finalize.
  J2O_RETURN_IF_ERROR(CheckRegistered(graph, s));
  Prune(graph);
  J2O_RETURN_IF_ERROR(CheckTopologicalOrder(graph));
  for (onnx::ValueInfoProto& out : *graph.mutable_output()) {
    s.Info(out.name())->WriteTo(out.name(), &out);
  }
  WriteValueInfo(graph, s);
  return model;
}

}  // namespace jax2onnx::converter
