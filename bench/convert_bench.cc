// End-to-end conversion throughput (parse + lower + serialize) of generated
// jaxprs through each pipeline: a deep MLP and a transformer-like stack,
// each at ~10k and ~100k equations, to show conversion is linear (equal
// equations/s at both sizes). Weights are constvars supplied as in-memory
// consts (what an npz provides), so weight copying is part of the cost.
// The generators are in bench/jaxpr_programs.cc; bench/complexity_bench.cc
// runs the whole complexity suite. docs/performance.md keeps the numbers.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/convert_internal.h"
#include "bench/jaxpr_programs.h"
#include "benchmark/benchmark.h"
#include "glog/logging.h"
#include "ir/serde.h"
#include "jaxpr/text/parser.h"
#include "plugin/registry.h"

namespace jax2onnx::api {
namespace {

using bench::DeepMlp;
using bench::Generated;
using bench::TransformerStack;

// Primitives of `g` that `pipeline` cannot lower (empty: all registered).
std::vector<std::string> Missing(const Generated& g, Pipeline pipeline) {
  RegisterAllLowerings();
  std::vector<std::string> missing;
  for (const std::string& p : g.primitives) {
    const plugin::PrimitiveEntry* e = plugin::Registry::Global().Find(p);
    if (e == nullptr ||
        (pipeline == Pipeline::kIr ? e->ir == nullptr : e->legacy == nullptr)) {
      missing.push_back(p);
    }
  }
  return missing;
}

void BM_Convert(benchmark::State& state, Generated (*generate)(int),
                Pipeline pipeline) {
  const Generated g = generate(static_cast<int>(state.range(0)));
  const std::vector<std::string> missing = Missing(g, pipeline);
  if (!missing.empty()) {
    state.SkipWithError(
        absl::StrCat("unregistered: ", absl::StrJoin(missing, " ")).c_str());
    for (auto _ : state) {
    }
    return;
  }
  // The library's defaults, as `jax2onnx convert` uses them: on the IR
  // pipeline that is --optimize=2 (every generic pass and the fusions),
  // reported as the `optimize` counter.
  const ConvertOptions options;
  Bundle bundle;
  bundle.name = "bench";
  bundle.consts = g.consts;
  size_t model_bytes = 0;
  // Wall time per stage, to see which one grows faster than linearly.
  double parse_s = 0, lower_s = 0, serialize_s = 0;
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  for (auto _ : state) {
    const auto t0 = Clock::now();
    auto file = jaxpr::ParseJaxprText(g.text, "bench");
    CHECK(file.ok()) << file.status();
    bundle.file = *std::move(file);
    const auto t1 = Clock::now();
    auto model = ConvertWithPipeline(pipeline, bundle, options);
    CHECK(model.ok()) << model.status();
    const auto t2 = Clock::now();
    const std::string bytes = ir::SerializeDeterministic(*model);
    const auto t3 = Clock::now();
    model_bytes = bytes.size();
    benchmark::DoNotOptimize(bytes.data());
    parse_s += seconds(t0, t1);
    lower_s += seconds(t1, t2);
    serialize_s += seconds(t2, t3);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["parse_ms"] = 1e3 * parse_s / n;
  state.counters["lower_ms"] = 1e3 * lower_s / n;
  state.counters["serialize_ms"] = 1e3 * serialize_s / n;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(g.text.size()));
  state.counters["eqns"] = g.num_eqns;
  if (pipeline == Pipeline::kIr) state.counters["optimize"] = options.optimize;
  state.counters["eqns/s"] = benchmark::Counter(
      g.num_eqns, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["model_MB"] = static_cast<double>(model_bytes) / 1e6;
  state.counters["model_MB/s"] =
      benchmark::Counter(static_cast<double>(model_bytes) / 1e6,
                         benchmark::Counter::kIsIterationInvariantRate);
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->Arg(10000)->Arg(30000)->Arg(100000)->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(BM_Convert, mlp_legacy, &DeepMlp, Pipeline::kLegacy)
    ->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Convert, mlp_ir, &DeepMlp, Pipeline::kIr)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Convert, transformer_legacy, &TransformerStack,
                  Pipeline::kLegacy)
    ->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Convert, transformer_ir, &TransformerStack, Pipeline::kIr)
    ->Apply(Sizes);

}  // namespace
}  // namespace jax2onnx::api

BENCHMARK_MAIN();
