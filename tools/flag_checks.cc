#include "tools/flag_checks.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gflags/gflags.h"
#include "jaxpr/mesh.h"
#include "plugin/onnx_types.h"

DECLARE_int32(opset);
DECLARE_int32(optimize);
DECLARE_bool(fuse_attention);

namespace jax2onnx::cli {
namespace {

std::string Value(const std::string& name) {
  std::string value;
  gflags::GetCommandLineOption(name.c_str(), &value);
  return value;
}

// "" when `value` is good for flag `name`, else why not (after the flag).
std::string Problem(const std::string& name, const std::string& value) {
  auto one_of = [&](std::vector<std::string> allowed) -> std::string {
    for (const std::string& a : allowed) {
      if (value == a) return "";
    }
    return absl::StrCat("must be ", absl::StrJoin(allowed, ", "), "; got '",
                        value, "'");
  };
  auto int_in = [&](int lo, int hi) -> std::string {
    int v = 0;
    if (absl::SimpleAtoi(value, &v) && v >= lo && v <= hi) return "";
    return absl::StrCat("must be ", lo, "..", hi, "; got ", value);
  };
  if (name == "opset") return int_in(plugin::kMinOpset, plugin::kMaxOpset);
  if (name == "optimize") return int_in(0, 2);
  if (name == "timeout_s") return int_in(1, 1 << 30);
  if (name == "external_data") return one_of({"auto", "always", "never"});
  if (name == "input_format") return one_of({"auto", "jaxpr", "stablehlo"});
  if (name == "to") return one_of({"jaxpr"});
  if (name == "pipeline") return one_of({"", "legacy", "ir"});
  if (name == "mesh") {
    auto parsed = jaxpr::ParseMeshAxisSizes(value);
    return parsed.ok() ? "" : std::string(parsed.status().message());
  }
  if (name == "inputs_as_nchw" || name == "outputs_as_nchw") {
    if (value.empty()) return "";
    for (absl::string_view part : absl::StrSplit(value, ',')) {
      int v = 0;
      if (!absl::SimpleAtoi(part, &v) || v < 0) {
        return absl::StrCat("takes comma-separated indices >= 0; got '", value,
                            "'");
      }
    }
    return "";
  }
  if (name == "rtol" || name == "atol" || name == "min_pass_rate") {
    double v = 0;
    const double hi = name == "min_pass_rate" ? 1 : INFINITY;
    if (absl::SimpleAtod(value, &v) && std::isfinite(v) && v >= 0 && v <= hi) {
      return "";
    }
    return absl::StrCat(name == "min_pass_rate"
                            ? "must be in [0, 1]"
                            : "must be a finite number >= 0",
                        "; got ", value);
  }
  if (name == "functions") {
    if (value.empty()) return "";
    for (absl::string_view part : absl::StrSplit(value, ',')) {
      if (part.empty())
        return absl::StrCat("has an empty pattern: '", value, "'");
    }
    return "";
  }
  return "";
}

bool Accepts(const Command& c, const std::string& name) {
  for (const FlagDoc& f : c.flags) {
    if (f.name == name) return true;
  }
  return false;
}

bool Given(const std::string& name) {
  gflags::CommandLineFlagInfo info;
  return gflags::GetCommandLineFlagInfo(name.c_str(), &info) &&
         !info.is_default;
}

}  // namespace

bool CheckFlagValues(const Command& c) {
  for (const FlagDoc& f : c.flags) {
    if (!Given(f.name)) continue;
    const std::string problem = Problem(f.name, Value(f.name));
    if (!problem.empty()) {
      std::fprintf(stderr, "jax2onnx %s: --%s %s\n", c.name, f.name.c_str(),
                   problem.c_str());
      return false;
    }
  }
  // --fuse_attention builds ONNX Attention (opset 23) in the fusions of
  // optimization level 2: anywhere else it could only be ignored.
  if (Accepts(c, "fuse_attention") && FLAGS_fuse_attention) {
    if (FLAGS_opset < 23) {
      std::fprintf(stderr,
                   "jax2onnx %s: --fuse_attention needs --opset 23 or more "
                   "(ONNX Attention); got --opset %d\n",
                   c.name, FLAGS_opset);
      return false;
    }
    if (FLAGS_optimize < 2) {
      std::fprintf(stderr,
                   "jax2onnx %s: --fuse_attention is a fusion of "
                   "--optimize=2; got --optimize=%d\n",
                   c.name, FLAGS_optimize);
      return false;
    }
  }
  return true;
}

}  // namespace jax2onnx::cli
