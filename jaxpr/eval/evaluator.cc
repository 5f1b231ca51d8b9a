#include "jaxpr/eval/evaluator.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/eval/narrow.h"
#include "jaxpr/literal_value.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/dim_parser.h"
#include "jaxpr/typecheck/typecheck.h"

namespace jax2onnx::jaxpr {

// eval/program_ops.cc (stack, unstack, tile, empty, debug_print, ...);
// declared here rather than in kernels.h, which every kernel file includes.
void RegisterProgramKernels();
namespace {

std::map<std::string, EvalKernel>& KernelTable() {
  static auto* table = new std::map<std::string, EvalKernel>();
  return *table;
}

void EnsureKernelsRegistered() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterElementwiseKernels();
    RegisterShapeKernels();
    RegisterReductionKernels();
    RegisterLinalgKernels();
    RegisterIndexingKernels();
    RegisterSortKernels();
    RegisterControlFlowKernels();
    RegisterCollectiveKernels();
    RegisterSpecialKernels();
    RegisterFftKernels();
    RegisterRandomKernels();
    RegisterProgramKernels();
  });
}

std::string EqnContext(const Eqn& eqn, int index) {
  std::string where =
      absl::StrCat("equation #", index, " '", eqn.primitive, "'");
  if (eqn.loc.line > 0) {
    absl::StrAppend(&where, " at line ", eqn.loc.line, ":", eqn.loc.column);
  }
  return where;
}

absl::Status CheckValueAgainstAval(const Array& value,
                                   const Aval& declared_aval,
                                   const DimBindings& bindings,
                                   absl::string_view what) {
  // A key is held as its key data, u32[..., W].
  const bool is_key = IsSupportedKey(declared_aval);
  Aval physical;
  if (is_key) physical = *PhysicalAval(declared_aval);
  const Aval& aval = is_key ? physical : declared_aval;
  if (!aval.is_shaped() || aval.dtype == DType::kOther) return absl::OkStatus();
  if (value.dtype() != aval.dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": dtype ", ShortName(value.dtype()),
                     " does not match declared ", aval.ToString()));
  }
  auto shape = aval.ConcreteShape(bindings);
  if (!shape.ok()) return shape.status();
  if (*shape != value.shape()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": shape ", value.TypeString(),
                     " does not match declared ", aval.ToString()));
  }
  return absl::OkStatus();
}

// Binds the symbols in `aval` from a concrete shape. A dim that is a single
// symbol binds it; a dim with one unbound symbol that is linear in it
// (c*s + k) is solved; with `verify`, every dim is then checked (callers
// bind from every input first: a dim like floordiv(H, 2) of one input is
// checked once another input has bound H).
absl::Status BindSymbols(const Aval& declared_aval,
                         const std::vector<int64_t>& shape,
                         absl::string_view what, DimBindings* bindings,
                         bool verify) {
  // A key is held as its key data, u32[..., W].
  absl::StatusOr<Aval> physical = PhysicalAval(declared_aval);
  if (!physical.ok()) return physical.status();
  const Aval& aval = *physical;
  if (!aval.is_shaped()) return absl::OkStatus();
  if (static_cast<int>(shape.size()) != aval.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": rank ", shape.size(), " does not match declared ",
                     aval.ToString()));
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < aval.rank(); ++i) {
      const DimExpr& d = aval.shape[i];
      if (d.is_constant()) continue;
      std::vector<std::string> symbols;
      d.CollectSymbols(&symbols);
      std::vector<std::string> unbound;
      for (const auto& s : symbols) {
        if (!bindings->contains(s)) unbound.push_back(s);
      }
      if (unbound.size() != 1) continue;
      if (d.kind() == DimExpr::Kind::kSymbol) {
        (*bindings)[d.symbol()] = shape[i];
        continue;
      }
      if (pass == 0) continue;  // prefer plain symbols first
      DimBindings trial = *bindings;
      trial[unbound[0]] = 0;
      auto f0 = d.Evaluate(trial);
      trial[unbound[0]] = 1;
      auto f1 = d.Evaluate(trial);
      if (!f0.ok() || !f1.ok() || *f1 == *f0) continue;
      const int64_t c = *f1 - *f0;
      if ((shape[i] - *f0) % c != 0) continue;
      trial[unbound[0]] = (shape[i] - *f0) / c;
      auto check = d.Evaluate(trial);
      if (check.ok() && *check == shape[i]) {
        (*bindings)[unbound[0]] = trial[unbound[0]];
      }
    }
  }
  if (!verify) return absl::OkStatus();
  for (int i = 0; i < aval.rank(); ++i) {
    auto v = aval.shape[i].Evaluate(*bindings);
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": cannot bind the symbols of dimension '",
                       aval.shape[i].ToString(), "' from size ", shape[i]));
    }
    if (*v != shape[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": dimension ", i, " is ", shape[i], " but '",
                       aval.shape[i].ToString(), "' evaluates to ", *v));
    }
  }
  return absl::OkStatus();
}

}  // namespace

// Word `w` of key data u32[S, W], as u32[S].
Array KeyWordOf(const Array& keys, int w) {
  std::vector<int64_t> shape(keys.shape().begin(), keys.shape().end() - 1);
  const int64_t words = keys.shape().back();
  Array out(DType::kU32, shape);
  const uint32_t* src = keys.typed_data<uint32_t>();
  uint32_t* dst = out.typed_data<uint32_t>();
  for (int64_t i = 0; i < out.num_elements(); ++i) dst[i] = src[words * i + w];
  return out;
}

class Interpreter {
 public:
  explicit Interpreter(const EvalOptions& options) : options_(options) {}

  // Runs `kernel` on each word of the key operands, as if the keys were
  // u32 arrays of their logical shape, and interleaves the key results.
  absl::StatusOr<std::vector<Array>> RunOnKeyWords(
      EvalKernel kernel, const Eqn& eqn, const std::vector<Array>& inputs,
      const DimBindings& bindings) const {
    J2O_RETURN_IF_ERROR(CheckMovesWholeKeys(eqn));
    const int num_words = MovedKeyWords(eqn);
    Eqn words = eqn;
    std::vector<std::unique_ptr<Var>> temps;
    auto word_var = [&](const Var* v) {
      temps.push_back(std::make_unique<Var>(*v));
      temps.back()->aval.dtype = DType::kU32;
      temps.back()->aval.dtype_name = "u32";
      return temps.back().get();
    };
    std::vector<bool> key_in(eqn.inputs.size(), false);
    for (size_t k = 0; k < eqn.inputs.size(); ++k) {
      const Atom& a = eqn.inputs[k];
      if (a.is_literal() || !IsSupportedKey(a.var->aval)) continue;
      key_in[k] = true;
      words.inputs[k].var = word_var(a.var);
    }
    for (Var*& v : words.outputs) {
      if (IsSupportedKey(v->aval)) v = word_var(v);
    }
    std::vector<std::vector<Array>> per_word(num_words);
    for (int w = 0; w < num_words; ++w) {
      std::vector<Array> word_inputs = inputs;
      for (size_t k = 0; k < inputs.size(); ++k) {
        if (!key_in[k]) continue;
        if (inputs[k].dtype() != DType::kU32 || inputs[k].rank() == 0 ||
            inputs[k].shape().back() != num_words) {
          return absl::InvalidArgumentError(absl::StrCat(
              "operand ", k, " is a key but holds ", inputs[k].TypeString(),
              ", not u32[..., ", num_words, "] key data"));
        }
        word_inputs[k] = KeyWordOf(inputs[k], w);
      }
      J2O_ASSIGN_OR_RETURN(
          per_word[w],
          kernel(EvalContext(words, *this, bindings), word_inputs));
    }
    std::vector<Array> outs = per_word[0];
    for (size_t o = 0; o < outs.size() && o < eqn.outputs.size(); ++o) {
      if (!IsSupportedKey(eqn.outputs[o]->aval)) continue;
      std::vector<int64_t> shape = per_word[0][o].shape();
      shape.push_back(num_words);
      Array keys(DType::kU32, shape);
      uint32_t* dst = keys.typed_data<uint32_t>();
      for (int w = 0; w < num_words; ++w) {
        const Array& word = per_word[w][o];
        for (int64_t i = 0; i < word.num_elements(); ++i) {
          dst[num_words * i + w] = static_cast<uint32_t>(word.GetAsUInt64(i));
        }
      }
      outs[o] = std::move(keys);
    }
    return outs;
  }

  absl::StatusOr<std::vector<Array>> Run(const ClosedJaxpr& jaxpr,
                                         absl::Span<const Array> consts,
                                         absl::Span<const Array> args,
                                         const DimBindings& bindings) const {
    if (consts.size() != jaxpr.constvars.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected ", jaxpr.constvars.size(),
                       " constant values, got ", consts.size()));
    }
    if (args.size() != jaxpr.invars.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected ", jaxpr.invars.size(), " inputs, got ", args.size()));
    }
    absl::flat_hash_map<const Var*, Array> env;
    for (size_t i = 0; i < consts.size(); ++i) {
      if (auto s = CheckValueAgainstAval(
              consts[i], jaxpr.constvars[i]->aval, bindings,
              absl::StrCat("constant ", i, " (", jaxpr.constvars[i]->name,
                           ")"));
          !s.ok()) {
        return s;
      }
      env[jaxpr.constvars[i]] = consts[i];
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (auto s = CheckValueAgainstAval(
              args[i], jaxpr.invars[i]->aval, bindings,
              absl::StrCat("input ", i, " (", jaxpr.invars[i]->name, ")"));
          !s.ok()) {
        return s;
      }
      env[jaxpr.invars[i]] = args[i];
    }
    // Each value is released after its last reader (moved into that
    // reader's operands rather than copied), and outputs nobody reads are
    // never stored, so memory follows the live set, not the whole trace.
    constexpr size_t kNeverReleased = std::numeric_limits<size_t>::max();
    absl::flat_hash_map<const Var*, size_t> last_read;
    for (size_t e = 0; e < jaxpr.eqns.size(); ++e) {
      for (const Atom& atom : jaxpr.eqns[e].inputs) {
        if (!atom.is_literal()) last_read[atom.var] = e;
      }
    }
    for (const Atom& atom : jaxpr.outvars) {
      if (!atom.is_literal()) last_read[atom.var] = kNeverReleased;
    }
    auto read = [&](const Atom& atom, const Eqn* eqn,
                    bool take) -> absl::StatusOr<Array> {
      if (atom.is_literal())
        return LiteralValue(*atom.literal, eqn, options_.elided_literals);
      auto it = env.find(atom.var);
      if (it == env.end()) {
        return absl::InternalError(
            absl::StrCat("variable '", atom.var->name, "' read before set"));
      }
      if (!take) return it->second;
      Array value = std::move(it->second);
      env.erase(it);
      return value;
    };
    for (size_t e = 0; e < jaxpr.eqns.size(); ++e) {
      const Eqn& eqn = jaxpr.eqns[e];
      auto it = KernelTable().find(eqn.primitive);
      if (it == KernelTable().end()) {
        return absl::UnimplementedError(
            absl::StrCat(EqnContext(eqn, e),
                         ": the reference interpreter has no kernel "
                         "for primitive '",
                         eqn.primitive, "'"));
      }
      std::vector<Array> inputs;
      inputs.reserve(eqn.inputs.size());
      for (size_t k = 0; k < eqn.inputs.size(); ++k) {
        const Atom& atom = eqn.inputs[k];
        // Take the value at its last read: this equation is the last reader
        // and no later operand of it names the same variable.
        bool take = !atom.is_literal() && last_read[atom.var] == e;
        for (size_t later = k + 1; take && later < eqn.inputs.size(); ++later) {
          const Atom& other = eqn.inputs[later];
          if (!other.is_literal() && other.var == atom.var) take = false;
        }
        auto v = read(atom, &eqn, take);
        if (!v.ok()) {
          return absl::Status(
              v.status().code(),
              absl::StrCat(EqnContext(eqn, e), ": ", v.status().message()));
        }
        inputs.push_back(*std::move(v));
      }
      const EvalKernel kernel = it->second;
      auto run = [&](const Eqn& e2, const std::vector<Array>& in2) {
        return kernel(EvalContext(e2, *this, bindings), in2);
      };
      auto outs = MovesKeys(eqn) ? RunOnKeyWords(kernel, eqn, inputs, bindings)
                  : TouchesNarrowDType(eqn) ? EvalNarrowEqn(eqn, inputs, run)
                                            : run(eqn, inputs);
      if (!outs.ok()) {
        return absl::Status(
            outs.status().code(),
            absl::StrCat(EqnContext(eqn, e), ": ", outs.status().message()));
      }
      if (outs->size() != eqn.outputs.size()) {
        return absl::InternalError(
            absl::StrCat(EqnContext(eqn, e), ": kernel produced ", outs->size(),
                         " outputs, the equation binds ", eqn.outputs.size()));
      }
      for (size_t o = 0; o < outs->size(); ++o) {
        if (auto s = CheckValueAgainstAval(
                (*outs)[o], eqn.outputs[o]->aval, bindings,
                absl::StrCat(EqnContext(eqn, e), " output ", o));
            !s.ok()) {
          return absl::InternalError(s.message());
        }
        if (!eqn.outputs[o]->is_drop && last_read.contains(eqn.outputs[o])) {
          env[eqn.outputs[o]] = std::move((*outs)[o]);
        }
      }
    }
    std::vector<Array> results;
    results.reserve(jaxpr.outvars.size());
    for (const Atom& atom : jaxpr.outvars) {
      auto v = read(atom, nullptr, /*take=*/false);
      if (!v.ok()) return v.status();
      results.push_back(*std::move(v));
    }
    return results;
  }

  const EvalOptions& options() const { return options_; }

 private:
  const EvalOptions& options_;
};

PartialSumRounding EvalContext::f32_partial_sums() const {
  return interp_.options().f32_partial_sums;
}

bool EvalContext::threefry_partitionable() const {
  return interp_.options().threefry_partitionable;
}

const std::vector<MeshAxis>& EvalContext::mesh_axis_sizes() const {
  return interp_.options().mesh_axis_sizes;
}

absl::StatusOr<Array> EvalContext::NewOutput(int i) const {
  auto shape = OutputShape(i);
  if (!shape.ok()) return shape.status();
  // Symbolic dims evaluate to anything; a size the interpreter cannot hold
  // is an error, not std::bad_alloc or a negative-dim CHECK.
  constexpr int64_t kMaxOutputBytes = int64_t{1} << 34;
  if (auto bytes = CheckedByteSize(OutputDType(i), *shape, kMaxOutputBytes);
      !bytes.ok()) {
    return bytes.status();
  }
  return Array(OutputDType(i), *std::move(shape));
}

absl::StatusOr<std::vector<int64_t>> EvalContext::IntListParam(
    absl::string_view key) const {
  const ParamValue* v = eqn_.params.Find(key);
  if (v == nullptr || (v->kind() != ParamValue::Kind::kTuple &&
                       v->kind() != ParamValue::Kind::kList)) {
    return eqn_.params.GetIntList(key);
  }
  return IntTupleValue(*v, key);
}

absl::StatusOr<std::vector<int64_t>> EvalContext::IntTupleValue(
    const ParamValue& tuple, absl::string_view key) const {
  const ParamValue* v = &tuple;
  if (v->kind() != ParamValue::Kind::kTuple &&
      v->kind() != ParamValue::Kind::kList) {
    return absl::InvalidArgumentError(absl::StrCat(
        "param ", key, ": entry ", v->ToString(), " is not a tuple"));
  }
  auto dim_named = [&](const std::string& text) -> const DimExpr* {
    auto in_aval = [&](const Aval& aval) -> const DimExpr* {
      for (const DimExpr& d : aval.shape) {
        if (!d.is_constant() && d.ToString() == text) return &d;
      }
      return nullptr;
    };
    for (const Atom& a : eqn_.inputs) {
      if (a.is_literal()) continue;
      if (const DimExpr* d = in_aval(a.var->aval)) return d;
    }
    for (const Var* out : eqn_.outputs) {
      if (const DimExpr* d = in_aval(out->aval)) return d;
    }
    return nullptr;
  };
  std::vector<int64_t> values;
  for (const ParamValue& item : v->items()) {
    if (item.kind() == ParamValue::Kind::kInt) {
      values.push_back(item.int_value());
      continue;
    }
    const std::string text = item.ToString();
    if (auto it = bindings_.find(text); it != bindings_.end()) {
      values.push_back(it->second);
    } else if (const DimExpr* d = dim_named(text)) {
      absl::StatusOr<int64_t> value = d->Evaluate(bindings_);
      if (!value.ok()) return value.status();
      values.push_back(*value);
    } else if (DimExpr parsed;
               ParseDimExpr(text, 64, &parsed, nullptr, nullptr)) {
      // An expression of bound symbols (`2*b + 1`) that no aval prints.
      absl::StatusOr<int64_t> value = parsed.Evaluate(bindings_);
      if (!value.ok()) return value.status();
      values.push_back(*value);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "param ", key, "=", v->ToString(), ": entry '", text,
          "' is neither an integer nor a dimension of the equation's avals"));
    }
  }
  return values;
}

absl::StatusOr<std::vector<Array>> EvalContext::Call(
    const ClosedJaxpr& jaxpr, absl::Span<const Array> consts,
    absl::Span<const Array> args) const {
  return interp_.Run(jaxpr, consts, args, bindings_);
}

absl::StatusOr<std::vector<Array>> EvalContext::EvalEqn(
    const Eqn& eqn, absl::Span<const Array> inputs) const {
  auto it = KernelTable().find(eqn.primitive);
  if (it == KernelTable().end()) {
    return absl::UnimplementedError(
        absl::StrCat("the reference interpreter has no kernel for primitive '",
                     eqn.primitive, "'"));
  }
  EvalContext ctx(eqn, interp_, bindings_);
  auto outs = it->second(ctx, inputs);
  if (!outs.ok()) {
    return absl::Status(
        outs.status().code(),
        absl::StrCat("'", eqn.primitive, "': ", outs.status().message()));
  }
  return outs;
}

absl::StatusOr<Array> EvalContext::LiteralOperand(const Atom& atom,
                                                  const Eqn& eqn) const {
  return LiteralValue(*atom.literal, &eqn, interp_.options().elided_literals);
}

void RegisterEvalKernel(const std::string& primitive, EvalKernel kernel) {
  KernelTable()[primitive] = kernel;
}

std::vector<std::string> EvalPrimitives() {
  EnsureKernelsRegistered();
  std::vector<std::string> names;
  for (const auto& [name, kernel] : KernelTable()) names.push_back(name);
  return names;
}

absl::StatusOr<std::vector<Array>> Evaluate(const ClosedJaxpr& jaxpr,
                                            absl::Span<const Array> consts,
                                            absl::Span<const Array> inputs,
                                            const EvalOptions& options) {
  EnsureKernelsRegistered();
  TypeCheckOptions typecheck_options;
  typecheck_options.mesh_axis_sizes = options.mesh_axis_sizes;
  J2O_RETURN_IF_ERROR(
      TypeCheckJaxpr(jaxpr, options.filename, typecheck_options));
  if (inputs.size() != jaxpr.invars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the jaxpr takes ", jaxpr.invars.size(), " inputs, got ",
                     inputs.size()));
  }
  DimBindings bindings;
  for (bool verify : {false, true}) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (auto s = BindSymbols(jaxpr.invars[i]->aval, inputs[i].shape(),
                               absl::StrCat("input ", i), &bindings, verify);
          !s.ok()) {
        return s;
      }
    }
  }
  Interpreter interp(options);
  return interp.Run(jaxpr, consts, inputs, bindings);
}

}  // namespace jax2onnx::jaxpr
