// Expands CLI arguments naming bundles: files are kept, directories are
// searched recursively for *.jaxpr, *.mlir and *.stablehlo (sorted).
#ifndef JAX2ONNX_TOOLS_BUNDLE_ARGS_H_
#define JAX2ONNX_TOOLS_BUNDLE_ARGS_H_

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace jax2onnx::cli {

// Prints an error (`jax2onnx COMMAND: ...`) and returns false for a missing
// path or no arguments; callers exit 2 (kExitUsage) then.
inline bool ExpandBundleArgs(const std::vector<std::string>& args,
                             std::vector<std::string>* bundles,
                             const char* command) {
  if (args.empty()) {
    std::fprintf(stderr, "jax2onnx %s: no bundle given\n", command);
    return false;
  }
  for (const std::string& arg : args) {
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::string> found;
      for (const auto& entry :
           std::filesystem::recursive_directory_iterator(arg, ec)) {
        // .jaxpr bundles and StableHLO text (docs/stablehlo.md).
        const auto ext = entry.path().extension();
        if (entry.is_regular_file() &&
            (ext == ".jaxpr" || ext == ".mlir" || ext == ".stablehlo")) {
          found.push_back(entry.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      bundles->insert(bundles->end(), found.begin(), found.end());
    } else if (std::filesystem::exists(arg, ec)) {
      bundles->push_back(arg);
    } else {
      std::fprintf(stderr, "jax2onnx %s: no such file or directory: %s\n",
                   command, arg.c_str());
      return false;
    }
  }
  return true;
}

// True when `arg` names an existing file (any type): the path itself, NAME for
// NAME.jaxpr, or NAME.npz next to NAME.jaxpr. Otherwise prints
// `jax2onnx COMMAND: no such file or directory: ARG` (callers exit 2, as
// every command does for a missing input file).
inline bool InputFileExists(const std::string& arg, const char* command) {
  std::error_code ec;
  namespace fs = std::filesystem;
  std::string stem = arg;
  if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, ".npz") == 0) {
    stem.resize(stem.size() - 4);
  }
  // exists, not is_regular_file: a directory, FIFO or device given as the
  // bundle goes on to the loader, which names it precisely (issue 24).
  if (fs::is_directory(arg, ec)) {
    std::fprintf(stderr, "jax2onnx %s: %s is a directory, not a bundle\n",
                 command, arg.c_str());
    return false;
  }
  if (fs::exists(arg, ec) || fs::exists(stem + ".jaxpr", ec)) {
    return true;
  }
  std::fprintf(stderr, "jax2onnx %s: no such file or directory: %s\n", command,
               arg.c_str());
  return false;
}

// InputFileExists for each argument, directories also accepted.
inline bool PathsExist(const std::vector<std::string>& args,
                       const char* command) {
  for (const std::string& arg : args) {
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) continue;
    if (!InputFileExists(arg, command)) return false;
  }
  return true;
}

}  // namespace jax2onnx::cli

#endif  // JAX2ONNX_TOOLS_BUNDLE_ARGS_H_
