#include "bench/complexity_measure.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ir/serde.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::bench {

const std::vector<Config>& AllConfigs() {
  static const std::vector<Config>* const kConfigs = new std::vector<Config>{
      {"legacy", api::Pipeline::kLegacy, 0},
      {"ir0", api::Pipeline::kIr, 0},
      {"ir1", api::Pipeline::kIr, 1},
      {"ir2", api::Pipeline::kIr, 2},
  };
  return *kConfigs;
}

const Config* FindConfig(absl::string_view name) {
  for (const Config& c : AllConfigs()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

absl::StatusOr<double> ConvertOnce(const Generated& g, const Config& config,
                                   std::string* bytes) {
  api::RegisterAllLowerings();
  const double t0 = ThreadCpuSeconds();
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
  std::string serialized = ir::SerializeDeterministic(*model);
  const double seconds = ThreadCpuSeconds() - t0;
  if (serialized.empty()) return absl::InternalError("empty model");
  if (bytes != nullptr) *bytes = std::move(serialized);
  return seconds;
}

std::string MeasureInChild(const Generated& g, const Config& config,
                           int limit_s, int repeat,
                           const std::string& write_path, double* seconds) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return "fork failed";
  }
  if (pid == 0) {
    close(fds[0]);
    rlimit cpu{static_cast<rlim_t>(limit_s), static_cast<rlim_t>(limit_s)};
    setrlimit(RLIMIT_CPU, &cpu);
    double best = -1;
    std::string error;
    for (int i = 0; i < repeat; ++i) {
      std::string bytes;
      absl::StatusOr<double> s = ConvertOnce(g, config, &bytes);
      if (!s.ok()) {
        error = std::string(s.status().message().substr(0, 200));
        break;
      }
      if (i == 0 && !write_path.empty()) {
        std::ofstream(write_path, std::ios::binary) << bytes;
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
    if (sig == SIGXCPU || sig == SIGKILL) {
      return absl::StrCat("> ", limit_s, " s");
    }
    return absl::StrCat("crash (signal ", sig, ")");
  }
  if (absl::StartsWith(msg, "ok ") &&
      absl::SimpleAtod(msg.substr(3), seconds)) {
    return "";
  }
  return msg.empty() ? "no result" : msg;
}

}  // namespace jax2onnx::bench
