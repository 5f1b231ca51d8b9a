// Loads a jaxpr bundle (NAME.jaxpr + optional NAME.npz) and validates the
// npz arrays against the jaxpr's avals before anything runs, so a bad bundle
// is reported by entry name instead of failing deep inside a kernel.
#include "jaxpr/io/bundle.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "jaxpr/io/npy.h"
#include "jaxpr/io/static_bytes.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/prng.h"
#include "jaxpr/state/discharge.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/typecheck/typecheck.h"

namespace jax2onnx::jaxpr {
namespace {

std::string VarText(const Var& var) {
  return absl::StrCat(var.name, ":", var.aval.ToString());
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

// Splits `name` into a known prefix ("input") and a canonical decimal index.
bool SplitEntryName(absl::string_view name, std::string* kind, int* index) {
  for (absl::string_view prefix :
       {"const_", "literal_", "input_", "expected_"}) {
    if (!absl::StartsWith(name, prefix)) continue;
    absl::string_view digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit) ||
        (digits.size() > 1 && digits[0] == '0')) {
      return false;
    }
    *kind = std::string(prefix.substr(0, prefix.size() - 1));
    return absl::SimpleAtoi(digits, index);
  }
  return false;
}

// One npz array checked against the aval it feeds or should equal.
// np.save writes every one-byte ml_dtypes type but float8_e5m2 as `<V1`,
// which ReadNpy loads as f8_e4m3fn (jaxpr/io/npy.cc): such an array takes
// the narrow dtype of the aval it feeds. The bytes are unchanged.
void RetypeOneByteVoid(const Aval& aval, Array* array) {
  if (!aval.is_shaped() || !IsNarrow(aval.dtype) ||
      array->dtype() != NarrowDType(NarrowFormat::kF8E4M3FN) ||
      aval.dtype == array->dtype()) {
    return;
  }
  Array retyped(aval.dtype, array->shape());
  if (array->num_bytes() > 0) {
    std::memcpy(retyped.data(), array->data(), array->num_bytes());
  }
  *array = std::move(retyped);
}

struct Slot {
  std::string label;     // "input_1"
  std::string role;      // "invar", "constvar", "outvar", "literal"
  std::string var_text;  // "b:f32[3]"
  const Aval* aval;
  const Array* array;
};

struct BoundSymbol {
  int64_t value;
  std::string source;  // "input_0 (a:f32[B,3]) dimension 0"
};

std::string BindingsText(const DimExpr& dim,
                         const std::map<std::string, BoundSymbol>& bound) {
  std::vector<std::string> symbols;
  dim.CollectSymbols(&symbols);
  std::vector<std::string> parts;
  for (const std::string& s : symbols) {
    auto it = bound.find(s);
    if (it != bound.end()) {
      parts.push_back(absl::StrCat(s, " = ", it->second.value, " from ",
                                   it->second.source));
    }
  }
  return absl::StrJoin(parts, "; ");
}

// Checks dtype, rank and constant dims of each slot, then binds the symbolic
// dims across all slots (plain symbols first, then dims linear in a single
// unbound symbol) and checks every dim against its binding.
absl::Status CheckSlots(const std::vector<Slot>& slots,
                        absl::string_view what) {
  auto error = [&](const Slot& slot, absl::string_view message) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", slot.label, ": ", message));
  };
  for (const Slot& slot : slots) {
    const Aval& aval = *slot.aval;
    if (!aval.is_shaped()) continue;  // tokens and opaque values
    const Array& a = *slot.array;
    if (aval.dtype != DType::kOther && a.dtype() != aval.dtype) {
      return error(
          slot, absl::StrCat("dtype ", NumpyName(a.dtype()), " does not match ",
                             slot.role, " ", slot.var_text));
    }
    bool shape_ok = a.rank() == aval.rank();
    for (int i = 0; shape_ok && i < aval.rank(); ++i) {
      if (aval.shape[i].is_constant()) {
        shape_ok = aval.shape[i].constant_value() == a.shape()[i];
      }
    }
    if (!shape_ok) {
      return error(
          slot, absl::StrCat("shape ", ShapeText(a.shape()), " does not match ",
                             slot.role, " ", slot.var_text));
    }
  }
  std::map<std::string, BoundSymbol> bound;
  DimBindings bindings;
  auto source_of = [](const Slot& slot, int dim) {
    return absl::StrCat(slot.label, " (", slot.var_text, ") dimension ", dim);
  };
  // Plain symbols: the first slot binds, later ones must agree.
  for (const Slot& slot : slots) {
    if (!slot.aval->is_shaped()) continue;
    for (int i = 0; i < slot.aval->rank(); ++i) {
      const DimExpr& d = slot.aval->shape[i];
      if (d.kind() != DimExpr::Kind::kSymbol) continue;
      const int64_t size = slot.array->shape()[i];
      auto it = bound.find(d.symbol());
      if (it == bound.end()) {
        bound[d.symbol()] = {size, source_of(slot, i)};
        bindings[d.symbol()] = size;
      } else if (it->second.value != size) {
        return error(slot, absl::StrCat("dimension ", i, " is ", size, " but ",
                                        d.symbol(), " = ", it->second.value,
                                        " from ", it->second.source, " (",
                                        slot.role, " ", slot.var_text, ")"));
      }
    }
  }
  // Dims such as 2*B + 1 whose only unbound symbol can be solved for.
  for (bool progress = true; progress;) {
    progress = false;
    for (const Slot& slot : slots) {
      if (!slot.aval->is_shaped()) continue;
      for (int i = 0; i < slot.aval->rank(); ++i) {
        const DimExpr& d = slot.aval->shape[i];
        std::vector<std::string> symbols;
        d.CollectSymbols(&symbols);
        std::vector<std::string> unbound;
        for (const auto& s : symbols) {
          if (!bindings.contains(s)) unbound.push_back(s);
        }
        if (unbound.size() != 1) continue;
        const int64_t size = slot.array->shape()[i];
        DimBindings trial = bindings;
        trial[unbound[0]] = 0;
        auto f0 = d.Evaluate(trial);
        trial[unbound[0]] = 1;
        auto f1 = d.Evaluate(trial);
        if (!f0.ok() || !f1.ok() || *f1 == *f0) continue;
        const int64_t c = *f1 - *f0;
        if ((size - *f0) % c != 0) continue;
        trial[unbound[0]] = (size - *f0) / c;
        auto check = d.Evaluate(trial);
        if (check.ok() && *check == size) {
          bindings[unbound[0]] = trial[unbound[0]];
          bound[unbound[0]] = {trial[unbound[0]], source_of(slot, i)};
          progress = true;
        }
      }
    }
  }
  for (const Slot& slot : slots) {
    if (!slot.aval->is_shaped()) continue;
    for (int i = 0; i < slot.aval->rank(); ++i) {
      const DimExpr& d = slot.aval->shape[i];
      if (d.is_constant()) continue;
      const int64_t size = slot.array->shape()[i];
      auto v = d.Evaluate(bindings);
      if (!v.ok()) {
        return error(
            slot, absl::StrCat("cannot bind the symbols of dimension ", i, " '",
                               d.ToString(), "' of ", slot.role, " ",
                               slot.var_text, " from size ", size));
      }
      if (*v != size) {
        return error(slot, absl::StrCat("dimension ", i, " is ", size, " but '",
                                        d.ToString(), "' evaluates to ", *v,
                                        " (", BindingsText(d, bound), ") for ",
                                        slot.role, " ", slot.var_text));
      }
    }
  }
  return absl::OkStatus();
}

// The literal atom of each `[...]` literal, by elided index, for messages.
std::vector<const Literal*> ElidedLiterals(const JaxprFile& file) {
  std::vector<const Literal*> out(std::max(file.num_elided_literals, 0));
  auto visit_atom = [&](const Atom& atom) {
    if (!atom.is_literal()) return;
    const Literal& lit = *atom.literal;
    if (lit.kind == Literal::Kind::kElidedArray && lit.elided_index >= 0 &&
        lit.elided_index < static_cast<int>(out.size())) {
      out[lit.elided_index] = &lit;
    }
  };
  auto visit_jaxpr = [&](const ClosedJaxpr& jaxpr) {
    ForEachEqn(jaxpr, [&](const Eqn& eqn) {
      for (const Atom& atom : eqn.inputs) visit_atom(atom);
    });
    for (const Atom& atom : jaxpr.outvars) visit_atom(atom);
  };
  if (file.main) visit_jaxpr(*file.main);
  for (const auto& [name, shared] : file.shared) {
    if (shared) visit_jaxpr(*shared);
  }
  return out;
}

std::string LiteralText(const Literal* lit) {
  if (lit == nullptr) return "[...]";
  return lit->aval ? absl::StrCat(lit->text, ":", lit->aval->ToString())
                   : lit->text;
}

// Collects `kind`_0.. from the classified entries, rejecting gaps.
absl::StatusOr<std::vector<Array>> TakeSequence(
    std::map<std::string, std::map<int, Array>>& entries,
    const std::string& kind, absl::string_view what) {
  std::vector<Array> out;
  auto it = entries.find(kind);
  if (it == entries.end()) return out;
  int expected_index = 0;
  for (auto& [index, array] : it->second) {
    if (index != expected_index) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": ", kind, "_", index, " is present but ", kind,
                       "_", expected_index, " is missing"));
    }
    out.push_back(std::move(array));
    ++expected_index;
  }
  return out;
}

absl::StatusOr<std::optional<double>> HeaderNumber(const JaxprFile& file,
                                                   absl::string_view key) {
  auto text = file.Header(key);
  if (!text) return std::optional<double>();
  double value;
  const absl::string_view stripped = absl::StripAsciiWhitespace(*text);
  if (!absl::SimpleAtod(stripped, &value) || !(value >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.path, ": header '# ", key, ": ", *text,
                     "' is not a non-negative number"));
  }
  return std::optional<double>(value);
}

absl::Status ValidateInputsAndExpected(const Bundle& bundle,
                                       absl::string_view what) {
  const ClosedJaxpr& jaxpr = bundle.jaxpr();
  if (!bundle.inputs.empty() && bundle.inputs.size() < jaxpr.invars.size()) {
    const size_t k = bundle.inputs.size();
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": missing input_", k, " for invar ", VarText(*jaxpr.invars[k]),
        " (has ", k, " of ", jaxpr.invars.size(), " inputs)"));
  }
  if (bundle.inputs.size() > jaxpr.invars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": has ", bundle.inputs.size(),
                     " input_i arrays but the jaxpr "
                     "has ",
                     jaxpr.invars.size(), " invars"));
  }
  if (!bundle.expected.empty() &&
      bundle.expected.size() != jaxpr.outvars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": has ", bundle.expected.size(),
                     " expected_i arrays but the jaxpr has ",
                     jaxpr.outvars.size(), " outvars"));
  }
  std::vector<Slot> slots;
  // A PRNG key array is stored as its key data (jax.random.key_data:
  // u32[..., W] for key<TAG>), as the converted model takes it.
  std::deque<Aval> physical;
  auto stored_aval = [&](const Var& v) -> absl::StatusOr<const Aval*> {
    if (!IsPrngKey(v.aval)) return &v.aval;
    J2O_ASSIGN_OR_RETURN(Aval p, PhysicalAval(v.aval));
    physical.push_back(std::move(p));
    return &physical.back();
  };
  for (size_t i = 0; i < bundle.consts.size(); ++i) {
    const Var& v = *jaxpr.constvars[i];
    J2O_ASSIGN_OR_RETURN(const Aval* aval, stored_aval(v));
    slots.push_back({absl::StrCat("const_", i), "constvar", VarText(v), aval,
                     &bundle.consts[i]});
  }
  for (size_t i = 0; i < bundle.inputs.size(); ++i) {
    const Var& v = *jaxpr.invars[i];
    J2O_ASSIGN_OR_RETURN(const Aval* aval, stored_aval(v));
    slots.push_back({absl::StrCat("input_", i), "invar", VarText(v), aval,
                     &bundle.inputs[i]});
  }
  for (size_t i = 0; i < bundle.expected.size(); ++i) {
    const Atom& atom = jaxpr.outvars[i];
    if (atom.is_literal()) {
      if (!atom.literal->aval) continue;  // untyped literal: no aval to check
      slots.push_back({absl::StrCat("expected_", i), "outvar",
                       LiteralText(atom.literal.get()), &*atom.literal->aval,
                       &bundle.expected[i]});
    } else {
      slots.push_back({absl::StrCat("expected_", i), "outvar",
                       VarText(*atom.var), &atom.var->aval,
                       &bundle.expected[i]});
    }
  }
  return CheckSlots(slots, what);
}

// What LoadBundle lets ReadNpzFile inflate: only entries the bundle format
// names (const_k, literal_k, input_k, expected_k; anything else is skipped
// unread), and none whose .npy header declares more bytes than the program
// binder it feeds holds (checked before any data is allocated). Smaller
// mismatches are left to the slot checks, which name dtype and shape.
NpzReadPolicy BinderPolicy(const JaxprFile& file, const std::string& npz) {
  NpzReadPolicy policy;
  policy.wanted = [](absl::string_view name) {
    std::string kind;
    int index;
    return SplitEntryName(name, &kind, &index);
  };
  policy.check_header = [&file, npz](absl::string_view name, DType dtype,
                                     const std::vector<int64_t>& shape)
      -> absl::Status {
    std::string kind;
    int index = 0;
    if (!SplitEntryName(name, &kind, &index) || !file.main) {
      return absl::OkStatus();
    }
    const ClosedJaxpr& main = *file.main;
    const size_t k = static_cast<size_t>(index);
    const Aval* aval = nullptr;
    std::string binder;
    if (kind == "const" && k < main.constvars.size()) {
      aval = &main.constvars[k]->aval;
      binder = absl::StrCat("constvar ", VarText(*main.constvars[k]));
    } else if (kind == "input" && k < main.invars.size()) {
      aval = &main.invars[k]->aval;
      binder = absl::StrCat("invar ", VarText(*main.invars[k]));
    } else if (kind == "expected" && k < main.outvars.size()) {
      if (const Var* v = main.outvars[k].var) {
        aval = &v->aval;
        binder = absl::StrCat("outvar ", VarText(*v));
      }
    } else if (kind == "literal") {
      const std::vector<const Literal*> elided = ElidedLiterals(file);
      if (k < elided.size() && elided[k] != nullptr && elided[k]->aval) {
        aval = &*elided[k]->aval;
        binder = absl::StrCat("literal ", LiteralText(elided[k]));
      }
    }
    absl::StatusOr<int64_t> declared =
        CheckedByteSize(dtype, shape, std::numeric_limits<int64_t>::max());
    if (!declared.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(npz, ": entry '", name, "': ", declared.status().message()));
    }
    // Entries up to 1 MiB are read and left to the slot and arity checks
    // (their messages name dtype and shape); a larger one must fit its
    // binder, and one without a binder (an index beyond the program's) is
    // refused unread.
    constexpr int64_t kSmallEntry = int64_t{1} << 20;
    if (*declared <= kSmallEntry) return absl::OkStatus();
    std::optional<int64_t> limit =
        aval != nullptr ? StaticBytes(*aval)
                        : std::optional<int64_t>(kSmallEntry);
    if (!limit.has_value() || *declared <= *limit) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        npz, ": entry '", name, "' declares ", ShortName(dtype), "[",
        absl::StrJoin(shape, ","), "] (", *declared, " bytes), more than ",
        aval != nullptr ? absl::StrCat(binder, " holds (", *limit, " bytes)")
                        : absl::StrCat("an entry without a binder may hold (",
                                       *limit, " bytes)"),
        "; refused before inflating it"));
  };
  return policy;
}

// Why `path` cannot be read as a bundle file ("" when it is a regular
// file): absent, a directory, a FIFO, a device or a socket.
std::string NotARegularFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::StrCat("no file ", path);
    return absl::StrCat("cannot stat ", path, ": ", std::strerror(errno));
  }
  if (S_ISREG(st.st_mode)) return "";
  const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  return absl::StrCat(path, " is ", kind, ", not a regular file");
}

}  // namespace

bool Bundle::HasMarker(absl::string_view marker) const {
  return std::find(markers.begin(), markers.end(), marker) != markers.end();
}

absl::StatusOr<Bundle> LoadBundle(const std::string& path) {
  std::string stem = path;
  if (absl::EndsWith(stem, ".jaxpr")) {
    stem.resize(stem.size() - 6);
  } else if (absl::EndsWith(stem, ".npz")) {
    stem.resize(stem.size() - 4);
  }
  const std::string jaxpr_path = stem + ".jaxpr";
  std::error_code ec;
  if (auto problem = NotARegularFile(jaxpr_path); !problem.empty()) {
    return absl::NotFoundError(absl::StrCat("bundle ", path, ": ", problem));
  }
  auto file = ParseJaxprFile(jaxpr_path);
  if (!file.ok()) return file.status();
  // Parse, then type check, then bind the npz: an ill-typed program is
  // reported at its line whatever its npz holds (a stale npz otherwise
  // names a dtype mismatch instead of the program's error).
  J2O_RETURN_IF_ERROR(TypeCheckFile(*file));
  const std::string npz_path = stem + ".npz";
  NamedArrays arrays;
  const bool has_npz = std::filesystem::exists(npz_path, ec);
  if (has_npz) {
    if (auto problem = NotARegularFile(npz_path); !problem.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bundle ", path, ": ", problem));
    }
    auto read = ReadNpzFile(npz_path, BinderPolicy(*file, npz_path));
    if (!read.ok()) return read.status();
    arrays = *std::move(read);
  }
  auto bundle =
      AssembleBundle(std::filesystem::path(stem).filename().string(),
                     jaxpr_path, *std::move(file), arrays,
                     has_npz ? npz_path : absl::StrCat(stem, ".npz (absent)"));
  if (bundle.ok() && has_npz) bundle->npz_path = npz_path;
  return bundle;
}

absl::StatusOr<Bundle> BundleFromParts(const std::string& name,
                                       absl::string_view jaxpr_text,
                                       const std::string& jaxpr_path,
                                       const NamedArrays& arrays) {
  auto file = ParseJaxprText(jaxpr_text, jaxpr_path);
  if (!file.ok()) return file.status();
  return AssembleBundle(name, jaxpr_path, *std::move(file), arrays,
                        absl::StrCat(name, " arrays"));
}

absl::StatusOr<Bundle> AssembleBundle(const std::string& name,
                                      const std::string& jaxpr_path,
                                      JaxprFile file, const NamedArrays& arrays,
                                      const std::string& what) {
  Bundle bundle;
  bundle.name = name;
  bundle.jaxpr_path = jaxpr_path;
  bundle.file = std::move(file);
  if (bundle.file.path.empty()) bundle.file.path = bundle.jaxpr_path;
  if (!bundle.file.main) {
    return absl::InvalidArgumentError(
        absl::StrCat(bundle.jaxpr_path, ": no main jaxpr"));
  }
  // Refs become SSA values before anything evaluates or lowers the program
  // (jaxpr/state/discharge.h); programs without refs are untouched.
  if (absl::Status s = DischargeState(&bundle.file); !s.ok()) return s;

  auto rtol = HeaderNumber(bundle.file, "rtol");
  if (!rtol.ok()) return rtol.status();
  bundle.rtol = *rtol;
  auto atol = HeaderNumber(bundle.file, "atol");
  if (!atol.ok()) return atol.status();
  bundle.atol = *atol;
  for (const auto& [key, value] : bundle.file.header) {
    if (key != "markers") continue;
    for (absl::string_view m :
         absl::StrSplit(value, absl::ByAnyChar(", \t"), absl::SkipEmpty())) {
      if (!bundle.HasMarker(m)) bundle.markers.emplace_back(m);
    }
  }

  std::map<std::string, std::map<int, Array>> entries;
  for (const auto& [entry_name, array] : arrays) {
    std::string kind;
    int index;
    // Unknown names are tolerated so bundles can carry extra data.
    if (SplitEntryName(entry_name, &kind, &index)) {
      entries[kind][index] = array;
    }
  }
  auto consts = TakeSequence(entries, "const", what);
  if (!consts.ok()) return consts.status();
  auto literals = TakeSequence(entries, "literal", what);
  if (!literals.ok()) return literals.status();
  auto inputs = TakeSequence(entries, "input", what);
  if (!inputs.ok()) return inputs.status();
  auto expected = TakeSequence(entries, "expected", what);
  if (!expected.ok()) return expected.status();

  const ClosedJaxpr& jaxpr = *bundle.file.main;
  if (consts->size() < jaxpr.constvars.size()) {
    const size_t k = consts->size();
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": missing const_", k, " for constvar ",
                     VarText(*jaxpr.constvars[k])));
  }
  if (consts->size() > jaxpr.constvars.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": has ", consts->size(), " const_i arrays but the jaxpr has ",
        jaxpr.constvars.size(), " constvars"));
  }
  const std::vector<const Literal*> elided = ElidedLiterals(bundle.file);
  if (literals->size() < elided.size()) {
    const size_t k = literals->size();
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": missing literal_", k, " for elided literal ",
        LiteralText(elided[k]), " (literal #", k, " in order of appearance)"));
  }
  if (literals->size() > elided.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": has ", literals->size(),
                     " literal_i arrays but the jaxpr has ", elided.size(),
                     " elided [...] literals"));
  }
  bundle.consts = *std::move(consts);
  bundle.literals = *std::move(literals);
  bundle.inputs = *std::move(inputs);
  bundle.expected = *std::move(expected);
  for (size_t i = 0; i < bundle.consts.size(); ++i) {
    RetypeOneByteVoid(jaxpr.constvars[i]->aval, &bundle.consts[i]);
  }
  for (size_t i = 0; i < bundle.inputs.size() && i < jaxpr.invars.size(); ++i) {
    RetypeOneByteVoid(jaxpr.invars[i]->aval, &bundle.inputs[i]);
  }
  for (size_t i = 0; i < bundle.expected.size() && i < jaxpr.outvars.size();
       ++i) {
    const Atom& atom = jaxpr.outvars[i];
    if (atom.is_literal() && atom.literal->aval) {
      RetypeOneByteVoid(*atom.literal->aval, &bundle.expected[i]);
    } else if (!atom.is_literal()) {
      RetypeOneByteVoid(atom.var->aval, &bundle.expected[i]);
    }
  }
  for (size_t k = 0; k < elided.size() && k < bundle.literals.size(); ++k) {
    if (elided[k] != nullptr && elided[k]->aval) {
      RetypeOneByteVoid(*elided[k]->aval, &bundle.literals[k]);
    }
  }

  // Elided literals carry static avals; check them on their own.
  std::vector<Slot> literal_slots;
  for (size_t k = 0; k < elided.size(); ++k) {
    if (elided[k] == nullptr || !elided[k]->aval) continue;
    literal_slots.push_back({absl::StrCat("literal_", k), "literal",
                             LiteralText(elided[k]), &*elided[k]->aval,
                             &bundle.literals[k]});
  }
  if (auto s = CheckSlots(literal_slots, what); !s.ok()) return s;
  if (auto s = ValidateInputsAndExpected(bundle, what); !s.ok()) return s;
  return bundle;
}

absl::Status SetBundleInputs(Bundle* bundle, const NamedArrays& arrays,
                             const std::string& what) {
  std::map<std::string, std::map<int, Array>> entries;
  for (const auto& [name, array] : arrays) {
    std::string kind;
    int index;
    if (SplitEntryName(name, &kind, &index) &&
        (kind == "input" || kind == "expected")) {
      entries[kind][index] = array;
    }
  }
  auto inputs = TakeSequence(entries, "input", what);
  if (!inputs.ok()) return inputs.status();
  auto expected = TakeSequence(entries, "expected", what);
  if (!expected.ok()) return expected.status();
  if (inputs->empty() && !bundle->jaxpr().invars.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": has no input_i arrays"));
  }
  std::swap(bundle->inputs, *inputs);
  std::swap(bundle->expected, *expected);
  if (auto s = ValidateInputsAndExpected(*bundle, what); !s.ok()) {
    std::swap(bundle->inputs, *inputs);
    std::swap(bundle->expected, *expected);
    return s;
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::jaxpr
