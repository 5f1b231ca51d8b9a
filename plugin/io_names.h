// The graph input and output names both converters (converter/ and
// converter2/) give a model, so the two pipelines name graph I/O alike.
#ifndef JAX2ONNX_PLUGIN_IO_NAMES_H_
#define JAX2ONNX_PLUGIN_IO_NAMES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::plugin {

struct IoNames {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

// The graph's input and output names: those given (the caller's, else the
// bundle's recorded `# input_names:`/`# output_names:`; an empty entry is
// not given), else the jaxpr's binders (`a`, `b`: what the program calls
// them), else `in_i`/`out_i` where a binder is no name of its own (a literal
// output, a var given out twice or an input given out) or would take a name
// already used. A given name used twice is an error.
absl::StatusOr<IoNames> ChooseIoNames(
    const jaxpr::ClosedJaxpr& main, const std::vector<std::string>& given_in,
    const std::vector<std::string>& given_out);

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_IO_NAMES_H_
