#include "jaxpr/io/output_guard.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace jax2onnx::jaxpr {
namespace {

// A fixed table (no allocation, no locks) so the signal handler can read it:
// a slot's state goes kFree -> kFilling (owned by one registering thread)
// -> kArmed; the handler unlinks armed slots only.
enum SlotState : int { kFree = 0, kFilling = 1, kArmed = 2 };
constexpr size_t kPathCapacity = 4096;
struct CleanupSlot {
  std::atomic<int> state{kFree};
  char path[kPathCapacity];
};
CleanupSlot g_slots[kMaxCleanupPaths];

void RemoveRegisteredAndReraise(int sig) {
  for (CleanupSlot& slot : g_slots) {
    if (slot.state.load(std::memory_order_acquire) == kArmed) {
      ::unlink(slot.path);
    }
  }
  // Die of the signal itself, as if unhandled (exit status 128 + sig).
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

absl::Status CheckOutputReplaceable(const std::string& path, const char* what,
                                    const std::vector<std::string>& inputs) {
  struct stat target;
  if (::stat(path.c_str(), &target) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot write ", what, " '", path, "': ", std::strerror(errno)));
  }
  if (S_ISDIR(target.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot write ", what, " '", path, "': it is a directory"));
  }
  if (!S_ISREG(target.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("refusing to replace ", what, " '", path,
                     "': it exists and is not a regular file"));
  }
  for (const std::string& input : inputs) {
    struct stat in;
    if (input.empty() || ::stat(input.c_str(), &in) != 0) continue;
    if (in.st_dev == target.st_dev && in.st_ino == target.st_ino) {
      return absl::InvalidArgumentError(
          absl::StrCat("refusing to write ", what, " '", path,
                       "': it is the input '", input, "'"));
    }
  }
  return absl::OkStatus();
}

void RegisterCleanupPath(const std::string& path) {
  if (path.empty() || path.size() >= kPathCapacity) return;
  for (CleanupSlot& slot : g_slots) {
    int expected = kFree;
    if (!slot.state.compare_exchange_strong(expected, kFilling,
                                            std::memory_order_acq_rel)) {
      continue;
    }
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.state.store(kArmed, std::memory_order_release);
    return;
  }
}

void ForgetCleanupPath(const std::string& path) {
  for (CleanupSlot& slot : g_slots) {
    if (slot.state.load(std::memory_order_acquire) != kArmed) continue;
    if (std::strcmp(slot.path, path.c_str()) != 0) continue;
    int expected = kArmed;
    if (slot.state.compare_exchange_strong(expected, kFree,
                                           std::memory_order_acq_rel)) {
      return;
    }
  }
}

DeferCleanupSignals::DeferCleanupSignals() {
  sigset_t held;
  sigemptyset(&held);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&held, sig);
  ::pthread_sigmask(SIG_BLOCK, &held, &previous_);
}

DeferCleanupSignals::~DeferCleanupSignals() {
  ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void InstallSignalCleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction old_action;
    if (::sigaction(sig, nullptr, &old_action) == 0 &&
        old_action.sa_handler == SIG_IGN) {
      continue;  // e.g. nohup: keep ignoring
    }
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = RemoveRegisteredAndReraise;
    sigemptyset(&action.sa_mask);
    for (int other : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
      sigaddset(&action.sa_mask, other);
    }
    action.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &action, nullptr);
  }
}

}  // namespace jax2onnx::jaxpr
