#include "jaxpr/state/ref_state.h"

#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::jaxpr {

const std::vector<std::string>& StatePrimitives() {
  static const auto* names = new std::vector<std::string>{
      "addupdate", "array_ref", "empty_ref", "free_ref",  "freeze",
      "get",       "mutable_array", "new_ref", "run_state", "swap"};
  return *names;
}

bool IsStatePrimitive(absl::string_view primitive) {
  const auto& names = StatePrimitives();
  return std::find(names.begin(), names.end(), primitive) != names.end();
}

bool IsRefAval(const Aval& aval) {
  if (aval.kind != Aval::Kind::kOpaque) return false;
  const std::string& t = aval.opaque_text;
  return (absl::StartsWith(t, "Ref{") || absl::StartsWith(t, "Ref<")) &&
         absl::EndsWith(t, "}");
}

absl::StatusOr<Aval> ParseAvalText(absl::string_view text) {
  // Params print avals with str(): `float32[3]`, `~float32[]` when weak.
  absl::ConsumePrefix(&text, "~");
  // str() spells the dtype long (`float32`); binders print it short.
  std::string spelled(text);
  if (const size_t bracket = text.find('['); bracket != absl::string_view::npos) {
    if (auto d = DTypeFromNumpyName(text.substr(0, bracket))) {
      spelled = absl::StrCat(ShortName(*d), text.substr(bracket));
    }
  }
  // The aval grammar lives in the parser; a one-binder jaxpr reaches it.
  auto file = ParseJaxprText(
      absl::StrCat("{ lambda ; a:", spelled, ". let  in () }"), "<aval>");
  if (!file.ok() || file->main == nullptr || file->main->invars.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a type"));
  }
  return file->main->invars[0]->aval;
}

absl::StatusOr<Aval> RefInnerAval(const Aval& ref) {
  if (!IsRefAval(ref)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a Ref{...}, got ", ref.ToString()));
  }
  const std::string& t = ref.opaque_text;
  const size_t open = t.find('{');
  auto inner = ParseAvalText(
      absl::string_view(t).substr(open + 1, t.size() - open - 2));
  if (!inner.ok() || !inner->is_shaped()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ref type ", t, " does not hold an array"));
  }
  return inner;
}

Aval MakeRefAval(const Aval& inner) {
  Aval ref;
  ref.kind = Aval::Kind::kOpaque;
  ref.dtype = DType::kInvalid;
  ref.opaque_text = absl::StrCat("Ref{", inner.ToString(), "}");
  return ref;
}

namespace {

bool ParseInt(absl::string_view t, int64_t* v) {
  return !t.empty() && absl::SimpleAtoi(t, v);
}

}  // namespace

absl::StatusOr<std::vector<RefDimIndex>> DecodeRefIndex(
    const Eqn& eqn, int first_index_operand, const Aval& value) {
  const ParamValue* idx = eqn.params.Find("idx");
  if (idx == nullptr) {
    return absl::InvalidArgumentError(
        "has no index (JAX prints get/swap/addupdate as `x[...]` forms)");
  }
  const std::string& text = idx->text();
  const int rank = value.rank();
  std::vector<RefDimIndex> out;
  auto static_dim = [&](int d) -> absl::StatusOr<int64_t> {
    if (!value.shape[d].is_constant()) {
      return absl::UnimplementedError(absl::StrCat(
          "slice of symbolic dim ", d, " of ", value.ToString(),
          " in ref index [", text, "]"));
    }
    return value.shape[d].constant_value();
  };
  int operand = first_index_operand;
  auto next_operand = [&](absl::string_view entry) -> absl::StatusOr<int> {
    if (operand >= static_cast<int>(eqn.inputs.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ref index [", text, "]: no operand for entry '", entry, "'"));
    }
    return operand++;
  };
  if (text == "...") {
    for (int d = 0; d < rank; ++d) {
      RefDimIndex e;
      e.full = true;
      if (value.shape[d].is_constant()) e.size = value.shape[d].constant_value();
      out.push_back(e);
    }
  } else {
    const std::vector<absl::string_view> entries = absl::StrSplit(text, ',');
    if (static_cast<int>(entries.size()) != rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("ref index [", text, "] has ", entries.size(),
                       " entries for a ref of ", value.ToString(),
                       " (JAX prints one per dim)"));
    }
    for (int d = 0; d < rank; ++d) {
      const absl::string_view entry = entries[d];
      RefDimIndex e;
      const size_t colon = entry.find(':');
      if (colon == absl::string_view::npos) {
        e.is_point = true;
        auto k = next_operand(entry);
        if (!k.ok()) return k.status();
        e.operand = *k;
        out.push_back(e);
        continue;
      }
      const absl::string_view start = entry.substr(0, colon);
      const absl::string_view rest = entry.substr(colon + 1);
      if (start.empty()) {
        e.start = 0;
      } else if (!ParseInt(start, &e.start)) {
        auto k = next_operand(entry);
        if (!k.ok()) return k.status();
        e.start_operand = *k;
      }
      const size_t plus = rest.find('+');
      if (start.empty() && rest.empty()) {
        e.full = true;
        if (value.shape[d].is_constant()) {
          e.size = value.shape[d].constant_value();
        }
      } else if (plus != absl::string_view::npos) {
        if (!ParseInt(rest.substr(plus + 1), &e.size)) {
          auto k = next_operand(entry);
          if (!k.ok()) return k.status();
          e.size_operand = *k;
        }
      } else {
        int64_t end = 0;
        if (rest.empty()) {
          auto n = static_dim(d);
          if (!n.ok()) return n.status();
          end = *n;
        } else if (!ParseInt(rest, &end)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "ref index [", text, "]: bad slice '", entry, "'"));
        }
        e.size = end - e.start;
      }
      out.push_back(e);
    }
  }
  if (operand != static_cast<int>(eqn.inputs.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ref index [", text, "] names ", operand - first_index_operand,
        " operands, the equation has ",
        static_cast<int>(eqn.inputs.size()) - first_index_operand));
  }
  return out;
}

absl::StatusOr<Aval> IndexedAval(const Eqn& eqn,
                                 const std::vector<RefDimIndex>& index,
                                 const Aval& value) {
  std::vector<DimExpr> shape;
  for (size_t d = 0; d < index.size(); ++d) {
    const RefDimIndex& e = index[d];
    const absl::string_view entry_text = eqn.params.Find("idx")->text();
    if (e.is_point) {
      const Atom& a = eqn.inputs[e.operand];
      if (!a.is_literal() && a.var->aval.rank() != 0) {
        return absl::UnimplementedError(absl::StrCat(
            "ref index [", entry_text, "]: integer array indexer ",
            a.var->name, ":", a.var->aval.ToString(),
            " (the gather form of ref indexing) is not supported; only "
            "scalar integer indexers and slices"));
      }
      continue;
    }
    if (e.full) {
      shape.push_back(value.shape[d]);
      continue;
    }
    if (e.size_operand >= 0) {
      return absl::UnimplementedError(absl::StrCat(
          "ref index [", entry_text,
          "]: a slice of dynamic size has no static result shape"));
    }
    const bool static_start = e.start_operand < 0;
    if (e.size < 0 || (value.shape[d].is_constant() &&
                       (e.size > value.shape[d].constant_value() ||
                        (static_start &&
                         e.start + e.size > value.shape[d].constant_value())))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ref index [", entry_text, "]: slice of dim ", d, " is out of "
          "bounds for ", value.ToString()));
    }
    shape.push_back(DimExpr::Constant(e.size));
  }
  Aval out = value;
  out.shape = std::move(shape);
  out.dim_sharding.clear();
  return out;
}

}  // namespace jax2onnx::jaxpr
