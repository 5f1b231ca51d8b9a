// What every command shares about output: the -q/-v verbosity level and one
// progress display for long runs (a bar on a terminal, nothing or a line per
// tenth on a pipe), so that stdout carries only results.
#ifndef JAX2ONNX_TOOLS_CLI_OUTPUT_H_
#define JAX2ONNX_TOOLS_CLI_OUTPUT_H_

#include <string>

namespace jax2onnx::cli {

// -q: only errors and failures (plus the document a command was asked for:
// --json, `print`, eval's values); -v: more detail (pipelines, timings).
enum class Verbosity { kQuiet = 0, kNormal = 1, kVerbose = 2 };

void SetVerbosity(Verbosity v);
Verbosity GetVerbosity();
inline bool Quiet() { return GetVerbosity() == Verbosity::kQuiet; }
inline bool Verbose() { return GetVerbosity() == Verbosity::kVerbose; }

// Progress over `total` items on stderr. On a terminal (isatty(stderr)) a
// bar redrawn in place; on a pipe nothing, or with `lines_when_piped` one
// `LABEL: i/N` line per tenth. Nothing under -q or for a single item. Call
// Clear() before printing a result line so the bar never mixes with it.
class Progress {
 public:
  Progress(std::string label, int total, bool lines_when_piped = false);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` items finished, `current` is being worked on.
  void Update(int done, const std::string& current);
  void Clear();

 private:
  std::string label_;
  int total_;
  bool bar_;
  bool lines_;
  bool drawn_ = false;
  int last_tenth_ = -1;
};

}  // namespace jax2onnx::cli

#endif  // JAX2ONNX_TOOLS_CLI_OUTPUT_H_
