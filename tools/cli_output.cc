#include "tools/cli_output.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace jax2onnx::cli {
namespace {

Verbosity g_verbosity = Verbosity::kNormal;

}  // namespace

void SetVerbosity(Verbosity v) { g_verbosity = v; }
Verbosity GetVerbosity() { return g_verbosity; }

Progress::Progress(std::string label, int total, bool lines_when_piped)
    : label_(std::move(label)), total_(total) {
  const bool shown = !Quiet() && total > 1;
  const bool tty = isatty(fileno(stderr)) != 0;
  bar_ = shown && tty;
  lines_ = shown && !tty && lines_when_piped;
}

Progress::~Progress() { Clear(); }

void Progress::Update(int done, const std::string& current) {
  done = std::clamp(done, 0, total_);
  if (bar_) {
    constexpr int kWidth = 30;
    constexpr size_t kNameWidth = 40;
    const int filled = done * kWidth / total_;
    const std::string shown =
        current.size() > kNameWidth
            ? "..." + current.substr(current.size() - (kNameWidth - 3))
            : current;
    std::fprintf(stderr, "\r\033[K%s [%s%s] %d/%d %s", label_.c_str(),
                 std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '.').c_str(), done, total_,
                 shown.c_str());
    std::fflush(stderr);
    drawn_ = true;
  } else if (lines_) {
    const int tenth = done * 10 / total_;
    if (tenth != last_tenth_) {
      last_tenth_ = tenth;
      std::fprintf(stderr, "%s: %d/%d\n", label_.c_str(), done, total_);
    }
  }
}

void Progress::Clear() {
  if (!drawn_) return;
  std::fflush(stdout);
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace jax2onnx::cli
