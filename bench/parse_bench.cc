// Parse (and print) throughput on generated jaxprs: a chain of N
// elementwise/param-carrying equations in JAX's printed layout
// (bench::ParseMix in bench/jaxpr_programs.h). The 10k and
// 100k cases show that parsing is linear (equal eqns/s).
#include <string>

#include "bench/jaxpr_programs.h"
#include "benchmark/benchmark.h"
#include "glog/logging.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/text/printer.h"

namespace jax2onnx::jaxpr {
namespace {

void BM_Parse(benchmark::State& state) {
  const int num_eqns = static_cast<int>(state.range(0));
  const std::string text = bench::ParseMix(num_eqns);
  for (auto _ : state) {
    auto file = ParseJaxprText(text, "bench");
    CHECK(file.ok()) << file.status();
    CHECK_EQ(file->main->eqns.size(), static_cast<size_t>(num_eqns));
    benchmark::DoNotOptimize(file);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(text.size()));
  state.counters["eqns/s"] =
      benchmark::Counter(static_cast<double>(num_eqns) * state.iterations(),
                         benchmark::Counter::kIsRate);
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_Parse)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_Print(benchmark::State& state) {
  const int num_eqns = static_cast<int>(state.range(0));
  auto file = ParseJaxprText(bench::ParseMix(num_eqns), "bench");
  CHECK(file.ok()) << file.status();
  int64_t bytes = 0;
  for (auto _ : state) {
    const std::string out = PrintJaxprFile(*file);
    bytes += static_cast<int64_t>(out.size());
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(bytes);
  state.counters["eqns/s"] =
      benchmark::Counter(static_cast<double>(num_eqns) * state.iterations(),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Print)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace jax2onnx::jaxpr

BENCHMARK_MAIN();
