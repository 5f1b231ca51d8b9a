// api::LoadBundle: the one entry point that reads an input program, jaxpr
// bundle or StableHLO text (.mlir / .stablehlo, docs/stablehlo.md), into the
// internal bundle every command and the library work on.
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/bundle_access.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate.h"

namespace jax2onnx::api {

namespace {

bool IsExampleName(absl::string_view name) {
  return absl::StartsWith(name, "input_") ||
         absl::StartsWith(name, "expected_");
}

// `read_npz`: an npz beside a non-test program file supplies input_i /
// expected_i (in-memory text has no file beside it).
absl::StatusOr<jaxpr::Bundle> BundleFromProgram(
    const std::string& name, const std::string& path,
    stablehlo::StablehloProgram prog, bool read_npz = true) {
  jaxpr::NamedArrays arrays(prog.arrays.begin(), prog.arrays.end());
  const bool has_inputs = std::any_of(
      arrays.begin(), arrays.end(),
      [](const auto& a) { return absl::StartsWith(a.first, "input_"); });
  std::string npz = path.substr(0, path.rfind('.')) + ".npz";
  std::error_code ec;
  if (read_npz && !prog.is_test && !has_inputs &&
      std::filesystem::exists(npz, ec)) {
    J2O_ASSIGN_OR_RETURN(jaxpr::NamedArrays extra, jaxpr::ReadNpzFile(npz));
    for (auto& [k, v] : extra) {
      if (IsExampleName(k)) {
        arrays.emplace_back(k, std::move(v));
      }
    }
  }
  J2O_ASSIGN_OR_RETURN(
      jaxpr::Bundle bundle,
      jaxpr::AssembleBundle(name, path, std::move(prog.file), arrays, path));
  if (prog.rtol.has_value()) bundle.rtol = prog.rtol;
  if (prog.atol.has_value()) bundle.atol = prog.atol;
  return bundle;
}

}  // namespace

bool LooksLikeStablehlo(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' ||
        text[i] == '\r') {
      ++i;
    } else if (text.substr(i, 2) == "//") {
      size_t nl = text.find('\n', i);
      i = nl == absl::string_view::npos ? text.size() : nl;
    } else {
      break;
    }
  }
  absl::string_view rest = text.substr(i);
  return absl::StartsWith(rest, "module") ||
         absl::StartsWith(rest, "func.func") || absl::StartsWith(rest, "#loc");
}

bool IsStablehloInput(const std::string& path) {
  return stablehlo::IsStablehloPath(path);
}

absl::StatusOr<jaxpr::Bundle> LoadBundle(const std::string& path) {
  if (!stablehlo::IsStablehloPath(path)) return jaxpr::LoadBundle(path);
  return LoadStablehloBundle(path);
}

absl::StatusOr<jaxpr::Bundle> LoadStablehloBundle(const std::string& path) {
  J2O_ASSIGN_OR_RETURN(stablehlo::StablehloProgram prog,
                       stablehlo::LoadStablehloFile(path));
  std::string name = std::filesystem::path(path).stem().string();
  return BundleFromProgram(name, path, std::move(prog));
}

absl::StatusOr<jaxpr::Bundle> StablehloBundleFromText(
    absl::string_view text, const std::string& name,
    jaxpr::NamedArrays examples) {
  const std::string path = absl::StrCat(name, ".mlir");
  for (const auto& [key, value] : examples) {
    if (!IsExampleName(key)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "array '", key,
          "': StableHLO text carries its own constants; only input_i and "
          "expected_i may be passed with it"));
    }
  }
  J2O_ASSIGN_OR_RETURN(stablehlo::StablehloProgram prog,
                       stablehlo::StablehloFromText(text, path));
  if (prog.is_test && !examples.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": a StableHLO test-suite program carries its own inputs and "
        "expected values; pass no arrays with it"));
  }
  for (auto& entry : examples) prog.arrays.push_back(std::move(entry));
  return BundleFromProgram(name, path, std::move(prog), /*read_npz=*/false);
}

}  // namespace jax2onnx::api
