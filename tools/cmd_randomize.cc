// `randomize`: writes NAME.npz next to NAME.jaxpr with seeded random values
// for every constvar (const_i), invar (input_i) and elided `[...]` literal
// (literal_i), so that a printed jaxpr whose constants were not saved becomes
// a runnable bundle. No expected_i is written: the reference interpreter is
// the oracle for such bundles.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "api/splitmix64.h"
#include "gflags/gflags.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/io/npy.h"
#include "jaxpr/io/output_guard.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/parser.h"
#include "tools/bundle_args.h"
#include "tools/cli_output.h"
#include "tools/commands.h"

DECLARE_uint64(seed);  // cmd_convert.cc
DEFINE_string(sizes, "",
              "randomize: sizes of symbolic dims, e.g. B=4,T=8; symbols not "
              "named get 2, 3, ... in order of appearance");
DEFINE_string(int_range, "",
              "randomize: inclusive range LO,HI for integer values (default "
              "-5,5 for signed and 0,10 for unsigned ints), clipped to each "
              "dtype's own range (so -9223372036854775808,"
              "18446744073709551615 spans every integer dtype whole); "
              "index-like inputs such as labels or token ids want e.g. 0,1");

DEFINE_bool(force, false,
            "randomize: replace the const_i, literal_i and input_i of an "
            "existing NAME.npz (never its expected_i).");

namespace jax2onnx::cli {
namespace {

using api::SplitMix64;

struct IntRange {
  bool given = false;
  // int128 so that one range can span i64's minimum and u64's maximum.
  absl::int128 lo = 0;
  absl::int128 hi = 0;
};

absl::StatusOr<IntRange> ParseIntRange(const std::string& text) {
  IntRange range;
  if (text.empty()) return range;
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  const absl::int128 kMin = std::numeric_limits<int64_t>::min();
  const absl::int128 kMax = std::numeric_limits<uint64_t>::max();
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &range.lo) ||
      !absl::SimpleAtoi(parts[1], &range.hi) || range.lo > range.hi ||
      range.lo < kMin || range.hi > kMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("--int_range must be LO,HI with integers LO <= HI between "
                     "-9223372036854775808 and 18446744073709551615, got '",
                     text, "'"));
  }
  range.given = true;
  return range;
}

absl::StatusOr<jaxpr::DimBindings> ParseSizes(const std::string& text) {
  jaxpr::DimBindings sizes;
  if (text.empty()) return sizes;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<std::string> kv = absl::StrSplit(item, '=');
    int64_t size = 0;
    if (kv.size() != 2 || kv[0].empty() || !absl::SimpleAtoi(kv[1], &size) ||
        size < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--sizes entries must be NAME=SIZE with SIZE >= 0, got '", item,
          "'"));
    }
    sizes[kv[0]] = size;
  }
  return sizes;
}

// The values an integer dtype holds, as [min, max].
std::pair<absl::int128, absl::int128> DTypeIntBounds(jaxpr::DType dtype) {
  if (jaxpr::IsNarrowInt(dtype)) {
    const jaxpr::NarrowFormat format = *jaxpr::NarrowFormatOf(dtype);
    return {jaxpr::NarrowIntMin(format), jaxpr::NarrowIntMax(format)};
  }
  const int bits = 8 * static_cast<int>(jaxpr::ItemSize(dtype));
  if (jaxpr::IsSignedInt(dtype)) {
    return {-(absl::int128(1) << (bits - 1)),
            (absl::int128(1) << (bits - 1)) - 1};
  }
  return {0, (absl::int128(1) << bits) - 1};
}

// Uniform in [lo, hi] (a span of at most 2^64 values), as the int64 whose
// bits SetFromInt64 stores (u64 values past INT64_MAX wrap to negatives).
int64_t RandomInt(absl::int128 lo, absl::int128 hi, SplitMix64& rng) {
  return static_cast<int64_t>(static_cast<uint64_t>(lo) +
                              rng.UpTo(static_cast<uint64_t>(hi - lo)));
}

absl::StatusOr<jaxpr::Array> RandomArray(const jaxpr::Aval& aval,
                                         const jaxpr::DimBindings& bindings,
                                         const IntRange& int_range,
                                         const std::string& what,
                                         SplitMix64& rng) {
  if (!aval.is_shaped() || jaxpr::ItemSize(aval.dtype) == 0) {
    return absl::UnimplementedError(
        absl::StrCat("cannot generate ", what, " of type ", aval.ToString(),
                     " (only arrays of numeric and bool dtypes)"));
  }
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                       aval.ConcreteShape(bindings));
  jaxpr::Array a(aval.dtype, std::move(shape));
  const jaxpr::DType dtype = aval.dtype;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    if (dtype == jaxpr::DType::kBool) {
      a.SetFromInt64(i, rng.Int(0, 1));
    } else if (jaxpr::IsInteger(dtype)) {
      const auto [dtype_min, dtype_max] = DTypeIntBounds(dtype);
      absl::int128 lo = jaxpr::IsSignedInt(dtype) ? -5 : 0;
      absl::int128 hi = jaxpr::IsSignedInt(dtype) ? 5 : 10;
      if (int_range.given) {
        lo = std::min(std::max(dtype_min, int_range.lo), dtype_max);
        hi = std::max(lo, std::min(dtype_max, int_range.hi));
      }
      a.SetFromInt64(i, RandomInt(lo, hi, rng));
    } else {
      a.SetFromDouble(i, rng.Uniform(-1.0, 1.0));
    }
  }
  return a;
}

// The `[...]` literals of the file by elided index (main and shared jaxprs).
std::vector<const jaxpr::Literal*> ElidedLiterals(const jaxpr::JaxprFile& f) {
  std::vector<const jaxpr::Literal*> out(std::max(f.num_elided_literals, 0));
  auto visit_atom = [&](const jaxpr::Atom& atom) {
    if (!atom.is_literal()) return;
    const jaxpr::Literal& lit = *atom.literal;
    if (lit.kind == jaxpr::Literal::Kind::kElidedArray &&
        lit.elided_index >= 0 &&
        lit.elided_index < static_cast<int>(out.size())) {
      out[lit.elided_index] = &lit;
    }
  };
  auto visit_jaxpr = [&](const jaxpr::ClosedJaxpr& jaxpr) {
    jaxpr::ForEachEqn(jaxpr, [&](const jaxpr::Eqn& eqn) {
      for (const jaxpr::Atom& atom : eqn.inputs) visit_atom(atom);
    });
    for (const jaxpr::Atom& atom : jaxpr.outvars) visit_atom(atom);
  };
  if (f.main) visit_jaxpr(*f.main);
  for (const auto& [name, shared] : f.shared) {
    if (shared) visit_jaxpr(*shared);
  }
  return out;
}

// Returns a one-line summary of what was written.
absl::StatusOr<std::string> Randomize(const std::string& arg, uint64_t seed,
                                      const jaxpr::DimBindings& given_sizes,
                                      const IntRange& int_range, bool force) {
  std::string stem = arg;
  if (absl::EndsWith(stem, ".jaxpr")) stem.resize(stem.size() - 6);
  if (absl::EndsWith(stem, ".npz")) stem.resize(stem.size() - 4);
  const std::string jaxpr_path = stem + ".jaxpr";
  const std::string npz_path = stem + ".npz";
  J2O_ASSIGN_OR_RETURN(jaxpr::JaxprFile file,
                       jaxpr::ParseJaxprFile(jaxpr_path));
  if (!file.main) {
    return absl::InvalidArgumentError(
        absl::StrCat(jaxpr_path, ": no main jaxpr"));
  }
  std::error_code ec;
  if (std::filesystem::exists(npz_path, ec)) {
    // Never destroy values computed by JAX; real weights and inputs only
    // with --force.
    J2O_ASSIGN_OR_RETURN(jaxpr::NamedArrays existing,
                         jaxpr::ReadNpzFile(npz_path));
    std::vector<std::string> data;
    for (const auto& [name, array] : existing) {
      if (absl::StartsWith(name, "expected_")) {
        return absl::FailedPreconditionError(
            absl::StrCat(npz_path, " holds ", name,
                         " (outputs computed by JAX); not overwriting it"));
      }
      if (absl::StartsWith(name, "const_") ||
          absl::StartsWith(name, "input_") ||
          absl::StartsWith(name, "literal_")) {
        data.push_back(name);
      }
    }
    if (!data.empty() && !force) {
      return absl::FailedPreconditionError(absl::StrCat(
          npz_path, " already holds ", absl::StrJoin(data, ", "),
          "; not replacing them with random values (pass --force to)"));
    }
  }
  const jaxpr::ClosedJaxpr& main = *file.main;

  // Symbols in order of appearance: invars first (as `check` binds them),
  // then constvars.
  std::vector<std::string> symbols;
  for (const jaxpr::Var* v : main.invars) {
    for (const jaxpr::DimExpr& d : v->aval.shape) d.CollectSymbols(&symbols);
  }
  for (const jaxpr::Var* v : main.constvars) {
    for (const jaxpr::DimExpr& d : v->aval.shape) d.CollectSymbols(&symbols);
  }
  jaxpr::DimBindings bindings;
  std::vector<std::string> binding_text;
  int64_t next_default = 2;
  for (const std::string& s : symbols) {
    if (bindings.contains(s)) continue;
    auto it = given_sizes.find(s);
    bindings[s] = it != given_sizes.end() ? it->second : next_default;
    ++next_default;
    binding_text.push_back(absl::StrCat(s, "=", bindings[s]));
  }
  for (const auto& [name, size] : given_sizes) {
    if (!bindings.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--sizes names '", name, "', which is not a dimension of ",
          jaxpr_path, " (its symbols: ",
          symbols.empty() ? "none" : absl::StrJoin(symbols, ", "), ")"));
    }
  }

  SplitMix64 rng(seed * 0x100000001b3ull + 12345);
  jaxpr::NamedArrays arrays;
  for (size_t i = 0; i < main.constvars.size(); ++i) {
    const jaxpr::Var& v = *main.constvars[i];
    J2O_ASSIGN_OR_RETURN(
        jaxpr::Array a,
        RandomArray(v.aval, bindings, int_range,
                    absl::StrCat("const_", i, " (constvar ", v.name, ")"),
                    rng));
    arrays.emplace_back(absl::StrCat("const_", i), std::move(a));
  }
  const std::vector<const jaxpr::Literal*> literals = ElidedLiterals(file);
  for (size_t k = 0; k < literals.size(); ++k) {
    const jaxpr::Literal* lit = literals[k];
    if (lit == nullptr || !lit->aval) {
      return absl::UnimplementedError(
          absl::StrCat(jaxpr_path, ": elided literal #", k,
                       " has no printed type, so its shape is unknown"));
    }
    J2O_ASSIGN_OR_RETURN(jaxpr::Array a,
                         RandomArray(*lit->aval, bindings, int_range,
                                     absl::StrCat("literal_", k), rng));
    arrays.emplace_back(absl::StrCat("literal_", k), std::move(a));
  }
  for (size_t i = 0; i < main.invars.size(); ++i) {
    const jaxpr::Var& v = *main.invars[i];
    J2O_ASSIGN_OR_RETURN(
        jaxpr::Array a,
        RandomArray(v.aval, bindings, int_range,
                    absl::StrCat("input_", i, " (invar ", v.name, ")"), rng));
    arrays.emplace_back(absl::StrCat("input_", i), std::move(a));
  }
  // Replacing the bundle's own npz is randomize's purpose; anything that is
  // not a regular file there (a FIFO, a device, a link to the .jaxpr) is not.
  J2O_RETURN_IF_ERROR(
      jaxpr::CheckOutputReplaceable(npz_path, "the npz", {jaxpr_path}));
  J2O_RETURN_IF_ERROR(jaxpr::WriteNpzFile(npz_path, arrays));
  // The bundle loader is the authority on consistency; fail loudly if the
  // file written does not load.
  auto loaded = jaxpr::LoadBundle(jaxpr_path);
  if (!loaded.ok()) {
    return absl::InternalError(
        absl::StrCat("wrote ", npz_path,
                     " but it does not load: ", loaded.status().message()));
  }
  return absl::StrCat(
      "wrote ", npz_path, ": ", main.constvars.size(), " const, ",
      main.invars.size(), " input, ", literals.size(), " literal arrays",
      binding_text.empty()
          ? std::string()
          : absl::StrCat(" (", absl::StrJoin(binding_text, ", "), ")"));
}

}  // namespace

int RunRandomize(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fprintf(stderr, "jax2onnx randomize: no bundle given\n");
    return kExitUsage;
  }
  if (!PathsExist(args, "randomize")) return kExitUsage;
  auto sizes = ParseSizes(FLAGS_sizes);
  auto int_range = ParseIntRange(FLAGS_int_range);
  for (const absl::Status& s : {sizes.status(), int_range.status()}) {
    if (!s.ok()) {
      std::fprintf(stderr, "jax2onnx randomize: %s\n",
                   std::string(s.message()).c_str());
      return 2;
    }
  }
  int failures = 0;
  for (const std::string& arg : args) {
    auto summary = Randomize(arg, FLAGS_seed, *sizes, *int_range, FLAGS_force);
    if (summary.ok()) {
      if (!Quiet()) std::printf("%s\n", summary->c_str());
    } else {
      std::fprintf(stderr, "jax2onnx randomize: %s: %s\n", arg.c_str(),
                   std::string(summary.status().message()).c_str());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace jax2onnx::cli
