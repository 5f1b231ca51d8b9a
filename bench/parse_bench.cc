// Parse (and print) throughput on generated jaxprs: a chain of N
// elementwise/param-carrying equations in JAX's printed layout
// (bench::ParseMix in bench/jaxpr_programs.h). The 10k and
// 100k cases show that parsing is linear (equal eqns/s).
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/jaxpr_programs.h"
#include "benchmark/benchmark.h"
#include "glog/logging.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/text/printer.h"
#include "stablehlo/mlir_parser.h"
#include "stablehlo/translate.h"

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

// The StableHLO counterpart of ParseMix: the same chain of operations in the
// MLIR text `jax.jit(f).lower(...).as_text()` prints (add, multiply by a
// constant, reduce_precision, transpose, tanh; a private function called
// every 100 ops; `loc(#locN)` on every op as JAX prints them). About 2.3x
// the bytes per operation of the jaxpr text, so bytes/s is the fair
// comparison (issue 26: at least the jaxpr parser's speed per byte).
std::string StablehloMix(int num_ops) {
  std::string body;
  std::string prev = "%arg0";
  for (int i = 0; i < num_ops; ++i) {
    const std::string out = absl::StrCat("%", i);
    switch (i % 5) {
      case 0:
        absl::StrAppend(&body, "    ", out, " = stablehlo.add ", prev,
                        ", %arg1 : tensor<8x16xf32> loc(#loc3)\n");
        break;
      case 1:
        absl::StrAppend(&body, "    %cst_", i,
                        " = stablehlo.constant dense<2.000000e+00> : "
                        "tensor<8x16xf32> loc(#loc4)\n    ",
                        out, " = stablehlo.multiply ", prev, ", %cst_", i,
                        " : tensor<8x16xf32> loc(#loc4)\n");
        break;
      case 2:
        absl::StrAppend(&body, "    ", out, " = stablehlo.reduce_precision ",
                        prev,
                        ", format = e8m7 : tensor<8x16xf32> loc(#loc5)\n");
        break;
      case 3:
        absl::StrAppend(&body, "    ", out, " = stablehlo.transpose ", prev,
                        ", dims = [0, 1] : (tensor<8x16xf32>) -> "
                        "tensor<8x16xf32> loc(#loc6)\n");
        break;
      default:
        if (i % 100 == 4) {
          absl::StrAppend(&body, "    ", out, " = call @inner(", prev,
                          ") : (tensor<8x16xf32>) -> tensor<8x16xf32> "
                          "loc(#loc7)\n");
        } else {
          absl::StrAppend(&body, "    ", out, " = stablehlo.tanh ", prev,
                          " : tensor<8x16xf32> loc(#loc7)\n");
        }
    }
    prev = out;
  }
  return absl::StrCat(
      "#loc = loc(unknown)\n#loc1 = loc(\"f.py\":3:0)\n"
      "module @jit_f attributes {mhlo.num_partitions = 1 : i32, "
      "mhlo.num_replicas = 1 : i32} {\n"
      "  func.func public @main(%arg0: tensor<8x16xf32> loc(\"a\"), %arg1: "
      "tensor<8x16xf32> loc(\"b\")) -> (tensor<8x16xf32> "
      "{jax.result_info = \"result\"}) {\n",
      body, "    return ", prev, " : tensor<8x16xf32> loc(#loc)\n  } loc(#loc)\n",
      "  func.func private @inner(%arg0: tensor<8x16xf32> loc(\"x\")) -> "
      "(tensor<8x16xf32>) {\n    %0 = stablehlo.tanh %arg0 : "
      "tensor<8x16xf32> loc(#loc7)\n    return %0 : tensor<8x16xf32> "
      "loc(#loc)\n  } loc(#loc)\n} loc(#loc)\n"
      "#loc3 = loc(\"jit(f)/add\"(#loc1))\n#loc4 = loc(\"jit(f)/mul\"(#loc1))\n"
      "#loc5 = loc(\"jit(f)/reduce_precision\"(#loc1))\n"
      "#loc6 = loc(\"jit(f)/transpose\"(#loc1))\n"
      "#loc7 = loc(\"jit(f)/tanh\"(#loc1))\n");
}

void BM_ParseStablehlo(benchmark::State& state) {
  const int num_ops = static_cast<int>(state.range(0));
  auto text = std::make_shared<const std::string>(StablehloMix(num_ops));
  for (auto _ : state) {
    auto file = stablehlo::ParseMlirText(text, "bench.mlir");
    CHECK(file.ok()) << file.status();
    benchmark::DoNotOptimize(file);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(text->size()));
  state.counters["ops/s"] =
      benchmark::Counter(static_cast<double>(num_ops) * state.iterations(),
                         benchmark::Counter::kIsRate);
  state.counters["bytes"] = static_cast<double>(text->size());
}
BENCHMARK(BM_ParseStablehlo)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// Parse + translation into the jaxpr data model (what `convert` runs before
// lowering, in place of the jaxpr parser).
void BM_ParseAndTranslateStablehlo(benchmark::State& state) {
  const int num_ops = static_cast<int>(state.range(0));
  const std::string text = StablehloMix(num_ops);
  for (auto _ : state) {
    auto prog = stablehlo::StablehloFromText(text, "bench.mlir");
    CHECK(prog.ok()) << prog.status();
    benchmark::DoNotOptimize(prog);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(text.size()));
  state.counters["ops/s"] =
      benchmark::Counter(static_cast<double>(num_ops) * state.iterations(),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ParseAndTranslateStablehlo)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace jax2onnx::jaxpr

BENCHMARK_MAIN();
