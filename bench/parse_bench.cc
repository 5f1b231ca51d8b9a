// Parse (and print) throughput on generated jaxprs: a chain of N
// elementwise/param-carrying equations in JAX's printed layout. The 10k and
// 100k cases show that parsing is linear (equal eqns/s).
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "glog/logging.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/text/printer.h"

namespace jax2onnx::jaxpr {
namespace {

// Variable names in JAX's sequence: a..z, ba..zz, baa.. (no leading 'a').
std::string VarName(int64_t n) {
  if (n < 26) return std::string(1, static_cast<char>('a' + n));
  std::string out;
  while (n > 0) {
    out.insert(out.begin(), static_cast<char>('a' + n % 26));
    n /= 26;
  }
  return out;
}

// A realistic mix: binary ops, a typed literal, params with tuples, and a
// nested jit every 100 equations.
std::string GenerateJaxpr(int num_eqns) {
  std::string text = "{ lambda ; a:f32[8,16] b:f32[8,16]. let\n";
  int64_t next = 2;
  std::string prev = "a";
  for (int i = 0; i < num_eqns; ++i) {
    const std::string out = VarName(next++);
    switch (i % 5) {
      case 0:
        absl::StrAppend(&text, "    ", out, ":f32[8,16] = add ", prev, " b\n");
        break;
      case 1:
        absl::StrAppend(&text, "    ", out, ":f32[8,16] = mul ", prev,
                        " 2.0:f32[]\n");
        break;
      case 2:
        absl::StrAppend(&text, "    ", out,
                        ":f32[8,16] = reduce_precision[exponent_bits=8 "
                        "mantissa_bits=7] ",
                        prev, "\n");
        break;
      case 3:
        absl::StrAppend(&text, "    ", out,
                        ":f32[8,16] = transpose[permutation=(0, 1)] ", prev,
                        "\n");
        break;
      default:
        if (i % 100 == 4) {
          absl::StrAppend(&text, "    ", out,
                          ":f32[8,16] = jit[\n      name=inner\n      "
                          "jaxpr={ lambda ; a:f32[8,16]. let b:f32[8,16] = "
                          "tanh a in (b,) }\n    ] ",
                          prev, "\n");
        } else {
          absl::StrAppend(&text, "    ", out, ":f32[8,16] = tanh ", prev, "\n");
        }
        break;
    }
    prev = out;
  }
  absl::StrAppend(&text, "  in (", prev, ",) }\n");
  return text;
}

void BM_Parse(benchmark::State& state) {
  const int num_eqns = static_cast<int>(state.range(0));
  const std::string text = GenerateJaxpr(num_eqns);
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
  auto file = ParseJaxprText(GenerateJaxpr(num_eqns), "bench");
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
