// Protections every command that writes a file shares (convert's model and
// sidecar, eval --out, randomize, parity, ...):
//   * CheckOutputReplaceable refuses an output path that is a directory, an
//     existing non-regular file (FIFO, device, socket) or one of the
//     command's inputs (same device and inode, so links and `./x` spellings
//     are caught too);
//   * temporaries are registered while they exist, and the handlers that
//     InstallSignalCleanup sets for SIGINT, SIGTERM, SIGHUP and SIGQUIT
//     remove them (and an uncommitted sidecar) before the process dies of
//     the signal with its default action, so the shell sees 128 + signal.
#ifndef JAX2ONNX_JAXPR_IO_OUTPUT_GUARD_H_
#define JAX2ONNX_JAXPR_IO_OUTPUT_GUARD_H_

#include <signal.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace jax2onnx::jaxpr {

// OK when `path` is absent or a regular file that is none of `inputs`
// (empty entries and inputs that do not exist are skipped). `what` names the
// output in the message ("output", "the sidecar").
absl::Status CheckOutputReplaceable(const std::string& path, const char* what,
                                    const std::vector<std::string>& inputs);

// Marks `path` for removal should the process be killed by one of the
// handled signals. At most kMaxCleanupPaths at once; past that the path is
// simply not tracked. Async-signal-safe removal: the handler only unlinks.
inline constexpr int kMaxCleanupPaths = 64;
void RegisterCleanupPath(const std::string& path);
// Forgets `path` (after its rename or removal). No-op when not registered.
void ForgetCleanupPath(const std::string& path);

// While alive, the calling thread holds SIGINT, SIGTERM, SIGHUP and SIGQUIT
// pending (pthread_sigmask), so a step and its (un)registration happen as
// one for the cleanup handlers; the previous mask returns on destruction and
// a held signal is then handled. The CLI writes from its main thread.
class DeferCleanupSignals {
 public:
  DeferCleanupSignals();
  ~DeferCleanupSignals();
  DeferCleanupSignals(const DeferCleanupSignals&) = delete;
  DeferCleanupSignals& operator=(const DeferCleanupSignals&) = delete;

 private:
  sigset_t previous_;
};

// Installs the handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT (except
// those the process inherited as ignored). Called by the CLI's main; a
// library user keeps its own signal policy unless it calls this.
void InstallSignalCleanup();

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_IO_OUTPUT_GUARD_H_
