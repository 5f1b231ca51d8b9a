#include "jaxpr/io/examples.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/io/static_bytes.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::jaxpr {
namespace {

// A canonical decimal of at most 9 digits (no sign, no leading zero).
bool CanonicalIndex(absl::string_view digits, int* value) {
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit) ||
      (digits.size() > 1 && digits[0] == '0')) {
    return false;
  }
  return absl::SimpleAtoi(digits, value);
}

}  // namespace

bool SplitExampleEntryName(absl::string_view name, std::string* base,
                           int* example) {
  const size_t at = name.rfind('@');
  if (at == absl::string_view::npos) return false;
  const absl::string_view head = name.substr(0, at);
  int index = 0;
  bool known = false;
  for (absl::string_view prefix : {"input_", "expected_"}) {
    if (absl::StartsWith(head, prefix) &&
        CanonicalIndex(head.substr(prefix.size()), &index)) {
      known = true;
    }
  }
  int k = 0;
  if (!known || !CanonicalIndex(name.substr(at + 1), &k) || k < 1) {
    return false;
  }
  *base = std::string(head);
  *example = k;
  return true;
}

absl::StatusOr<std::vector<NamedArrays>> GroupMoreExamples(
    const NamedArrays& arrays, absl::string_view what) {
  std::map<int, NamedArrays> by_example;
  for (const auto& [name, array] : arrays) {
    std::string base;
    int k = 0;
    if (SplitExampleEntryName(name, &base, &k)) {
      by_example[k].emplace_back(base, array);
    } else if (name.find('@') != std::string::npos &&
               (absl::StartsWith(name, "input_") ||
                absl::StartsWith(name, "expected_"))) {
      // Other names stay tolerated (bundles may carry extra data); these
      // are example entries written wrong.
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": entry '", name,
                       "' is not input_I@K or expected_I@K with K >= 1"));
    }
  }
  std::vector<NamedArrays> out;
  for (auto& [k, entries] : by_example) {
    const int want = static_cast<int>(out.size()) + 1;
    if (k != want) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": entries of example ", k,
                       " are present but example ", want, " has none"));
    }
    out.push_back(std::move(entries));
  }
  return out;
}

absl::StatusOr<std::vector<NamedArrays>> ReadMoreExamples(
    const Bundle& bundle) {
  if (bundle.npz_path.empty()) return std::vector<NamedArrays>();
  const ClosedJaxpr& main = bundle.jaxpr();
  const std::string npz = bundle.npz_path;
  NpzReadPolicy policy;
  policy.wanted = [](absl::string_view name) {
    return name.find('@') != absl::string_view::npos &&
           (absl::StartsWith(name, "input_") ||
            absl::StartsWith(name, "expected_"));
  };
  policy.check_header = [&main, npz](
                            absl::string_view name, DType dtype,
                            const std::vector<int64_t>& shape) -> absl::Status {
    std::string base;
    int k = 0;
    if (!SplitExampleEntryName(name, &base, &k)) return absl::OkStatus();
    const bool input = absl::StartsWith(base, "input_");
    int index = 0;
    CanonicalIndex(base.substr(input ? 6 : 9), &index);
    const size_t i = static_cast<size_t>(index);
    const Aval* aval = nullptr;
    if (input && i < main.invars.size()) {
      aval = &main.invars[i]->aval;
    } else if (!input && i < main.outvars.size() && main.outvars[i].var) {
      aval = &main.outvars[i].var->aval;
    }
    absl::StatusOr<int64_t> declared =
        CheckedByteSize(dtype, shape, std::numeric_limits<int64_t>::max());
    if (!declared.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          npz, ": entry '", name, "': ", declared.status().message()));
    }
    // Small entries are left to SetBundleInputs' checks (they name dtype
    // and shape); a large one must fit its binder's static size.
    constexpr int64_t kSmallEntry = int64_t{1} << 20;
    if (*declared <= kSmallEntry) return absl::OkStatus();
    const std::optional<int64_t> limit =
        aval != nullptr ? StaticBytes(*aval)
                        : std::optional<int64_t>(kSmallEntry);
    if (!limit.has_value() || *declared <= *limit) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(npz, ": entry '", name, "' declares ", ShortName(dtype),
                     "[", absl::StrJoin(shape, ","), "] (", *declared,
                     " bytes), more than its binder holds (", *limit,
                     " bytes); refused before inflating it"));
  };
  J2O_ASSIGN_OR_RETURN(NamedArrays arrays, ReadNpzFile(npz, policy));
  return GroupMoreExamples(arrays, npz);
}

}  // namespace jax2onnx::jaxpr
