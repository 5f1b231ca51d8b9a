// The consts/carry split of a `scan` equation, read from its params exactly:
// `num_consts`/`num_carry` (JAX <= 0.10.x) or the flat-tree params
// `ft_in`/`ft_out` (JAX >= 0.11.0), whose groups are counted leaf by leaf.
// Shared by the type checker, the interpreter and both lowerings.
//
// JAX 0.11 (jax/_src/lax/control_flow/loops.py) binds
//   ft_in=ft.pack((nones(num_consts), nones(num_carry), nones(num_xs)))
//   ft_out=ft.pack((nones(num_carry), nones(num_ys).filter_with_mask(keep)))
// and prints them with repr (jax/_src/flattree.py, util.Either):
//   FTTuple     -> repr of its tuple: `(None, None)`, `(None,)`, `()`
//   FTSingleton -> repr of the value: `None` (one leaf)
//   FTDict      -> repr of a dict: `{'a': (None,)}`
//   FTPyTree    -> `Pytree(vals=[None, None], tree=PyTreeDef((*, *)))`
//   FTStatic    -> `Static(...)` (no leaves)
//   FTFiltered  -> `RightsOnly(...)`: only `Right(x)` entries are leaves,
//                  `Left(x)` ones are filtered out
// so ft_in=((), (None,), (None, None)) and
// ft_out=((None,), (RightsOnly(Right(None)), RightsOnly(Right(None)))).
#ifndef JAX2ONNX_JAXPR_SCAN_PARAMS_H_
#define JAX2ONNX_JAXPR_SCAN_PARAMS_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/params.h"

namespace jax2onnx::jaxpr {

namespace scan_internal {

// Number of leaves of one printed FlatTree; `filtered` inside RightsOnly.
inline absl::StatusOr<int64_t> FlatTreeLeaves(const ParamValue& v,
                                              bool filtered, int depth = 0) {
  using Kind = ParamValue::Kind;
  if (depth > 64) return absl::InvalidArgumentError("flat tree nests too deep");
  auto sum = [&](const std::vector<ParamValue>& items,
                 bool f) -> absl::StatusOr<int64_t> {
    int64_t n = 0;
    for (const ParamValue& item : items) {
      absl::StatusOr<int64_t> k = FlatTreeLeaves(item, f, depth + 1);
      if (!k.ok()) return k.status();
      n += *k;
    }
    return n;
  };
  switch (v.kind()) {
    case Kind::kNone:
      return filtered ? absl::StatusOr<int64_t>(absl::InvalidArgumentError(
                            "a bare None inside RightsOnly(...)"))
                      : absl::StatusOr<int64_t>(1);
    case Kind::kTuple:
    case Kind::kList:
      return sum(v.items(), filtered);
    case Kind::kDict: {
      std::vector<ParamValue> values;
      for (const auto& [key, value] : v.dict_items()) values.push_back(value);
      return sum(values, filtered);
    }
    case Kind::kCall: {
      const std::string& callee = v.text();
      std::vector<ParamValue> positional;
      for (const auto& [name, arg] : v.call_args()) {
        if (name.empty()) positional.push_back(arg);
      }
      if (callee == "Static") return 0;
      if (callee == "RightsOnly" && positional.size() == 1) {
        return FlatTreeLeaves(positional[0], /*filtered=*/true, depth + 1);
      }
      if ((callee == "Right" || callee == "Left") && positional.size() == 1) {
        // Inside RightsOnly, Right(x) is a kept leaf and Left(x) a removed
        // one; elsewhere an Either is a singleton value (one leaf).
        if (!filtered) return 1;
        return callee == "Right" ? 1 : 0;
      }
      if (callee == "Pytree") {
        const ParamValue* vals = v.Field("vals");
        if (vals != nullptr &&
            (vals->kind() == Kind::kList || vals->kind() == Kind::kTuple)) {
          if (!filtered) return static_cast<int64_t>(vals->items().size());
          return sum(vals->items(), true);
        }
      }
      break;
    }
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("cannot count the leaves of flat tree ", v.ToString()));
}

// The top-level groups of ft_in / ft_out (an FTTuple).
inline absl::StatusOr<std::vector<int64_t>> GroupLeaves(const Params& params,
                                                        const char* key,
                                                        size_t groups) {
  const ParamValue* v = params.Find(key);
  if (v == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("scan: missing ", key));
  }
  if (v->kind() != ParamValue::Kind::kTuple || v->items().size() != groups) {
    return absl::InvalidArgumentError(
        absl::StrCat("scan: ", key, "=", v->ToString(), " is not a tuple of ",
                     groups, " flat trees"));
  }
  std::vector<int64_t> out;
  for (const ParamValue& g : v->items()) {
    absl::StatusOr<int64_t> n = FlatTreeLeaves(g, false);
    if (!n.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("scan: ", key, ": ", n.status().message()));
    }
    out.push_back(*n);
  }
  return out;
}

}  // namespace scan_internal

// (num_consts, num_carry) from the params, checked against the equation's
// operand and result counts; nullopt when the params hold neither form.
inline absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>>
ScanCountsFromParams(const Params& params, int64_t num_operands,
                     int64_t num_results) {
  int64_t consts = 0, carry = 0;
  if (params.Has("num_consts") && params.Has("num_carry")) {
    absl::StatusOr<int64_t> c = params.GetInt("num_consts");
    if (!c.ok()) return c.status();
    absl::StatusOr<int64_t> k = params.GetInt("num_carry");
    if (!k.ok()) return k.status();
    consts = *c;
    carry = *k;
  } else if (params.Has("ft_in") || params.Has("ft_out")) {
    absl::StatusOr<std::vector<int64_t>> in =
        scan_internal::GroupLeaves(params, "ft_in", 3);
    if (!in.ok()) return in.status();
    absl::StatusOr<std::vector<int64_t>> out =
        scan_internal::GroupLeaves(params, "ft_out", 2);
    if (!out.ok()) return out.status();
    consts = (*in)[0];
    carry = (*in)[1];
    if ((*out)[0] != carry) {
      return absl::InvalidArgumentError(
          absl::StrCat("scan: ft_in has ", carry,
                       " carry leaves but ft_out has ", (*out)[0]));
    }
    if ((*in)[0] + (*in)[1] + (*in)[2] != num_operands ||
        (*out)[0] + (*out)[1] != num_results) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scan: ft_in/ft_out count ", (*in)[0], "+", (*in)[1], "+", (*in)[2],
          " operands and ", (*out)[0], "+", (*out)[1],
          " results; the "
          "equation has ",
          num_operands, " and ", num_results));
    }
  } else {
    return std::nullopt;
  }
  if (consts < 0 || carry < 0 || consts + carry > num_operands ||
      carry > num_results) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scan num_consts=", consts, " num_carry=", carry, " do not fit ",
        num_operands, " operands and ", num_results, " outputs"));
  }
  return std::make_pair(consts, carry);
}

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_SCAN_PARAMS_H_
