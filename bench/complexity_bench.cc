// The complexity suite (bench/jaxpr_programs.h): converts every program
// shape at two sizes through the legacy pipeline and the IR pipeline at
// --optimize=0/1/2, and prints the CPU time of each conversion (parse +
// lower + serialize), its equations per CPU second and the growth of the
// time from the small to the large size (linear: about the size ratio).
// Each conversion runs in a forked child with a CPU-time limit, so an
// exponential case or a stack overflow is reported (as "timeout" / "crash
// (signal N)") instead of stopping the run. docs/performance.md keeps the
// numbers.
//
//   complexity_bench [--sizes=10000,100000] [--shapes=a,b] [--configs=...]
//                    [--limit_s=60] [--repeat=1] [--write_onnx=DIR]
//   complexity_bench --emit_jaxpr=SHAPE:N > program.jaxpr
//
// --configs picks among legacy, ir0, ir1, ir2 (default: all four);
// --repeat takes the fastest of N conversions; --write_onnx writes each
// model as DIR/SHAPE_SIZE_CONFIG.onnx (for ORT session-creation timings,
// bench/ort_session.js).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/convert_internal.h"
#include "bench/complexity_measure.h"
#include "bench/jaxpr_programs.h"

namespace jax2onnx::bench {
namespace {

std::string Flag(int argc, char** argv, const std::string& name,
                 const std::string& fallback) {
  const std::string prefix = "--" + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (absl::StartsWith(argv[i], prefix)) {
      return std::string(argv[i] + prefix.size());
    }
  }
  return fallback;
}

int Main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0) {
      std::printf(
          "complexity_bench [--sizes=10000,100000] [--shapes=a,b] "
          "[--configs=legacy,ir0,ir1,ir2] [--limit_s=60] [--repeat=1] "
          "[--write_onnx=DIR]\nshapes:\n");
      for (const ProgramShape& s : ComplexityShapes()) {
        std::printf("  %-16s %s\n", s.name, s.description);
      }
      return 0;
    }
  }
  // --emit_jaxpr=SHAPE:N prints one program (for the CLI, e.g. to time an
  // older build on it); shapes with constvars need an npz and are refused.
  if (const std::string emit = Flag(argc, argv, "emit_jaxpr", "");
      !emit.empty()) {
    std::vector<std::string> parts = absl::StrSplit(emit, ':');
    int n = 0;
    const ProgramShape* shape =
        parts.size() == 2 ? FindShape(parts[0]) : nullptr;
    if (shape == nullptr || !absl::SimpleAtoi(parts[1], &n) || n <= 0) {
      std::fprintf(stderr, "--emit_jaxpr wants SHAPE:N (see --help)\n");
      return 2;
    }
    const Generated g = shape->generate(n);
    if (!g.consts.empty()) {
      std::fprintf(stderr, "%s has constvars (weights); not emitted\n",
                   shape->name);
      return 2;
    }
    std::fwrite(g.text.data(), 1, g.text.size(), stdout);
    return 0;
  }
  api::RegisterAllLowerings();
  std::vector<int> sizes;
  for (absl::string_view s :
       absl::StrSplit(Flag(argc, argv, "sizes", "10000,100000"), ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(s, &n) || n <= 0) {
      std::fprintf(stderr, "bad --sizes entry '%s'\n", std::string(s).c_str());
      return 2;
    }
    sizes.push_back(n);
  }
  std::vector<const ProgramShape*> shapes;
  const std::string shape_flag = Flag(argc, argv, "shapes", "");
  if (shape_flag.empty()) {
    for (const ProgramShape& s : ComplexityShapes()) shapes.push_back(&s);
  } else {
    for (absl::string_view s : absl::StrSplit(shape_flag, ',')) {
      const ProgramShape* shape = FindShape(std::string(s));
      if (shape == nullptr) {
        std::fprintf(stderr, "unknown shape '%s' (see --help)\n",
                     std::string(s).c_str());
        return 2;
      }
      shapes.push_back(shape);
    }
  }
  std::vector<Config> configs;
  for (absl::string_view c :
       absl::StrSplit(Flag(argc, argv, "configs", "legacy,ir0,ir1,ir2"), ',')) {
    const Config* config = FindConfig(c);
    if (config == nullptr) {
      std::fprintf(stderr, "unknown config '%s'\n", std::string(c).c_str());
      return 2;
    }
    configs.push_back(*config);
  }
  int limit_s = 60, repeat = 1;
  if (!absl::SimpleAtoi(Flag(argc, argv, "limit_s", "60"), &limit_s) ||
      !absl::SimpleAtoi(Flag(argc, argv, "repeat", "1"), &repeat) ||
      limit_s <= 0 || repeat <= 0) {
    std::fprintf(stderr, "bad --limit_s or --repeat\n");
    return 2;
  }
  const std::string write_dir = Flag(argc, argv, "write_onnx", "");

  std::vector<std::string> header = {"shape", "config"};
  for (int n : sizes) header.push_back(absl::StrCat("CPU s @", n));
  if (sizes.size() >= 2) {
    header.push_back(
        absl::StrCat("growth ", sizes.back() / sizes.front(), "x size"));
  }
  header.push_back(absl::StrCat("eq/CPU-s @", sizes.back()));
  std::printf("| %s |\n|", absl::StrJoin(header, " | ").c_str());
  for (size_t i = 0; i < header.size(); ++i) std::printf("---|");
  std::printf("\n");
  std::fflush(stdout);
  for (const ProgramShape* shape : shapes) {
    std::vector<Generated> programs;
    for (int n : sizes) programs.push_back(shape->generate(n));
    for (const Config& config : configs) {
      std::vector<std::string> row = {shape->name, config.name};
      std::vector<double> times;
      for (size_t i = 0; i < sizes.size(); ++i) {
        const std::string path =
            write_dir.empty()
                ? ""
                : absl::StrCat(write_dir, "/", shape->name, "_", sizes[i], "_",
                               config.name, ".onnx");
        double s = 0;
        std::string failure =
            MeasureInChild(programs[i], config, limit_s, repeat, path, &s);
        if (failure.empty()) {
          row.push_back(absl::StrFormat("%.3f", s));
          times.push_back(s);
        } else {
          row.push_back(failure);
          times.push_back(-1);
        }
      }
      if (sizes.size() >= 2) {
        row.push_back(
            times.front() > 0 && times.back() > 0
                ? absl::StrFormat("%.1fx", times.back() / times.front())
                : "-");
      }
      row.push_back(times.back() > 0
                        ? absl::StrFormat("%.0fk", programs.back().num_eqns /
                                                       times.back() / 1e3)
                        : "-");
      std::printf("| %s |\n", absl::StrJoin(row, " | ").c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace jax2onnx::bench

int main(int argc, char** argv) { return jax2onnx::bench::Main(argc, argv); }
