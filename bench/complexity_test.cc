// The fast subset of the complexity suite (bench/complexity_bench.cc): every
// program shape converts at two sizes ten times apart through the legacy
// pipeline and the IR pipeline at --optimize=0/1/2 with the CPU time growing
// at most kMaxGrowth times (linear is ~10x; a quadratic pass gives ~100x),
// and the programs that used to overflow the stack or take exponential time
// convert: a 300k-deep add chain followed by div/mul at every level, and
// 10,000 `v = add v v` / 10,000 unrolled Newton steps. Time bounds are
// ratios, never absolute (docs/performance.md has the measured numbers).
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/convert_internal.h"
#include "bench/jaxpr_programs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/serde.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::bench {
namespace {

struct Config {
  const char* name;
  api::Pipeline pipeline;
  int optimize;
};

const Config kConfigs[] = {
    {"legacy", api::Pipeline::kLegacy, 0},
    {"ir0", api::Pipeline::kIr, 0},
    {"ir1", api::Pipeline::kIr, 1},
    {"ir2", api::Pipeline::kIr, 2},
};

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Parses, converts and serializes `g`; the thread CPU seconds it took.
double Convert(const Generated& g, const Config& config) {
  api::RegisterAllLowerings();
  const double t0 = ThreadCpuSeconds();
  auto file = jaxpr::ParseJaxprText(g.text, "complexity");
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return 0;
  jaxpr::Bundle bundle;
  bundle.name = "complexity";
  bundle.consts = g.consts;
  bundle.file = *std::move(file);
  ConvertOptions options;
  options.optimize = config.optimize;
  auto model = api::ConvertWithPipeline(config.pipeline, bundle, options);
  EXPECT_TRUE(model.ok()) << config.name << ": " << model.status();
  if (!model.ok()) return 0;
  const std::string bytes = ir::SerializeDeterministic(*model);
  EXPECT_GT(bytes.size(), 0u);
  return ThreadCpuSeconds() - t0;
}

double FastestOf(int runs, const Generated& g, const Config& config) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) best = std::min(best, Convert(g, config));
  return best;
}

// Ten times the equations may take at most this many times the CPU time.
// Linear conversion measures 7-12x here (fixed costs weigh more in the
// small program); the bound leaves room for a loaded machine, and anything
// quadratic (100x) or worse fails.
constexpr double kMaxGrowth = 30;
constexpr int kSmall = 2000;
constexpr int kLarge = 20000;

// Disabled in ctest: CPU-time ratios are noisy when ctest runs tests in
// parallel on a shared 2-core machine (nested_pjit and scan_body failed
// their 30x bound there once); run with --gtest_also_run_disabled_tests
// on a quiet machine, and see bench/complexity_bench for the measurements.
class GrowthTest : public testing::TestWithParam<const char*> {};

TEST_P(GrowthTest, DISABLED_TenTimesTheEquationsTakeAboutTenTimesTheTime) {
  const ProgramShape* shape = FindShape(GetParam());
  ASSERT_NE(shape, nullptr);
  const Generated small = shape->generate(kSmall);
  const Generated large = shape->generate(kLarge);
  ASSERT_GE(large.num_eqns, 9 * small.num_eqns);
  for (const Config& config : kConfigs) {
    Convert(small, config);  // warm up (registry, allocator)
    const double t_small = FastestOf(2, small, config);
    const double t_large = FastestOf(1, large, config);
    if (testing::Test::HasFailure()) return;
    const double growth = t_large / std::max(t_small, 1e-4);
    EXPECT_LE(growth, kMaxGrowth)
        << shape->name << " " << config.name << ": " << small.num_eqns
        << " equations took " << t_small << " s, " << large.num_eqns
        << " took " << t_large << " s";
  }
}

std::vector<const char*> ShapeNames() {
  std::vector<const char*> names;
  for (const ProgramShape& s : ComplexityShapes()) names.push_back(s.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GrowthTest, testing::ValuesIn(ShapeNames()),
    [](const testing::TestParamInfo<const char*>& info) {
      return std::string(info.param);
    });

// 300k scalar adds then div and mul: the fusion matchers' constant
// evaluation recursed along the chain (SIGSEGV at 80k). Every recursion
// whose depth grows with the program would crash here.
TEST(DeepChain, ThreeHundredThousandDeepAddChainConvertsAtEveryLevel) {
  const Generated g = DeepAddChain(300000);
  for (const Config& config : kConfigs) {
    SCOPED_TRACE(config.name);
    Convert(g, config);
  }
}

// 10,000 `v = add v v`: a value feeding both operands made the constant
// evaluation 2^depth (10 hours at 40).
TEST(Diamonds, TenThousandAddVVConvert) {
  const Generated g = AddDiamonds(10000);
  for (const Config& config : kConfigs) {
    SCOPED_TRACE(config.name);
    Convert(g, config);
  }
}

// 10,000 Newton steps x = x * (2 - a * x): x feeds two operands per step.
TEST(Diamonds, TenThousandNewtonStepsConvert) {
  const Generated g = NewtonReciprocal(10000);
  for (const Config& config : kConfigs) {
    SCOPED_TRACE(config.name);
    Convert(g, config);
  }
}

}  // namespace
}  // namespace jax2onnx::bench
