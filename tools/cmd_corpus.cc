// `corpus`: runs bundle trees through one pipeline with the corpus runner
// (api/corpus.h): markers, expect_graph, f64 and opset-17 variants. The
// corpus ctests call it; exit code 77 means "skipped" (ctest
// SKIP_RETURN_CODE), used when ONNX Runtime or the vectors are missing
// outside CI.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "api/corpus.h"
#include "api/router.h"
#include "gflags/gflags.h"
#include "tools/cli_output.h"
#include "tools/commands.h"

DECLARE_int32(opset);
DECLARE_uint64(seed);
DEFINE_string(pipeline, "",
              "corpus: legacy or ir; empty routes like convert "
              "(JAX2ONNX_USE_ONNX_IR > --use_onnx_ir > default).");
DEFINE_bool(also_opset17, false,
            "corpus: also run every bundle converted at opset 17 (with "
            "onnx::checker, strict shape inference with data propagation, "
            "and every node output typed), as NAME[opset17].");
DEFINE_bool(f64, true,
            "corpus: add NAME[f64] variants of all-f32 bundles without npz.");
DEFINE_bool(also_bf16, false,
            "corpus: add NAME[bf16] variants of bundles with an f32 type "
            "(every f32 promoted to bf16, npz arrays rounded, bf16 "
            "tolerances).");
DEFINE_bool(special_values, false,
            "corpus: generated inputs cycle through NaN, +-inf, +-0, "
            "subnormals, the largest magnitudes and the integer extremes "
            "instead of random values.");
DEFINE_string(root, "",
              "corpus: case names are relative to this directory (default: "
              "the first argument when it is a directory).");
DEFINE_string(expected_failures, "",
              "corpus: file of `NAME reason...` lines: cases expected to fail "
              "(non-strict xfail) for bundles that cannot carry markers.");
DEFINE_string(rank_unknown_allowance, "",
              "corpus: file of `COUNT NAME` lines: how many node outputs of "
              "opset-17 case NAME may keep an unknown rank after strict "
              "shape inference with data propagation; a case with more (or "
              "an unlisted case with any) fails at the `untyped` stage. "
              "Without it ranks are not checked; element types always are.");
DEFINE_string(write_rank_unknown, "",
              "corpus: write the `COUNT NAME` line of every opset-17 case "
              "with node outputs of unknown rank to this file (the "
              "--rank_unknown_allowance format).");
DEFINE_bool(missing_ok, false,
            "corpus: a missing path argument skips the run (exit 77) "
            "instead of failing.");

namespace jax2onnx::cli {
namespace {

constexpr int kSkipExitCode = 77;

bool InCi() {
  const char* ci = std::getenv("CI");
  if (ci == nullptr) return false;
  std::string v = absl::AsciiStrToLower(absl::StripAsciiWhitespace(ci));
  return v == "true" || v == "1" || v == "yes" || v == "on";
}

bool ReadExpectedFailures(const std::string& path,
                          std::map<std::string, std::string>* out) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr,
                 "jax2onnx corpus: cannot read --expected_failures %s\n",
                 path.c_str());
    return false;
  }
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view l = absl::StripAsciiWhitespace(line);
    if (l.empty() || absl::StartsWith(l, "#")) continue;
    const size_t space = l.find_first_of(" \t");
    const std::string name(l.substr(0, space));
    const std::string reason(
        space == absl::string_view::npos
            ? "listed in " + path
            : std::string(absl::StripAsciiWhitespace(l.substr(space))));
    (*out)[name] = reason;
  }
  return true;
}

}  // namespace

int RunCorpus(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fprintf(stderr,
                 "jax2onnx corpus: usage: jax2onnx corpus DIR_OR_BUNDLE... "
                 "[--pipeline=legacy|ir]\n");
    return kExitUsage;
  }
  for (const std::string& arg : args) {
    std::error_code ec;
    if (!std::filesystem::exists(arg, ec) && FLAGS_missing_ok) {
      std::printf("SKIP: %s does not exist (--missing_ok)\n", arg.c_str());
      return kSkipExitCode;
    }
  }
  api::CorpusOptions options;
  if (FLAGS_pipeline == "legacy") {
    options.pipeline = api::Pipeline::kLegacy;
  } else if (FLAGS_pipeline == "ir") {
    options.pipeline = api::Pipeline::kIr;
  } else if (FLAGS_pipeline.empty()) {
    auto routed =
        api::ResolvePipelineFromEnvironment(std::nullopt, UseOnnxIrFlag());
    if (!routed.ok()) {
      std::fprintf(stderr, "jax2onnx corpus: %s\n",
                   std::string(routed.status().message()).c_str());
      return 2;
    }
    options.pipeline = *routed;
  } else {
    std::fprintf(stderr,
                 "jax2onnx corpus: --pipeline must be legacy or ir, not '%s'\n",
                 FLAGS_pipeline.c_str());
    return 2;
  }
  options.opset = FLAGS_opset;
  options.seed = FLAGS_seed;
  options.special_values = FLAGS_special_values;
  options.also_opset17 = FLAGS_also_opset17;
  options.f64_variants = FLAGS_f64;
  options.bf16_variants = FLAGS_also_bf16;
  options.display_root = FLAGS_root;
  std::error_code ec;
  if (options.display_root.empty() &&
      std::filesystem::is_directory(args[0], ec)) {
    options.display_root = args[0];
  }
  if (!FLAGS_expected_failures.empty() &&
      !ReadExpectedFailures(FLAGS_expected_failures,
                            &options.expected_failures)) {
    return 2;
  }
  if (!FLAGS_rank_unknown_allowance.empty()) {
    auto allowed = api::ReadRankUnknownAllowance(FLAGS_rank_unknown_allowance);
    if (!allowed.ok()) {
      std::fprintf(stderr, "jax2onnx corpus: --rank_unknown_allowance: %s\n",
                   std::string(allowed.status().message()).c_str());
      return 2;
    }
    options.rank_unknown_allowed = *std::move(allowed);
  }
  auto bundles = api::FindBundles(args);
  if (!bundles.ok()) {
    std::fprintf(stderr, "jax2onnx corpus: %s\n",
                 std::string(bundles.status().message()).c_str());
    return 2;
  }
  if (bundles->empty()) {
    std::fprintf(stderr, "jax2onnx corpus: no .jaxpr bundle found\n");
    return 1;
  }
  api::OrtRunner& runner = api::OrtRunner::Shared();
  std::string reason;
  if (!runner.IsAvailable(&reason)) {
    if (InCi()) {
      std::printf("FAIL: ONNX Runtime is unavailable in CI: %s\n",
                  reason.c_str());
      return 1;
    }
    std::printf(
        "SKIP: ONNX Runtime is unavailable (set CI=true to fail "
        "instead): %s\n",
        reason.c_str());
    return kSkipExitCode;
  }
  if (!Quiet()) {
    std::printf("corpus: %zu bundles through the %s pipeline (opset %d%s)\n",
                bundles->size(), api::PipelineName(options.pipeline),
                options.opset, options.also_opset17 ? " and 17" : "");
  }
  Progress progress("corpus", static_cast<int>(bundles->size()));
  options.progress = [&](int done, int, const std::string& path) {
    progress.Update(done, path);
  };
  options.on_case = [&](const api::CaseResult& r) {
    progress.Clear();
    // -q keeps what needs attention: failures and unexpected passes.
    if (Quiet() && r.outcome != api::Outcome::kFail &&
        r.outcome != api::Outcome::kXpass) {
      return;
    }
    std::printf("%s\n", api::CaseLine(r, options.pipeline).c_str());
    std::fflush(stdout);
  };
  api::CorpusSummary summary = api::RunCorpus(*bundles, options, runner);
  progress.Clear();
  if (!FLAGS_write_rank_unknown.empty()) {
    std::ofstream out(FLAGS_write_rank_unknown);
    out << "# jax2onnx corpus --write_rank_unknown ("
        << api::PipelineName(options.pipeline) << "): COUNT NAME\n";
    for (const api::CaseResult& r : summary.cases) {
      if (r.rank_unknown > 0) out << r.rank_unknown << " " << r.name << "\n";
    }
    if (!out) {
      std::fprintf(stderr, "jax2onnx corpus: cannot write %s\n",
                   FLAGS_write_rank_unknown.c_str());
      return 2;
    }
  }
  if (!Quiet()) std::printf("%s\n", summary.Line().c_str());
  return summary.ok() ? kExitOk : kExitFailure;
}

}  // namespace jax2onnx::cli
