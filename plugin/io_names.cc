#include "plugin/io_names.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace jax2onnx::plugin {

absl::StatusOr<IoNames> ChooseIoNames(
    const jaxpr::ClosedJaxpr& main, const std::vector<std::string>& given_in,
    const std::vector<std::string>& given_out) {
  auto given = [](const std::vector<std::string>& names,
                  size_t i) -> const std::string* {
    return i < names.size() && !names[i].empty() ? &names[i] : nullptr;
  };
  IoNames io;
  io.inputs.resize(main.invars.size());
  io.outputs.resize(main.outvars.size());
  absl::flat_hash_set<std::string> used;
  // The given names first: a binder never takes one of them.
  for (size_t i = 0; i < main.invars.size(); ++i) {
    if (const std::string* n = given(given_in, i)) {
      if (!used.insert(*n).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("the name '", *n, "' is used twice for graph I/O"));
      }
      io.inputs[i] = *n;
    }
  }
  for (size_t i = 0; i < main.outvars.size(); ++i) {
    if (const std::string* n = given(given_out, i)) {
      if (!used.insert(*n).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("the name '", *n, "' is used twice for graph I/O"));
      }
      io.outputs[i] = *n;
    }
  }
  absl::flat_hash_set<const jaxpr::Var*> invars(main.invars.begin(),
                                                main.invars.end());
  absl::flat_hash_map<const jaxpr::Var*, int> out_count;
  for (const jaxpr::Atom& a : main.outvars) {
    if (!a.is_literal()) ++out_count[a.var];
  }
  auto pick = [&](std::string* slot, const jaxpr::Var* var, bool own,
                  absl::string_view prefix, size_t i) {
    if (!slot->empty()) return;
    if (var != nullptr && own && !var->is_drop && !var->name.empty() &&
        used.insert(var->name).second) {
      *slot = var->name;
      return;
    }
    std::string fallback = absl::StrCat(prefix, i);
    while (!used.insert(fallback).second) absl::StrAppend(&fallback, "_");
    *slot = std::move(fallback);
  };
  for (size_t i = 0; i < main.invars.size(); ++i) {
    pick(&io.inputs[i], main.invars[i], true, "in_", i);
  }
  for (size_t i = 0; i < main.outvars.size(); ++i) {
    const jaxpr::Atom& a = main.outvars[i];
    const jaxpr::Var* var = a.is_literal() ? nullptr : a.var;
    const bool own =
        var != nullptr && out_count[var] == 1 && !invars.contains(var);
    pick(&io.outputs[i], var, own, "out_", i);
  }
  return io;
}

}  // namespace jax2onnx::plugin
