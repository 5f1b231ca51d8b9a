// libFuzzer target for the whole front of the converter: jaxpr text ->
// parse -> type check -> convert with both pipelines at opset 17 -> the ONNX
// checker with strict shape inference. Every stage may refuse the input
// with an error; what must never happen is a crash, a hang, unbounded
// memory, or a model that converts without error and fails the ONNX
// checker (a wrong model emitted as if correct: that aborts). Built and run
// by scripts/fuzz.sh; seed corpus: testdata/**/*.jaxpr.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "api/bundle_access.h"
#include "api/convert_internal.h"
#include "api/corpus.h"
#include "api/router.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/typecheck/typecheck.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jax2onnx;
  static const bool registered = [] {
    api::RegisterAllLowerings();
    return true;
  }();
  (void)registered;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto bundle = jaxpr::BundleFromParts("fuzz", text, "fuzz.jaxpr", {});
  if (!bundle.ok()) return 0;
  if (!jaxpr::TypeCheckFile(bundle->file).ok()) return 0;
  for (api::Pipeline pipeline : {api::Pipeline::kLegacy, api::Pipeline::kIr}) {
    ConvertOptions options;
    options.opset = 17;
    options.read_environment = false;
    auto model = api::ConvertWithPipeline(pipeline, *bundle, options);
    if (!model.ok()) continue;
    absl::Status checked = api::ValidateWithOnnxChecker(*model);
    if (!checked.ok()) {
      std::fprintf(stderr, "[%s] converted model fails the ONNX checker: %s\n",
                   api::PipelineName(pipeline),
                   std::string(checked.message()).c_str());
      std::abort();
    }
  }
  return 0;
}
