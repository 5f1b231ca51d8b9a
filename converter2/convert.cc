#include "converter2/convert.h"

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter2/finalize.h"
#include "converter2/lowering_context.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "plugin/conversion_checks.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::converter2 {
namespace {

absl::StatusOr<ir::Type> TypeOfAval(const jaxpr::Aval& declared,
                                    absl::string_view what) {
  // PRNG keys are their key data (u32[..., 2]) in ONNX.
  J2O_ASSIGN_OR_RETURN(const jaxpr::Aval aval, jaxpr::PhysicalAval(declared));
  if (!aval.is_shaped()) {
    return absl::UnimplementedError(absl::StrCat(
        what, " has type '", aval.ToString(), "', which ONNX cannot hold"));
  }
  auto dtype = plugin::OnnxDType(aval.dtype);
  if (!dtype.ok()) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": ", dtype.status().message()));
  }
  std::vector<ir::Dim> dims;
  for (const jaxpr::DimExpr& d : aval.shape) {
    if (d.is_constant()) {
      dims.emplace_back(d.constant_value());
    } else {
      dims.emplace_back(d.ToString());
    }
  }
  return ir::Type::Tensor(*dtype, ir::Shape(std::move(dims)));
}

jaxpr::Aval LiteralAval(const jaxpr::Literal& lit) {
  if (lit.aval.has_value()) return *lit.aval;
  return jaxpr::Aval::Static(jaxpr::LiteralDType(lit, nullptr), {});
}

std::string NameAt(const std::vector<std::string>& names, size_t i,
                   absl::string_view prefix) {
  if (i < names.size() && !names[i].empty()) return names[i];
  return absl::StrCat(prefix, i);
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
  ir::Graph& graph = model.graph();

  // Reserve the I/O names so no intermediate value takes them.
  absl::flat_hash_set<std::string> io_names;
  for (size_t i = 0; i < main.invars.size(); ++i) {
    io_names.insert(NameAt(options.input_names, i, "in_"));
  }
  for (size_t i = 0; i < main.outvars.size(); ++i) {
    const std::string name = NameAt(options.output_names, i, "out_");
    if (!io_names.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("the name '", name, "' is used twice for graph I/O"));
    }
  }

  LoweringContext ctx(&graph, options.opset, &bundle.literals);
  for (size_t i = 0; i < main.invars.size(); ++i) {
    const jaxpr::Var* var = main.invars[i];
    J2O_ASSIGN_OR_RETURN(
        ir::Type type,
        TypeOfAval(var->aval, absl::StrCat("input ", i, " (", var->name, ")")));
    ir::Value* input =
        graph.AddInput(NameAt(options.input_names, i, "in_"), std::move(type));
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
    graph.FreshName(NameAt(options.output_names, i, "out_"));
  }
  for (size_t i = 0; i < main.constvars.size(); ++i) {
    const jaxpr::Var* var = main.constvars[i];
    auto dtype = plugin::OnnxDType(bundle.consts[i].dtype());
    if (!dtype.ok()) return dtype.status();
    const jaxpr::Array& a = bundle.consts[i];
    // Weights are borrowed from the bundle's arrays, not copied (the shared
    // buffer keeps them alive and unchanged).
    std::shared_ptr<const std::vector<uint8_t>> bytes = a.SharedBytes();
    ir::Tensor tensor =
        bytes == nullptr ? ir::Tensor(*dtype, a.shape(), std::string())
                         : ir::Tensor::Borrowed(
                               *dtype, a.shape(),
                               absl::string_view(
                                   reinterpret_cast<const char*>(bytes->data()),
                                   bytes->size()),
                               bytes);
    J2O_ASSIGN_OR_RETURN(
        ir::Value * init,
        graph.AddInitializer(graph.FreshName(absl::StrCat("const_", i)),
                             std::move(tensor)));
    J2O_ASSIGN_OR_RETURN(ir::Type type,
                         TypeOfAval(var->aval, absl::StrCat("constvar ", i)));
    init->SetType(std::move(type));
    ctx.Bind(var, init);
  }

  J2O_RETURN_IF_ERROR(ctx.LowerEquations(main));

  for (size_t i = 0; i < main.outvars.size(); ++i) {
    const jaxpr::Atom& atom = main.outvars[i];
    J2O_ASSIGN_OR_RETURN(ir::Value * value, ctx.ValueOf(atom, nullptr));
    const jaxpr::Aval aval =
        atom.is_literal() ? LiteralAval(*atom.literal) : atom.var->aval;
    J2O_ASSIGN_OR_RETURN(ir::Type type,
                         TypeOfAval(aval, absl::StrCat("output ", i)));
    const std::string name = NameAt(options.output_names, i, "out_");
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
  J2O_RETURN_IF_ERROR(Finalize(model, options.dump));
  return model;
}

}  // namespace jax2onnx::converter2
