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
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/convert_internal.h"
#include "bench/jaxpr_programs.h"
#include "ir/serde.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::bench {
namespace {

struct Config {
  std::string name;
  api::Pipeline pipeline;
  int optimize;
};

const std::vector<Config>& AllConfigs() {
  static const std::vector<Config>* const kConfigs = new std::vector<Config>{
      {"legacy", api::Pipeline::kLegacy, 0},
      {"ir0", api::Pipeline::kIr, 0},
      {"ir1", api::Pipeline::kIr, 1},
      {"ir2", api::Pipeline::kIr, 2},
  };
  return *kConfigs;
}

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Parses, converts and serializes `g`; returns the CPU seconds or an error.
absl::StatusOr<double> ConvertOnce(const Generated& g, const Config& config,
                                   const std::string& write_path) {
  const double t0 = CpuSeconds();
  auto file = jaxpr::ParseJaxprText(g.text, "bench");
  if (!file.ok()) return file.status();
  jaxpr::Bundle bundle;
  bundle.name = "bench";
  bundle.consts = g.consts;
  bundle.file = *std::move(file);
  ConvertOptions options;
  options.optimize = config.optimize;
  auto model = api::ConvertWithPipeline(config.pipeline, bundle, options);
  if (!model.ok()) return model.status();
  const std::string bytes = ir::SerializeDeterministic(*model);
  const double seconds = CpuSeconds() - t0;
  if (!write_path.empty()) {
    std::ofstream(write_path, std::ios::binary) << bytes;
  }
  return seconds;
}

// The fastest of `repeat` conversions in a forked child limited to
// `limit_s` CPU seconds: the time, or why there is none.
std::string Measure(const Generated& g, const Config& config, int limit_s,
                    int repeat, const std::string& write_path,
                    double* seconds) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    rlimit cpu{static_cast<rlim_t>(limit_s), static_cast<rlim_t>(limit_s)};
    setrlimit(RLIMIT_CPU, &cpu);
    double best = -1;
    std::string error;
    for (int i = 0; i < repeat; ++i) {
      absl::StatusOr<double> s = ConvertOnce(g, config, i ? "" : write_path);
      if (!s.ok()) {
        error = std::string(s.status().message().substr(0, 200));
        break;
      }
      if (best < 0 || *s < best) best = *s;
    }
    const std::string msg =
        error.empty() ? absl::StrCat("ok ", best) : "error " + error;
    (void)!write(fds[1], msg.data(), msg.size());
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGXCPU || sig == SIGKILL) return absl::StrCat("> ", limit_s, " s");
    return absl::StrCat("crash (signal ", sig, ")");
  }
  if (absl::StartsWith(msg, "ok ") &&
      absl::SimpleAtod(msg.substr(3), seconds)) {
    return "";
  }
  return msg.empty() ? "no result" : msg;
}

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
  for (absl::string_view c : absl::StrSplit(
           Flag(argc, argv, "configs", "legacy,ir0,ir1,ir2"), ',')) {
    bool found = false;
    for (const Config& config : AllConfigs()) {
      if (config.name == c) {
        configs.push_back(config);
        found = true;
      }
    }
    if (!found) {
      std::fprintf(stderr, "unknown config '%s'\n", std::string(c).c_str());
      return 2;
    }
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
            Measure(programs[i], config, limit_s, repeat, path, &s);
        if (failure.empty()) {
          row.push_back(absl::StrFormat("%.3f", s));
          times.push_back(s);
        } else {
          row.push_back(failure);
          times.push_back(-1);
        }
      }
      if (sizes.size() >= 2) {
        row.push_back(times.front() > 0 && times.back() > 0
                          ? absl::StrFormat("%.1fx",
                                            times.back() / times.front())
                          : "-");
      }
      row.push_back(times.back() > 0
                        ? absl::StrFormat(
                              "%.0fk", programs.back().num_eqns /
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
