// Subcommands of the `jax2onnx` CLI. Each lives in its own cmd_*.cc file and
// receives the positional arguments left after gflags parsed the flags.
#ifndef JAX2ONNX_TOOLS_COMMANDS_H_
#define JAX2ONNX_TOOLS_COMMANDS_H_

#include <string>
#include <vector>

namespace jax2onnx::cli {

struct Command {
  const char* name;
  const char* usage;               // "parse FILE..."
  const char* summary;             // one line for the command list
  const char* help;                // paragraph for `jax2onnx CMD --help`
  std::vector<std::string> flags;  // gflags names this command reads
  int (*run)(const std::vector<std::string>& args);
};

int RunParse(const std::vector<std::string>& args);    // cmd_parse.cc
int RunPrint(const std::vector<std::string>& args);    // cmd_parse.cc
int RunEval(const std::vector<std::string>& args);     // cmd_eval.cc
int RunConvert(const std::vector<std::string>& args);  // cmd_convert.cc
int RunCheck(const std::vector<std::string>& args);    // cmd_convert.cc
int RunPlugins(const std::vector<std::string>& args);  // cmd_convert.cc
int RunRandomize(const std::vector<std::string>& args);  // cmd_randomize.cc
int RunCorpus(const std::vector<std::string>& args);   // cmd_corpus.cc
int RunShadow(const std::vector<std::string>& args);   // cmd_shadow.cc
int RunParityCommand(const std::vector<std::string>& args);  // cmd_shadow.cc
int RunVerify(const std::vector<std::string>& args);  // cmd_verify.cc

}  // namespace jax2onnx::cli

#endif  // JAX2ONNX_TOOLS_COMMANDS_H_
