// `jax2onnx verify FILE_OR_DIR...`: parses each printed jaxpr and runs the
// type checker (jaxpr/typecheck/typecheck.h) on it. Errors go to stderr as
// `FILE:LINE:COL: error: ...`; exit 0 only when every file is well-typed.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/typecheck/typecheck.h"
#include "tools/bundle_args.h"
#include "tools/commands.h"

namespace jax2onnx::cli {
namespace {

// FILE as given; a directory expands to its *.jaxpr files, recursively and
// sorted.
std::vector<std::string> ExpandPaths(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (!std::filesystem::is_directory(arg, ec)) {
      out.push_back(arg);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = std::filesystem::recursive_directory_iterator(arg, ec);
         !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_regular_file(ec) &&
          absl::EndsWith(it->path().string(), ".jaxpr")) {
        found.push_back(it->path().string());
      }
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace

int RunVerify(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fprintf(stderr,
                 "jax2onnx verify: usage: jax2onnx verify FILE_OR_DIR...\n");
    return 2;
  }
  // A primitive without a rule (psum, shard_map, pallas_call, ...) gets the
  // structural checks and a note; convert and eval name it themselves.
  if (!PathsExist(args, "verify")) return kExitUsage;
  jaxpr::TypeCheckOptions options;
  int well_typed = 0;
  int rejected = 0;
  for (const std::string& path : ExpandPaths(args)) {
    absl::Status status;
    auto file = jaxpr::ParseJaxprFile(path);
    if (!file.ok()) {
      status = file.status();
    } else {
      status = jaxpr::TypeCheckFile(*file, options);
    }
    if (file.ok()) {
      std::set<std::string> unchecked;
      jaxpr::ForEachEqn(*file->main, [&](const jaxpr::Eqn& eqn) {
        if (!jaxpr::HasTypeRule(eqn.primitive)) unchecked.insert(eqn.primitive);
      });
      for (const std::string& prim : unchecked) {
        std::fprintf(stderr,
                     "%s: note: '%s' has no type rule; its equations were "
                     "checked structurally only\n",
                     path.c_str(), prim.c_str());
      }
    }
    if (status.ok()) {
      ++well_typed;
    } else {
      ++rejected;
      std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
    }
  }
  std::printf("verify: %d well-typed, %d rejected\n", well_typed, rejected);
  return rejected == 0 ? 0 : 1;
}

}  // namespace jax2onnx::cli
