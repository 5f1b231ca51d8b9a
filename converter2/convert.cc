#include "converter2/convert.h"

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter2/finalize.h"
#include "converter2/functions.h"
#include "converter2/lowering_context.h"
#include "converter2/nchw.h"
#include "jaxpr/argument_shape_checks.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "plugin/conversion_checks.h"
#include "plugin/io_names.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::converter2 {
namespace {

absl::StatusOr<ir::Type> TypeOfAval(const jaxpr::Aval& declared,
                                    absl::string_view what) {
  return LoweringContext::TypeOfAval(declared, what);
}

jaxpr::Aval LiteralAval(const jaxpr::Literal& lit) {
  if (lit.aval.has_value()) return *lit.aval;
  return jaxpr::Aval::Static(jaxpr::LiteralDType(lit, nullptr), {});
}

// The adapter indices, checked: in range, each once.
absl::StatusOr<absl::flat_hash_set<int>> NchwIndices(
    const std::vector<int>& indices, size_t count, absl::string_view what) {
  const std::string flag = absl::StrCat(what, "s_as_nchw");
  absl::flat_hash_set<int> out;
  for (int i : indices) {
    if (i < 0 || static_cast<size_t>(i) >= count) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": index ", i, " is not one of the ", count,
                       " graph ", what, "s"));
    }
    if (!out.insert(i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": index ", i, " is given twice"));
    }
  }
  return out;
}

ir::Type Permuted(const ir::Type& type, const std::vector<int64_t>& perm) {
  std::vector<ir::Dim> dims;
  for (int64_t p : perm) dims.push_back((*type.shape())[p]);
  return ir::Type::Tensor(type.elem_type(), ir::Shape(std::move(dims)));
}

absl::Status CheckNchwRank(const ir::Type& type, absl::string_view what,
                           size_t i) {
  if (!type.shape().has_value() || type.shape()->rank() < 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, "s_as_nchw: graph ", what, " ", i, " has type ", type.ToString(),
        "; an NCHW adapter needs rank 3 or more"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ir::Model> ConvertToIr(const jaxpr::Bundle& bundle,
                                      const IrConvertOptions& options) {
  const jaxpr::ClosedJaxpr& main = bundle.jaxpr();
  J2O_RETURN_IF_ERROR(plugin::CheckConversionRequest(
      main, options.opset, bundle.consts.size(), options.input_names.size(),
      options.output_names.size()));

  ir::Model model(std::make_unique<ir::Graph>(options.model_name));
  model.set_ir_version(plugin::IrVersionForOpset(options.opset));
  model.SetOpsetVersion("", options.opset);
  model.set_producer_name("jax2onnx");
  model.set_producer_version("0.1.0");
  model.metadata_props() = options.metadata_props;
  ir::Graph& graph = model.graph();

  J2O_ASSIGN_OR_RETURN(
      const plugin::IoNames io,
      plugin::ChooseIoNames(main, options.input_names, options.output_names));

  J2O_ASSIGN_OR_RETURN(
      absl::flat_hash_set<int> nchw_inputs,
      NchwIndices(options.inputs_as_nchw, main.invars.size(), "input"));
  J2O_ASSIGN_OR_RETURN(
      absl::flat_hash_set<int> nchw_outputs,
      NchwIndices(options.outputs_as_nchw, main.outvars.size(), "output"));
  J2O_RETURN_IF_ERROR(ValidateFunctionPatterns(options.functions));
  LoweringContext ctx(&graph, options.opset, &bundle.literals);
  ctx.set_lowers_main_graph(true);
  ctx.set_threefry_partitionable(options.threefry_partitionable);
  ctx.set_mesh_axis_sizes(options.mesh_axis_sizes);
  std::optional<FunctionTable> functions;
  if (!options.functions.empty()) {
    functions.emplace(&model, options.functions, options.opset,
                      &bundle.literals);
    ctx.set_functions(&*functions);
  }
  for (size_t i = 0; i < main.invars.size(); ++i) {
    const jaxpr::Var* var = main.invars[i];
    J2O_ASSIGN_OR_RETURN(
        ir::Type type,
        TypeOfAval(var->aval, absl::StrCat("input ", i, " (", var->name, ")")));
    const std::string& name = io.inputs[i];
    // The value the jaxpr's var reads (channels-last behind an adapter).
    ir::Value* input = nullptr;
    if (!nchw_inputs.contains(static_cast<int>(i))) {
      input = graph.AddInput(name, std::move(type));
    } else {
      J2O_RETURN_IF_ERROR(CheckNchwRank(type, "input", i));
      const int rank = static_cast<int>(type.shape()->rank());
      ir::Value* nchw =
          graph.AddInput(name, Permuted(type, ToChannelsFirst(rank)));
      ir::Node* t =
          graph.AddNode("Transpose", {nchw}, 1,
                        Attrs(ir::Attr::Ints("perm", ToChannelsLast(rank))));
      t->set_name(absl::StrCat("nchw_adapter/", name, "/Transpose"));
      t->output(0)->SetType(type);
      input = t->output(0);
    }
    ctx.Bind(var, input);
    for (int axis = 0; axis < var->aval.rank(); ++axis) {
      const jaxpr::DimExpr& d = var->aval.shape[axis];
      if (d.kind() == jaxpr::DimExpr::Kind::kSymbol) {
        ctx.AddDimOrigin(d.symbol(), input, axis);
      }
    }
  }
  // Claim the output names in the fresh-name table so that no intermediate
  // value takes one of them.
  for (size_t i = 0; i < main.outvars.size(); ++i) {
    graph.FreshName(io.outputs[i]);
  }
  for (size_t i = 0; i < main.constvars.size(); ++i) {
    const jaxpr::Var* var = main.constvars[i];
    if (jaxpr::IsNarrow(bundle.consts[i].dtype())) {
      // Narrow constants are f32/i32 values Cast in the graph (the IR's
      // tensors hold whole bytes per element; LoweringContext::ConstArray).
      ctx.Bind(var, ctx.ConstArray(bundle.consts[i]));
      continue;
    }
    auto dtype = plugin::OnnxDType(bundle.consts[i].dtype());
    if (!dtype.ok()) return dtype.status();
    const jaxpr::Array& a = bundle.consts[i];
    // Weights are borrowed from the bundle's arrays (which may themselves
    // borrow a memory-mapped npz), not copied: the owner keeps them alive
    // and unchanged.
    jaxpr::Array::SharedView view = a.Share();
    ir::Tensor tensor =
        view.keep_alive == nullptr
            ? ir::Tensor(*dtype, plugin::OnnxDims(a.dtype(), a.shape()),
                         std::string())
            : ir::Tensor::Borrowed(
                  *dtype, plugin::OnnxDims(a.dtype(), a.shape()),
                  absl::string_view(
                      reinterpret_cast<const char*>(view.bytes.data()),
                      view.bytes.size()),
                  std::move(view.keep_alive));
    J2O_ASSIGN_OR_RETURN(
        ir::Value * init,
        graph.AddInitializer(graph.FreshName(absl::StrCat("const_", i)),
                             std::move(tensor)));
    J2O_ASSIGN_OR_RETURN(ir::Type type,
                         TypeOfAval(var->aval, absl::StrCat("constvar ", i)));
    init->SetType(std::move(type));
    ctx.Bind(var, init);
  }

  // jax.export's checks of the argument shapes, which a printed jaxpr does
  // not show (none when it has no symbolic input dims).
  if (std::unique_ptr<jaxpr::ClosedJaxpr> checks =
          jaxpr::ArgumentShapeChecks(main)) {
    J2O_RETURN_IF_ERROR(ctx.LowerEquations(*checks));
  }
  J2O_RETURN_IF_ERROR(ctx.LowerEquations(main));

  for (size_t i = 0; i < main.outvars.size(); ++i) {
    const jaxpr::Atom& atom = main.outvars[i];
    J2O_ASSIGN_OR_RETURN(ir::Value * value, ctx.ValueOf(atom, nullptr));
    const jaxpr::Aval aval =
        atom.is_literal() ? LiteralAval(*atom.literal) : atom.var->aval;
    if (ctx.output_guard_check() != nullptr) {
      J2O_ASSIGN_OR_RETURN(value, ctx.output_guard()(value, aval));
    }
    J2O_ASSIGN_OR_RETURN(ir::Type type,
                         TypeOfAval(aval, absl::StrCat("output ", i)));
    const std::string& name = io.outputs[i];
    if (nchw_outputs.contains(static_cast<int>(i))) {
      J2O_RETURN_IF_ERROR(CheckNchwRank(type, "output", i));
      const int rank = static_cast<int>(type.shape()->rank());
      ir::Node* t =
          graph.AddNode("Transpose", {value}, 1,
                        Attrs(ir::Attr::Ints("perm", ToChannelsFirst(rank))));
      t->set_name(absl::StrCat("nchw_adapter/", name, "/Transpose"));
      type = Permuted(type, ToChannelsFirst(rank));
      value = t->output(0);
    }
    const bool renamable = value->producer() != nullptr &&
                           value->graph() == &graph &&
                           !value->is_graph_output();
    if (renamable) {
      value->SetName(name);
    } else {
      ir::Node* id = graph.AddNode("Identity", {value}, 1);
      id->output(0)->SetName(name);
      value = id->output(0);
    }
    value->SetType(std::move(type));
    graph.AddOutput(value);
  }
  if (options.dump) options.dump("lowered", model);
  ir::FusionOptions fusions;
  fusions.fuse_attention = options.fuse_attention;
  fusions.log = options.fusion_log;
  J2O_RETURN_IF_ERROR(
      Finalize(model, options.optimize, options.opset, options.dump, fusions));
  // Dead-node elimination may have removed every call of a function.
  PruneUnusedFunctions(model);
  return model;
}

}  // namespace jax2onnx::converter2
