// Measuring one conversion of a generated program (bench/jaxpr_programs.h),
// shared by the complexity suite (bench/complexity_bench.cc) and its ctest
// subset (bench/complexity_test.cc): the configurations (legacy pipeline,
// IR pipeline at --optimize=0/1/2), one parse + convert + serialize timed
// in thread CPU seconds, and the same in a forked child with a CPU-time
// limit, so an exponential case or a stack overflow is reported instead of
// stopping the caller.
#ifndef JAX2ONNX_BENCH_COMPLEXITY_MEASURE_H_
#define JAX2ONNX_BENCH_COMPLEXITY_MEASURE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/convert_internal.h"
#include "bench/jaxpr_programs.h"

namespace jax2onnx::bench {

struct Config {
  const char* name;  // legacy, ir0, ir1, ir2
  api::Pipeline pipeline;
  int optimize;
};

// legacy, ir0, ir1, ir2, in that order.
const std::vector<Config>& AllConfigs();
// The configuration called `name`, or nullptr.
const Config* FindConfig(absl::string_view name);

// CPU seconds of the calling thread (the conversion is single-threaded).
double ThreadCpuSeconds();

// Parses, converts and serializes `g` (registering the lowerings first);
// the thread CPU seconds it took, or the error. The serialized model goes
// to `bytes` when given.
absl::StatusOr<double> ConvertOnce(const Generated& g, const Config& config,
                                   std::string* bytes = nullptr);

// The fastest of `repeat` ConvertOnce calls in a forked child limited to
// `limit_s` CPU seconds. Returns "" and sets `*seconds`, or says why there
// is no time: "> N s", "crash (signal N)", "error ...". The first
// conversion's model is written to `write_path` when it is not empty.
std::string MeasureInChild(const Generated& g, const Config& config,
                           int limit_s, int repeat,
                           const std::string& write_path, double* seconds);

}  // namespace jax2onnx::bench

#endif  // JAX2ONNX_BENCH_COMPLEXITY_MEASURE_H_
