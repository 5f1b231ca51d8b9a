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

// Prints an error and returns false for a missing path or no arguments.
inline bool ExpandBundleArgs(const std::vector<std::string>& args,
                             std::vector<std::string>* bundles) {
  if (args.empty()) {
    std::fprintf(stderr, "no bundle given\n");
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
      std::fprintf(stderr, "no such file or directory: %s\n", arg.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace jax2onnx::cli

#endif  // JAX2ONNX_TOOLS_BUNDLE_ARGS_H_
