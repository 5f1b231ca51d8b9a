// Runs ONNX models with ONNX Runtime through one long-lived Node process
// (tools/ort/runner.js on top of the npm package onnxruntime-node). Starting
// Node and loading ORT costs ~200 ms, a batched request a few ms, so a test
// run keeps one OrtRunner (see Shared()) and sends it every model. Tensors
// cross the process boundary as .npy files in a private temporary directory.
#ifndef JAX2ONNX_API_ORT_RUNNER_H_
#define JAX2ONNX_API_ORT_RUNNER_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jaxpr/array.h"

namespace jax2onnx::api {

struct RunOptions {
  enum class GraphOptimization {
    kAll,       // ORT's default: constant folding, fusions, layout changes.
    kDisabled,  // Runs the graph as written, to check the converter alone.
  };
  GraphOptimization graph_optimization = GraphOptimization::kAll;
  // Per request, including loading the model. On expiry the Node process is
  // killed (it may be stuck inside ORT) and the next request starts a new one.
  absl::Duration timeout = absl::Minutes(2);
};

struct OrtRunnerOptions {
  // Empty: $JAX2ONNX_NODE, else `node` looked up in PATH.
  std::string node_binary;
  // Directory holding runner.js and node_modules/. Empty: $JAX2ONNX_ORT_DIR,
  // else the source tree's tools/ort compiled in by CMake.
  std::string runner_dir;
  // Node start plus loading ORT, checked with a version request.
  absl::Duration startup_timeout = absl::Seconds(60);
};

using NamedArrays = std::vector<std::pair<std::string, jaxpr::Array>>;

// Thread-safe: requests from several threads are serialised.
class OrtRunner {
 public:
  explicit OrtRunner(OrtRunnerOptions options = {});
  ~OrtRunner();
  OrtRunner(const OrtRunner&) = delete;
  OrtRunner& operator=(const OrtRunner&) = delete;

  // One runner per process, created on first use and shut down at exit.
  static OrtRunner& Shared();

  // Starts the Node process if it is not running and checks that ORT loads.
  // Errors say what is missing (node, runner.js, onnxruntime-node) and how to
  // install it. Run() calls this itself.
  absl::Status Start();

  // True when models can be run; otherwise `reason` (if given) says why, for
  // tests that skip.
  bool IsAvailable(std::string* reason = nullptr);

  // The onnxruntime-node version, e.g. "1.30.0".
  absl::StatusOr<std::string> OrtVersion();

  // Runs the model on `inputs` (ONNX graph input name -> value) and returns
  // the outputs in the order of the model's graph outputs. ORT errors (bad
  // model, wrong input type) are InvalidArgument and leave the runner usable.
  // If the Node process dies during a request it is restarted and the request
  // retried once.
  absl::StatusOr<std::vector<jaxpr::Array>> Run(const std::string& model_path,
                                                const NamedArrays& inputs,
                                                const RunOptions& options = {});
  // Same, with each output's graph output name.
  absl::StatusOr<NamedArrays> RunNamed(const std::string& model_path,
                                       const NamedArrays& inputs,
                                       const RunOptions& options = {});

  // How many times the Node process was started (for tests and diagnostics).
  int process_starts() const { return process_starts_; }
  // Kills the Node process as if it crashed (tests of the restart path).
  void KillProcessForTesting();

 private:
  // Classifies a failed exchange so Run() knows whether a restart can help.
  enum class Failure { kNone, kProcessDied, kTimeout, kProtocol };

  absl::Status StartLocked();
  absl::Status StartProcessLocked();
  void StopProcessLocked(bool graceful);
  // Sends one JSON request line and reads the response line.
  absl::StatusOr<std::string> ExchangeLocked(const std::string& request_line,
                                             absl::Duration timeout,
                                             Failure* failure);
  // Reads the child's stderr without blocking, keeping its tail.
  void DrainStderrLocked();
  std::string StderrTailLocked() const;
  absl::StatusOr<std::string> TempDirLocked();
  absl::StatusOr<NamedArrays> RunOnceLocked(const std::string& model_path,
                                            const NamedArrays& inputs,
                                            const RunOptions& options,
                                            Failure* failure);

  OrtRunnerOptions options_;
  std::string node_binary_;
  std::string runner_script_;
  std::string runner_dir_;

  std::mutex mu_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;   // Our end of the child's stdin (a socket: no SIGPIPE).
  int stdout_fd_ = -1;  // Read end of the child's stdout.
  int stderr_fd_ = -1;  // Read end of the child's stderr.
  std::string stdout_buffer_;
  std::string stderr_tail_;
  std::string version_;
  std::string temp_dir_;
  int64_t next_id_ = 1;
  std::atomic<int> process_starts_ = 0;
};

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_ORT_RUNNER_H_
