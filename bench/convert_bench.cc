// End-to-end conversion throughput (parse + lower + serialize) of generated
// jaxprs through each pipeline: a deep MLP and a transformer-like stack,
// each at ~10k and ~100k equations, to show conversion is linear (equal
// equations/s at both sizes). Weights are constvars supplied as in-memory
// consts (what an npz provides), so weight copying is part of the cost.
// docs/performance.md ("Conversion") keeps the numbers.
#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/convert_internal.h"
#include "benchmark/benchmark.h"
#include "glog/logging.h"
#include "ir/serde.h"
#include "jaxpr/text/parser.h"
#include "plugin/registry.h"

namespace jax2onnx::api {
namespace {

constexpr int kBatch = 8;
constexpr int kWidth = 16;

// Variable names in JAX's sequence: a..z, ba..zz, baa...
std::string VarName(int64_t n) {
  if (n < 26) return std::string(1, static_cast<char>('a' + n));
  std::string out;
  while (n > 0) {
    out.insert(out.begin(), static_cast<char>('a' + n % 26));
    n /= 26;
  }
  return out;
}

struct Generated {
  std::string text;
  int num_eqns = 0;
  std::vector<jaxpr::Array> consts;  // one per constvar, in order
  std::set<std::string> primitives;
};

// Emits equations in JAX's printed layout and tracks the constvars.
class Writer {
 public:
  std::string Const(std::vector<int64_t> shape) {
    const std::string name = VarName(next_++);
    std::vector<std::string> dims;
    for (int64_t d : shape) dims.push_back(absl::StrCat(d));
    constvars_.push_back(
        absl::StrCat(name, ":f32[", absl::StrJoin(dims, ","), "]"));
    jaxpr::Array a(jaxpr::DType::kF32, shape);
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      a.SetFromDouble(
          i, 0.01 * static_cast<double>((i * 7 + consts_.size()) % 13) - 0.06);
    }
    consts_.push_back(std::move(a));
    return name;
  }
  std::string Input(const std::string& type) {
    const std::string name = VarName(next_++);
    invars_.push_back(absl::StrCat(name, ":", type));
    return name;
  }
  // `type` like "f32[8,16]"; `rhs` is "prim[params] operands".
  std::string Eqn(const std::string& type, const std::string& primitive,
                  const std::string& params, const std::string& operands) {
    const std::string name = VarName(next_++);
    absl::StrAppend(&body_, "    ", name, ":", type, " = ", primitive,
                    params.empty() ? "" : "[", params,
                    params.empty() ? "" : "]", " ", operands, "\n");
    ++num_eqns_;
    primitives_.insert(primitive);
    return name;
  }
  Generated Finish(const std::string& result) {
    Generated g;
    g.text = absl::StrCat("{ lambda ", absl::StrJoin(constvars_, " "), "; ",
                          absl::StrJoin(invars_, " "), ". let\n", body_,
                          "  in (", result, ",) }\n");
    g.num_eqns = num_eqns_;
    g.consts = std::move(consts_);
    g.primitives = std::move(primitives_);
    return g;
  }

 private:
  int64_t next_ = 0;
  std::vector<std::string> constvars_, invars_;
  std::string body_;
  int num_eqns_ = 0;
  std::vector<jaxpr::Array> consts_;
  std::set<std::string> primitives_;
};

const std::string kMatrix = absl::StrCat("f32[", kBatch, ",", kWidth, "]");
const std::string kRow = absl::StrCat("f32[1,", kWidth, "]");
const std::string kColumn = absl::StrCat("f32[", kBatch, ",1]");
const std::string kVector = absl::StrCat("f32[", kBatch, "]");
const std::string kScores = absl::StrCat("f32[", kBatch, ",", kBatch, "]");
constexpr char kMatmul[] =
    "dimension_numbers=(([1], [0]), ([], [])) preferred_element_type=float32";

std::string Dense(Writer& w, const std::string& x, bool bias) {
  std::string h = w.Eqn(kMatrix, "dot_general", kMatmul,
                        absl::StrCat(x, " ", w.Const({kWidth, kWidth})));
  if (!bias) return h;
  const std::string b = w.Const({kWidth});
  const std::string row =
      w.Eqn(kRow, "broadcast_in_dim",
            absl::StrCat("broadcast_dimensions=(1,) shape=(1, ", kWidth,
                         ") sharding=None"),
            b);
  return w.Eqn(kMatrix, "add", "", absl::StrCat(h, " ", row));
}

// Layers of dot_general + bias (broadcast_in_dim, add) + tanh or logistic:
// four equations per layer.
Generated DeepMlp(int target_eqns) {
  Writer w;
  std::string x = w.Input(kMatrix);
  for (int layer = 0; layer * 4 < target_eqns; ++layer) {
    x = Dense(w, x, /*bias=*/true);
    x = w.Eqn(kMatrix, layer % 2 ? "logistic" : "tanh", "", x);
  }
  return w.Finish(x);
}

std::string BroadcastColumn(Writer& w, const std::string& v) {
  return w.Eqn(kColumn, "broadcast_in_dim",
               absl::StrCat("broadcast_dimensions=(0,) shape=(", kBatch,
                            ", 1) sharding=None"),
               v);
}

// Single-head attention (softmax by reduce_max/exp/reduce_sum/div), a
// residual, mean-centering, a SiLU MLP and a reshape round trip: 27
// equations per block.
Generated TransformerStack(int target_eqns) {
  Writer w;
  std::string x = w.Input(kMatrix);
  const std::string reduce_row = "axes=(1,) out_sharding=None";
  for (int block = 0; block * 27 < target_eqns; ++block) {
    const std::string q = Dense(w, x, false);
    const std::string k = Dense(w, x, false);
    const std::string v = Dense(w, x, false);
    std::string s = w.Eqn(kScores, "dot_general",
                          "dimension_numbers=(([1], [1]), ([], [])) "
                          "preferred_element_type=float32",
                          absl::StrCat(q, " ", k));
    s = w.Eqn(kScores, "mul", "", absl::StrCat(s, " 0.25:f32[]"));
    const std::string m = w.Eqn(kVector, "reduce_max", reduce_row, s);
    s = w.Eqn(kScores, "sub", "", absl::StrCat(s, " ", BroadcastColumn(w, m)));
    s = w.Eqn(kScores, "exp", "", s);
    const std::string z = w.Eqn(kVector, "reduce_sum", reduce_row, s);
    s = w.Eqn(kScores, "div", "", absl::StrCat(s, " ", BroadcastColumn(w, z)));
    std::string a =
        w.Eqn(kMatrix, "dot_general", kMatmul, absl::StrCat(s, " ", v));
    x = w.Eqn(kMatrix, "add", "", absl::StrCat(x, " ", a));
    std::string mean = w.Eqn(kVector, "reduce_sum", reduce_row, x);
    mean =
        w.Eqn(kVector, "div", "", absl::StrCat(mean, " ", kWidth, ".0:f32[]"));
    x = w.Eqn(kMatrix, "sub", "",
              absl::StrCat(x, " ", BroadcastColumn(w, mean)));
    std::string h = Dense(w, x, true);
    const std::string g = w.Eqn(kMatrix, "logistic", "", h);
    h = w.Eqn(kMatrix, "mul", "", absl::StrCat(h, " ", g));
    h = Dense(w, h, false);
    x = w.Eqn(kMatrix, "add", "", absl::StrCat(x, " ", h));
    const std::string flat =
        w.Eqn(absl::StrCat("f32[", kBatch * kWidth, "]"), "reshape",
              absl::StrCat("dimensions=None new_sizes=(", kBatch * kWidth,
                           ",) sharding=None"),
              x);
    x = w.Eqn(kMatrix, "reshape",
              absl::StrCat("dimensions=None new_sizes=(", kBatch, ", ", kWidth,
                           ") sharding=None"),
              flat);
  }
  return w.Finish(x);
}

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
