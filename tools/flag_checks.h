// Checks of flag values before a command runs: every bad value is a usage
// error (exit 2) whose message names the command and the flag, whichever
// command took the flag; options that cannot take effect together (e.g.
// --fuse_attention below opset 23) are refused the same way.
#ifndef JAX2ONNX_TOOLS_FLAG_CHECKS_H_
#define JAX2ONNX_TOOLS_FLAG_CHECKS_H_

#include "tools/commands.h"

namespace jax2onnx::cli {

// Checks the values of the flags `command` accepts. Returns true when all
// are good; else prints `jax2onnx COMMAND: --flag ...` on stderr and returns
// false (the caller exits kExitUsage).
bool CheckFlagValues(const Command& command);

}  // namespace jax2onnx::cli

#endif  // JAX2ONNX_TOOLS_FLAG_CHECKS_H_
