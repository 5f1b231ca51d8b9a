// Subcommands of the `jax2onnx` CLI. Each lives in its own cmd_*.cc file and
// receives the positional arguments left after gflags parsed the flags.
#ifndef JAX2ONNX_TOOLS_COMMANDS_H_
#define JAX2ONNX_TOOLS_COMMANDS_H_

#include <optional>
#include <string>
#include <vector>

namespace jax2onnx::cli {

// Exit codes of every command: 0 success, 1 failure (of the work: a FAIL,
// a conversion error), 2 usage (unknown flag or command, bad arguments).
// `corpus` and `parity` also exit 77 (ctest's "skipped") without ONNX
// Runtime.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// A flag a command accepts: the gflags name and, where the flag's global
// description does not fit this command, the help text shown for it.
struct FlagDoc {
  FlagDoc(const char* flag_name, const char* flag_help = nullptr)  // NOLINT
      : name(flag_name), help(flag_help) {}
  std::string name;
  const char* help;  // nullptr: the gflags description
};

struct Command {
  const char* name;
  const char* usage;           // "parse FILE..."
  const char* summary;         // one line for the command list
  const char* help;            // paragraph for `jax2onnx CMD --help`
  std::vector<FlagDoc> flags;  // the only flags this command accepts
  int (*run)(const std::vector<std::string>& args);
};

// --use_onnx_ir when given on the command line, else nullopt (the router's
// default applies). cmd_convert.cc.
std::optional<bool> UseOnnxIrFlag();

int RunParse(const std::vector<std::string>& args);          // cmd_parse.cc
int RunPrint(const std::vector<std::string>& args);          // cmd_parse.cc
int RunEval(const std::vector<std::string>& args);           // cmd_eval.cc
int RunConvert(const std::vector<std::string>& args);        // cmd_convert.cc
int RunCheck(const std::vector<std::string>& args);          // cmd_convert.cc
int RunPlugins(const std::vector<std::string>& args);        // cmd_convert.cc
int RunRandomize(const std::vector<std::string>& args);      // cmd_randomize.cc
int RunCorpus(const std::vector<std::string>& args);         // cmd_corpus.cc
int RunShadow(const std::vector<std::string>& args);         // cmd_shadow.cc
int RunParityCommand(const std::vector<std::string>& args);  // cmd_shadow.cc
int RunVerify(const std::vector<std::string>& args);  // cmd_verify.cc

}  // namespace jax2onnx::cli

#endif  // JAX2ONNX_TOOLS_COMMANDS_H_
