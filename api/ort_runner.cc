// OrtRunner: drives tools/ort/runner.js in batch mode over JSON lines, with
// tensors exchanged as .npy files in a private temporary directory.
#include "api/ort_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "jaxpr/io/npy.h"
#include "nlohmann/json.hpp"

extern char** environ;

#ifndef JAX2ONNX_ORT_DEFAULT_DIR
#define JAX2ONNX_ORT_DEFAULT_DIR ""
#endif

namespace jax2onnx::api {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The runner directory an install puts next to its bin/ (cmake/
// jax2onnxInstall.cmake), relative to the running executable.
constexpr char kInstalledRunnerDir[] = "../share/jax2onnx/ort";
// Enough of the child's stderr to show a Node stack trace.
constexpr size_t kStderrTailBytes = 8192;

std::string ErrnoText(int err) { return std::strerror(err); }

// An installed executable's share/jax2onnx/ort when it holds runner.js, else
// the source tree's tools/ort compiled in by CMake.
std::string DefaultRunnerDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path() / kInstalledRunnerDir;
    if (fs::is_regular_file(installed / "runner.js", ec)) {
      return fs::weakly_canonical(installed, ec).string();
    }
  }
  return JAX2ONNX_ORT_DEFAULT_DIR;
}

bool IsExecutable(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// Resolves a bare program name through PATH so a missing node is reported
// before spawning, with the name that was looked up.
absl::StatusOr<std::string> FindNode(const std::string& requested,
                                     bool from_env) {
  const std::string how =
      from_env ? "($JAX2ONNX_NODE)"
               : "(set $JAX2ONNX_NODE or put node in PATH; Debian: apt-get "
                 "install nodejs)";
  if (requested.find('/') != std::string::npos) {
    if (IsExecutable(requested)) return requested;
    return absl::FailedPreconditionError(absl::StrCat(
        "Node.js, needed to run ONNX Runtime, is not executable at '",
        requested, "' ", how));
  }
  const char* path_env = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path_env ? path_env : "", ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", requested);
    if (IsExecutable(candidate)) return candidate;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("Node.js, needed to run ONNX Runtime, was not found: no '",
                   requested, "' in PATH ", how));
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) {
    return absl::StrCat("exited with status ", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return absl::StrCat("was killed by signal ", WTERMSIG(status), " (",
                        strsignal(WTERMSIG(status)), ")");
  }
  return absl::StrCat("ended with wait status ", status);
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void RemoveQuietly(const fs::path& path) {
  std::error_code ignored;
  fs::remove_all(path, ignored);
}

const char* OptimizationName(RunOptions::GraphOptimization level) {
  switch (level) {
    case RunOptions::GraphOptimization::kAll:
      return "all";
    case RunOptions::GraphOptimization::kDisabled:
      return "disabled";
  }
  return "all";
}

}  // namespace

OrtRunner::OrtRunner(OrtRunnerOptions options) : options_(std::move(options)) {}

OrtRunner::~OrtRunner() {
  std::lock_guard<std::mutex> lock(mu_);
  StopProcessLocked(/*graceful=*/true);
  if (!temp_dir_.empty()) RemoveQuietly(temp_dir_);
}

OrtRunner& OrtRunner::Shared() {
  // Not leaked on purpose: the destructor at exit stops Node and removes the
  // temporary directory.
  static OrtRunner runner;
  return runner;
}

absl::Status OrtRunner::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  return StartLocked();
}

bool OrtRunner::IsAvailable(std::string* reason) {
  absl::Status status = Start();
  if (!status.ok() && reason != nullptr) {
    *reason = std::string(status.message());
  }
  return status.ok();
}

absl::StatusOr<std::string> OrtRunner::OrtVersion() {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status status = StartLocked();
  if (!status.ok()) return status;
  return version_;
}

void OrtRunner::KillProcessForTesting() {
  std::lock_guard<std::mutex> lock(mu_);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    // Leave reaping to the next request, which must notice the death itself.
  }
}

absl::Status OrtRunner::StartLocked() {
  if (pid_ > 0) return absl::OkStatus();
  return StartProcessLocked();
}

absl::Status OrtRunner::StartProcessLocked() {
  if (node_binary_.empty()) {
    bool from_env = false;
    std::string requested = options_.node_binary;
    if (requested.empty()) {
      const char* env = std::getenv("JAX2ONNX_NODE");
      if (env != nullptr && *env != '\0') {
        requested = env;
        from_env = true;
      } else {
        requested = "node";
      }
    }
    absl::StatusOr<std::string> node = FindNode(requested, from_env);
    if (!node.ok()) return node.status();
    node_binary_ = *node;
  }
  if (runner_dir_.empty()) {
    runner_dir_ = options_.runner_dir;
    if (runner_dir_.empty()) {
      const char* env = std::getenv("JAX2ONNX_ORT_DIR");
      runner_dir_ = (env != nullptr && *env != '\0') ? env : DefaultRunnerDir();
    }
    runner_script_ = (fs::path(runner_dir_) / "runner.js").string();
  }
  std::error_code ec;
  if (!fs::is_regular_file(runner_script_, ec)) {
    runner_dir_.clear();
    return absl::FailedPreconditionError(absl::StrCat(
        "the ONNX Runtime runner script '", runner_script_,
        "' does not exist (set $JAX2ONNX_ORT_DIR to the jax2onnx tools/ort "
        "directory)"));
  }
  if (!fs::is_directory(
          fs::path(runner_dir_) / "node_modules" / "onnxruntime-node", ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("ONNX Runtime is not installed: run `cd ", runner_dir_,
                     " && npm ci --ignore-scripts` (no "
                     "node_modules/onnxruntime-node there; needs the npm "
                     "registry once)"));
  }

  // stdin is a socket so writes to a dead child fail with EPIPE instead of
  // raising SIGPIPE in the host program (send() with MSG_NOSIGNAL).
  int in_pair[2], out_pipe[2], err_pipe[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0) {
    return absl::InternalError(
        absl::StrCat("socketpair for the ORT runner: ", ErrnoText(errno)));
  }
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(in_pair[0]);
    ::close(in_pair[1]);
    return absl::InternalError(
        absl::StrCat("pipe for the ORT runner: ", ErrnoText(err)));
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    for (int fd : {in_pair[0], in_pair[1], out_pipe[0], out_pipe[1]}) {
      ::close(fd);
    }
    return absl::InternalError(
        absl::StrCat("pipe for the ORT runner: ", ErrnoText(err)));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pair[1], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<std::string> args = {node_binary_, runner_script_, "batch"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int spawn_error = ::posix_spawn(&pid, node_binary_.c_str(), &actions, nullptr,
                                  argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in_pair[1]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (spawn_error != 0) {
    ::close(in_pair[0]);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start Node.js '", node_binary_,
                     "' for ONNX Runtime: ", ErrnoText(spawn_error)));
  }
  pid_ = pid;
  stdin_fd_ = in_pair[0];
  stdout_fd_ = out_pipe[0];
  stderr_fd_ = err_pipe[0];
  ::fcntl(stderr_fd_, F_SETFL, ::fcntl(stderr_fd_, F_GETFL) | O_NONBLOCK);
  stdout_buffer_.clear();
  stderr_tail_.clear();
  ++process_starts_;

  // The version request proves Node runs the script and ORT's native binding
  // loads; the runner answers it with the install hint when it does not.
  const int64_t id = next_id_++;
  json request = {{"id", id}, {"cmd", "version"}};
  Failure failure = Failure::kNone;
  absl::StatusOr<std::string> line =
      ExchangeLocked(request.dump(), options_.startup_timeout, &failure);
  if (!line.ok()) {
    absl::Status status = absl::FailedPreconditionError(absl::StrCat(
        "the ONNX Runtime runner did not start: ", line.status().message()));
    StopProcessLocked(/*graceful=*/false);
    return status;
  }
  json response = json::parse(*line, nullptr, /*allow_exceptions=*/false);
  if (response.is_discarded() || !response.is_object() ||
      response.value("id", json()) != json(id)) {
    StopProcessLocked(/*graceful=*/false);
    return absl::FailedPreconditionError(
        absl::StrCat("the ONNX Runtime runner answered the version request "
                     "with an unexpected line: ",
                     *line));
  }
  if (!response.value("ok", false)) {
    std::string error = response.value("error", std::string("unknown error"));
    StopProcessLocked(/*graceful=*/true);
    return absl::FailedPreconditionError(error);
  }
  version_ = response.value("version", std::string());
  return absl::OkStatus();
}

void OrtRunner::StopProcessLocked(bool graceful) {
  // Closing stdin ends the runner's read loop; it exits on its own.
  CloseFd(stdin_fd_);
  if (pid_ <= 0) {
    CloseFd(stdout_fd_);
    CloseFd(stderr_fd_);
    stdout_buffer_.clear();
    return;
  }
  int status = 0;
  bool reaped = false;
  if (graceful) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline) {
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_ || (r < 0 && errno != EINTR)) {
        reaped = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (!reaped) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
  stdout_buffer_.clear();
}

void OrtRunner::DrainStderrLocked() {
  if (stderr_fd_ < 0) return;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(stderr_fd_, buf, sizeof(buf));
    if (n > 0) {
      stderr_tail_.append(buf, static_cast<size_t>(n));
      if (stderr_tail_.size() > kStderrTailBytes) {
        stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) CloseFd(stderr_fd_);  // The child closed its stderr.
    return;
  }
}

std::string OrtRunner::StderrTailLocked() const {
  if (stderr_tail_.empty()) return "";
  return absl::StrCat("; runner stderr: ", stderr_tail_);
}

absl::StatusOr<std::string> OrtRunner::ExchangeLocked(
    const std::string& request_line, absl::Duration timeout, Failure* failure) {
  *failure = Failure::kNone;
  const auto deadline =
      std::chrono::steady_clock::now() + absl::ToChronoMilliseconds(timeout);
  auto died = [&](absl::string_view what) {
    *failure = Failure::kProcessDied;
    // The child is gone or going: collect its exit status for the message.
    int status = 0;
    std::string how = "ended";
    CloseFd(stdin_fd_);
    for (int i = 0; i < 200; ++i) {
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        how = DescribeWaitStatus(status);
        pid_ = -1;
        break;
      }
      if (r < 0 && errno != EINTR) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    DrainStderrLocked();
    if (pid_ > 0) StopProcessLocked(/*graceful=*/false);
    pid_ = -1;
    CloseFd(stdout_fd_);
    CloseFd(stderr_fd_);
    return absl::UnavailableError(
        absl::StrCat("the ONNX Runtime runner (", node_binary_, " ",
                     runner_script_, ") ", how, " ", what, StderrTailLocked()));
  };

  std::string line = request_line + "\n";
  size_t sent = 0;
  while (sent < line.size()) {
    ssize_t n =
        ::send(stdin_fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return died(
          absl::StrCat("while sending a request (", ErrnoText(errno), ")"));
    }
    sent += static_cast<size_t>(n);
  }

  while (true) {
    size_t newline = stdout_buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string response = stdout_buffer_.substr(0, newline);
      stdout_buffer_.erase(0, newline + 1);
      return response;
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      *failure = Failure::kTimeout;
      DrainStderrLocked();
      std::string tail = StderrTailLocked();
      StopProcessLocked(/*graceful=*/false);
      return absl::DeadlineExceededError(
          absl::StrCat("the ONNX Runtime runner did not answer within ",
                       absl::FormatDuration(timeout),
                       "; it was killed and will be restarted by the next "
                       "request",
                       tail));
    }
    int wait_ms = static_cast<int>(std::min<int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now)
                .count() +
            1,
        1000));
    pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
    int nfds = stderr_fd_ >= 0 ? 2 : 1;
    int r = ::poll(fds, nfds, wait_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      *failure = Failure::kProtocol;
      return absl::InternalError(
          absl::StrCat("poll on the ONNX Runtime runner: ", ErrnoText(errno)));
    }
    if (nfds == 2 && fds[1].revents != 0) DrainStderrLocked();
    if (fds[0].revents != 0) {
      char buf[65536];
      ssize_t n = ::read(stdout_fd_, buf, sizeof(buf));
      if (n > 0) {
        stdout_buffer_.append(buf, static_cast<size_t>(n));
      } else if (n == 0) {
        return died("before answering a request");
      } else if (errno != EINTR && errno != EAGAIN) {
        return died(absl::StrCat(
            "(reading its output failed: ", ErrnoText(errno), ")"));
      }
    }
  }
}

absl::StatusOr<std::string> OrtRunner::TempDirLocked() {
  if (!temp_dir_.empty()) return temp_dir_;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(
      (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp", "/jax2onnx-ort-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create a temporary directory '", pattern,
                     "' for ONNX Runtime inputs: ", ErrnoText(errno)));
  }
  temp_dir_ = pattern;
  return temp_dir_;
}

absl::StatusOr<NamedArrays> OrtRunner::RunOnceLocked(
    const std::string& model_path, const NamedArrays& inputs,
    const RunOptions& options, Failure* failure) {
  *failure = Failure::kNone;
  absl::Status started = StartLocked();
  if (!started.ok()) return started;
  absl::StatusOr<std::string> temp_dir = TempDirLocked();
  if (!temp_dir.ok()) return temp_dir.status();

  const int64_t id = next_id_++;
  const fs::path request_dir = fs::path(*temp_dir) / absl::StrCat("r", id);
  // Every file of this request lives under request_dir, removed on return so
  // a long test run does not fill the disk.
  struct Cleanup {
    fs::path dir;
    ~Cleanup() { RemoveQuietly(dir); }
  } cleanup{request_dir};
  std::error_code ec;
  fs::create_directories(request_dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat(
        "cannot create '", request_dir.string(), "': ", ec.message()));
  }

  json input_paths = json::object();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& [name, array] = inputs[i];
    if (input_paths.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", name, "' is given twice"));
    }
    // Input names can hold any character; file names use the position.
    std::string file = (request_dir / absl::StrCat("in", i, ".npy")).string();
    absl::Status written = jaxpr::WriteNpyFile(file, array);
    if (!written.ok()) {
      return absl::Status(
          written.code(),
          absl::StrCat("writing input '", name, "' (", array.TypeString(),
                       ") for ONNX Runtime: ", written.message()));
    }
    input_paths[name] = file;
  }
  json request = {
      {"id", id},
      {"model", fs::absolute(model_path, ec).string()},
      {"inputs", input_paths},
      {"outputs_dir", (request_dir / "out").string()},
      {"graph_optimization_level",
       OptimizationName(options.graph_optimization)},
  };
  absl::StatusOr<std::string> line = ExchangeLocked(
      request.dump(-1, ' ', false, json::error_handler_t::replace),
      options.timeout, failure);
  if (!line.ok()) return line.status();

  json response = json::parse(*line, nullptr, /*allow_exceptions=*/false);
  if (response.is_discarded() || !response.is_object() ||
      response.value("id", json()) != json(id)) {
    // Out of step with the runner: every later answer would be misread.
    *failure = Failure::kProtocol;
    return absl::InternalError(
        absl::StrCat("the ONNX Runtime runner answered request ", id,
                     " with an unexpected line: ", line->substr(0, 500)));
  }
  if (!response.value("ok", false)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ONNX Runtime failed on '", model_path,
        "': ", response.value("error", std::string("unknown error"))));
  }
  const json& names = response["output_names"];
  const json& files = response["outputs"];
  if (!names.is_array() || !files.is_object()) {
    *failure = Failure::kProtocol;
    return absl::InternalError(absl::StrCat(
        "the ONNX Runtime runner's answer lacks output_names/outputs: ",
        line->substr(0, 500)));
  }
  NamedArrays outputs;
  outputs.reserve(names.size());
  for (const json& name_json : names) {
    std::string name = name_json.get<std::string>();
    auto file = files.find(name);
    if (file == files.end() || !file->is_string()) {
      *failure = Failure::kProtocol;
      return absl::InternalError(absl::StrCat(
          "the ONNX Runtime runner's answer has no file for output '", name,
          "'"));
    }
    absl::StatusOr<jaxpr::Array> array =
        jaxpr::ReadNpyFile(file->get<std::string>());
    if (!array.ok()) {
      return absl::Status(
          array.status().code(),
          absl::StrCat("reading ONNX Runtime output '", name, "' of '",
                       model_path, "': ", array.status().message()));
    }
    outputs.emplace_back(std::move(name), *std::move(array));
  }
  return outputs;
}

absl::StatusOr<NamedArrays> OrtRunner::RunNamed(const std::string& model_path,
                                                const NamedArrays& inputs,
                                                const RunOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int attempt = 0;; ++attempt) {
    Failure failure = Failure::kNone;
    absl::StatusOr<NamedArrays> result =
        RunOnceLocked(model_path, inputs, options, &failure);
    if (result.ok()) return result;
    switch (failure) {
      case Failure::kProcessDied:
        // Node can die for reasons unrelated to this model (OOM killer, a
        // stray signal): one fresh process gets one more try.
        if (attempt == 0) continue;
        return absl::UnavailableError(absl::StrCat(
            "running '", model_path, "' (after restarting the runner once): ",
            result.status().message()));
      case Failure::kProtocol:
        StopProcessLocked(/*graceful=*/false);
        return result.status();
      case Failure::kTimeout:
        return absl::DeadlineExceededError(absl::StrCat(
            "running '", model_path, "': ", result.status().message()));
      case Failure::kNone:
        return result.status();
    }
  }
}

absl::StatusOr<std::vector<jaxpr::Array>> OrtRunner::Run(
    const std::string& model_path, const NamedArrays& inputs,
    const RunOptions& options) {
  absl::StatusOr<NamedArrays> named = RunNamed(model_path, inputs, options);
  if (!named.ok()) return named.status();
  std::vector<jaxpr::Array> arrays;
  arrays.reserve(named->size());
  for (auto& [name, array] : *named) arrays.push_back(std::move(array));
  return arrays;
}

}  // namespace jax2onnx::api
