// `jax2onnx eval`: runs bundles through the reference interpreter, prints or
// saves the outputs, and with --compare checks them against expected_i. The
// conformance flags (--known_failures, --min_pass_rate, --must_pass_groups)
// turn a directory run into a pass/fail policy check for ctest.
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/bundle_access.h"
#include "gflags/gflags.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/io/compare.h"
#include "jaxpr/io/npy.h"
#include "jaxpr/io/output_guard.h"
#include "jaxpr/mesh.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/prng.h"
#include "tools/cli_output.h"
#include "tools/commands.h"

DECLARE_string(mesh);                  // tools/cmd_convert.cc
DECLARE_bool(threefry_partitionable);  // tools/cmd_convert.cc
DEFINE_string(inputs, "",
              "eval: .npz whose input_i entries replace the bundle's inputs "
              "(and whose expected_i, if any, replace its expected outputs).");
DEFINE_string(out, "",
              "eval: write the outputs as out_i to this .npz "
              "(one bundle only).");
DEFINE_bool(compare, false,
            "eval: compare outputs with expected_i using the bundle's "
            "tolerances; print PASS/FAIL per bundle.");
DEFINE_string(known_failures, "",
              "eval: file of `group/name.jaxpr: reason` lines listing bundles "
              "allowed to fail (prefix `strict ` to also fail when it "
              "passes). Enables the conformance policy.");
DEFINE_double(min_pass_rate, 0,
              "eval: fail unless at least this fraction of bundles passes "
              "(e.g. 0.98). Enables the conformance policy.");
DEFINE_string(must_pass_groups, "",
              "eval: comma-separated globs of bundle groups (parent folder "
              "names) in which every bundle must pass, listed or not.");
DEFINE_bool(isolate, false,
            "eval: run each bundle in a forked child so a crash or hang is "
            "reported as that bundle's failure.");
DEFINE_int32(timeout_s, 120,
             "eval: per-bundle time limit in seconds with --isolate.");

namespace jax2onnx::cli {
namespace {

namespace fs = std::filesystem;
using jaxpr::Array;
using jaxpr::Bundle;
using jaxpr::DType;

struct BundleRef {
  std::string path;     // NAME.jaxpr as found
  std::string display;  // what PASS/FAIL lines show
  std::string key;      // group/NAME.jaxpr, matched against known failures
  std::string group;    // parent folder name
};

struct Outcome {
  bool passed = false;
  std::string reason;  // one line
};

std::string FirstLine(absl::string_view text) {
  return std::string(text.substr(0, text.find('\n')));
}

// Expands the arguments into bundles; directories contribute every *.jaxpr
// below them, sorted.
absl::StatusOr<std::vector<BundleRef>> CollectBundles(
    const std::vector<std::string>& args) {
  std::vector<BundleRef> out;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> found;
      for (auto it = fs::recursive_directory_iterator(
               arg, fs::directory_options::follow_directory_symlink, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file(ec) &&
            (it->path().extension() == ".jaxpr" ||
             api::IsStablehloInput(it->path().string()))) {
          found.push_back(it->path());
        }
      }
      if (ec) {
        return absl::NotFoundError(
            absl::StrCat("cannot list ", arg, ": ", ec.message()));
      }
      std::sort(found.begin(), found.end());
      for (const fs::path& p : found) {
        const std::string rel = p.lexically_relative(arg).generic_string();
        out.push_back(
            {p.string(), rel, rel, p.parent_path().filename().string()});
      }
      continue;
    }
    std::string path = arg;
    if (absl::EndsWith(path, ".npz")) path.resize(path.size() - 4);
    if (!absl::EndsWith(path, ".jaxpr") && !api::IsStablehloInput(path)) {
      path += ".jaxpr";
    }
    if (!fs::is_regular_file(path, ec)) {
      return absl::NotFoundError(
          absl::StrCat(arg, " does not exist (no ", path, ")"));
    }
    const fs::path p(path);
    const std::string group =
        fs::absolute(p, ec).parent_path().filename().string();
    out.push_back(
        {path, arg, absl::StrCat(group, "/", p.filename().string()), group});
  }
  return out;
}

std::string FormatElement(const Array& a, int64_t i) {
  const DType d = a.dtype();
  if (d == DType::kBool) return a.GetAsInt64(i) ? "True" : "False";
  if (jaxpr::IsUnsignedInt(d)) return absl::StrCat(a.GetAsUInt64(i));
  if (jaxpr::IsSignedInt(d)) return absl::StrCat(a.GetAsInt64(i));
  if (d == DType::kC64 || d == DType::kC128) {
    std::complex<double> c =
        d == DType::kC64
            ? std::complex<double>(a.typed_data<float>()[2 * i],
                                   a.typed_data<float>()[2 * i + 1])
            : std::complex<double>(a.typed_data<double>()[2 * i],
                                   a.typed_data<double>()[2 * i + 1]);
    return absl::StrFormat("(%.9g%+.9gj)", c.real(), c.imag());
  }
  if (jaxpr::IsFloat(d) || jaxpr::IsNarrowFloat(d)) {
    return absl::StrFormat("%.9g", a.GetAsDouble(i));
  }
  if (jaxpr::IsNarrowInt(d)) return absl::StrCat(a.GetAsInt64(i));
  return "?";
}

void PrintOutputs(const std::vector<Array>& outputs) {
  constexpr int64_t kMaxShown = 32;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Array& a = outputs[i];
    std::vector<std::string> values;
    const int64_t n = a.num_elements();
    const bool printable =
        jaxpr::ItemSize(a.dtype()) > 0 &&
        a.num_bytes() == static_cast<size_t>(n) * jaxpr::ItemSize(a.dtype());
    for (int64_t k = 0; printable && k < std::min(n, kMaxShown); ++k) {
      values.push_back(FormatElement(a, k));
    }
    if (n > kMaxShown) values.push_back("...");
    std::printf("out_%zu: %s = [%s]\n", i, a.TypeString().c_str(),
                absl::StrJoin(values, ", ").c_str());
  }
}

// Loads, evaluates and (optionally) compares one bundle. `print` shows the
// outputs; `out_path` saves them.
Outcome RunBundle(const BundleRef& ref, const jaxpr::NamedArrays* inputs_npz,
                  bool print, const std::string& out_path) {
  Outcome outcome;
  auto bundle = api::LoadBundle(ref.path);
  if (!bundle.ok()) {
    outcome.reason = FirstLine(bundle.status().message());
    return outcome;
  }
  if (inputs_npz != nullptr) {
    if (auto s = jaxpr::SetBundleInputs(&*bundle, *inputs_npz, FLAGS_inputs);
        !s.ok()) {
      outcome.reason = FirstLine(s.message());
      return outcome;
    }
  }
  if (!bundle->has_inputs()) {
    outcome.reason = absl::StrCat(
        "no inputs: the bundle has no input_i (give --inputs F.npz)");
    return outcome;
  }
  if (FLAGS_compare && !bundle->has_expected()) {
    outcome.reason = "no expected_i to compare against";
    return outcome;
  }
  jaxpr::EvalOptions options;
  options.elided_literals = &bundle->literals;
  options.filename = bundle->file.path;
  auto partitionable =
      jaxpr::ThreefryModeOf(bundle->file, FLAGS_threefry_partitionable);
  if (!partitionable.ok()) {
    outcome.reason = std::string(partitionable.status().message());
    return outcome;
  }
  options.threefry_partitionable = *partitionable;
  // Validated before any bundle is read (RunEval).
  options.mesh_axis_sizes = jaxpr::ParseMeshAxisSizes(FLAGS_mesh)
                                .value_or(std::vector<jaxpr::MeshAxis>{});
  auto outputs =
      jaxpr::Evaluate(bundle->jaxpr(), bundle->consts, bundle->inputs, options);
  if (!outputs.ok()) {
    outcome.reason =
        absl::StrCat("eval error: ", FirstLine(outputs.status().message()));
    return outcome;
  }
  if (print) PrintOutputs(*outputs);
  if (!out_path.empty()) {
    jaxpr::NamedArrays named;
    for (size_t i = 0; i < outputs->size(); ++i) {
      named.emplace_back(absl::StrCat("out_", i), (*outputs)[i]);
    }
    if (auto s = jaxpr::WriteNpzFile(out_path, named); !s.ok()) {
      outcome.reason = FirstLine(s.message());
      return outcome;
    }
  }
  if (FLAGS_compare) {
    if (outputs->size() != bundle->expected.size()) {
      outcome.reason =
          absl::StrCat("produced ", outputs->size(), " outputs, expected ",
                       bundle->expected.size());
      return outcome;
    }
    std::vector<std::string> problems;
    for (size_t i = 0; i < outputs->size(); ++i) {
      const jaxpr::CompareResult r = jaxpr::CompareArrays(
          bundle->expected[i], (*outputs)[i], bundle->rtol, bundle->atol);
      if (!r.ok) problems.push_back(absl::StrCat("out_", i, ": ", r.Summary()));
    }
    if (!problems.empty()) {
      outcome.reason = absl::StrJoin(problems, "; ");
      return outcome;
    }
  }
  outcome.passed = true;
  return outcome;
}

// RunBundle in a forked child: a CHECK failure, crash or endless loop in a
// kernel fails this bundle only.
Outcome RunBundleIsolated(const BundleRef& ref,
                          const jaxpr::NamedArrays* inputs_npz, bool print,
                          const std::string& out_path) {
  int fds[2];
  if (pipe(fds) != 0) return {false, "cannot create a pipe"};
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {false, "cannot fork"};
  }
  if (pid == 0) {
    close(fds[0]);
    const Outcome o = RunBundle(ref, inputs_npz, print, out_path);
    std::fflush(stdout);  // _exit skips stdio flushing
    const std::string msg = (o.passed ? "P" : "F") + o.reason;
    size_t done = 0;
    while (done < msg.size()) {
      const ssize_t n = write(fds[1], msg.data() + done, msg.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(std::max(1, FLAGS_timeout_s));
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;
    msg.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (timed_out) {
    return {false, absl::StrCat("timed out after ", FLAGS_timeout_s, " s")};
  }
  if (WIFSIGNALED(status)) {
    return {false, absl::StrCat("crashed (signal ", WTERMSIG(status), ": ",
                                strsignal(WTERMSIG(status)), ")")};
  }
  if (msg.empty()) return {false, "child exited without a result"};
  return {msg[0] == 'P', msg.substr(1)};
}

struct KnownFailure {
  std::string reason;
  bool strict = false;
  int line = 0;
};

absl::StatusOr<std::map<std::string, KnownFailure>> ReadKnownFailures(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::map<std::string, KnownFailure> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    KnownFailure entry;
    entry.line = number;
    if (absl::ConsumePrefix(&text, "strict ")) {
      entry.strict = true;
      text = absl::StripLeadingAsciiWhitespace(text);
    }
    const size_t sep = text.find(".jaxpr:");
    if (sep == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", number, ": expected `group/name.jaxpr: reason`, got '",
          text, "'"));
    }
    const std::string key(text.substr(0, sep + 6));
    entry.reason =
        std::string(absl::StripAsciiWhitespace(text.substr(sep + 7)));
    if (entry.reason.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", number, ": ", key, " has no reason"));
    }
    if (!out.emplace(key, entry).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", number, ": ", key, " is listed twice"));
    }
  }
  return out;
}

bool InMustPassGroup(const std::string& group,
                     const std::vector<std::string>& patterns) {
  for (const std::string& p : patterns) {
    if (fnmatch(p.c_str(), group.c_str(), 0) == 0) return true;
  }
  return false;
}

// Applies the conformance policy; prints its findings and returns whether
// it holds.
bool CheckPolicy(const std::vector<BundleRef>& refs,
                 const std::vector<Outcome>& outcomes,
                 const std::map<std::string, KnownFailure>& known) {
  bool ok = true;
  const std::vector<std::string> groups =
      absl::StrSplit(FLAGS_must_pass_groups, ',', absl::SkipWhitespace());
  std::set<std::string> seen;
  int passed = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    const BundleRef& ref = refs[i];
    const Outcome& o = outcomes[i];
    seen.insert(ref.key);
    auto listed = known.find(ref.key);
    if (o.passed) {
      ++passed;
      if (listed != known.end()) {
        std::printf("policy: known failure now passes: %s%s\n", ref.key.c_str(),
                    listed->second.strict ? " (strict: remove it)" : "");
        if (listed->second.strict) ok = false;
      }
      continue;
    }
    if (InMustPassGroup(ref.group, groups)) {
      std::printf("policy: must-pass group '%s' has a failure: %s\n",
                  ref.group.c_str(), ref.key.c_str());
      ok = false;
    } else if (listed == known.end()) {
      std::printf("policy: failure not in known failures: %s\n",
                  ref.key.c_str());
      ok = false;
    }
  }
  for (const auto& [key, entry] : known) {
    if (!seen.count(key)) {
      std::printf("policy: known failure (line %d) names no bundle: %s\n",
                  entry.line, key.c_str());
    }
  }
  if (refs.empty()) {
    std::printf("policy: no bundles found\n");
    ok = false;
  } else {
    const double rate = static_cast<double>(passed) / refs.size();
    if (rate < FLAGS_min_pass_rate) {
      std::printf("policy: pass rate %.2f%% is below the required %.2f%%\n",
                  100 * rate, 100 * FLAGS_min_pass_rate);
      ok = false;
    } else {
      std::printf("policy: pass rate %.2f%% (required %.2f%%)\n", 100 * rate,
                  100 * FLAGS_min_pass_rate);
    }
  }
  std::printf("policy: %s\n", ok ? "OK" : "FAILED");
  return ok;
}

}  // namespace

int RunEval(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fprintf(
        stderr,
        "jax2onnx eval: no bundles given (see `jax2onnx eval --help`)\n");
    return 2;
  }
  if (auto mesh_sizes = jaxpr::ParseMeshAxisSizes(FLAGS_mesh);
      !mesh_sizes.ok()) {
    std::fprintf(stderr, "jax2onnx eval: %s\n",
                 std::string(mesh_sizes.status().message()).c_str());
    return 2;
  }
  auto refs = CollectBundles(args);
  if (!refs.ok()) {
    std::fprintf(stderr, "jax2onnx eval: %s\n",
                 std::string(refs.status().message()).c_str());
    return 2;
  }
  if (!FLAGS_out.empty() && refs->size() != 1) {
    std::fprintf(stderr,
                 "jax2onnx eval: --out needs exactly one bundle, got %zu\n",
                 refs->size());
    return 2;
  }
  if (!FLAGS_out.empty()) {
    // --out never replaces an input: the bundle's .jaxpr and .npz (which
    // hold its program, consts, inputs and expected outputs) and --inputs
    // are refused by inode, as are directories, FIFOs and devices. Checked
    // before evaluating, so a refused run writes nothing.
    const std::string& jaxpr_path = (*refs)[0].path;
    std::string npz_path = jaxpr_path;
    if (absl::EndsWith(npz_path, ".jaxpr")) {
      npz_path.resize(npz_path.size() - 6);
      npz_path += ".npz";
    }
    if (auto s = jaxpr::CheckOutputReplaceable(
            FLAGS_out, "--out", {jaxpr_path, npz_path, FLAGS_inputs});
        !s.ok()) {
      std::fprintf(stderr, "jax2onnx eval: %s\n",
                   std::string(s.message()).c_str());
      return 2;
    }
  }
  const bool policy = !FLAGS_known_failures.empty() ||
                      FLAGS_min_pass_rate > 0 ||
                      !FLAGS_must_pass_groups.empty();
  std::map<std::string, KnownFailure> known;
  if (!FLAGS_known_failures.empty()) {
    auto read = ReadKnownFailures(FLAGS_known_failures);
    if (!read.ok()) {
      std::fprintf(stderr, "jax2onnx eval: %s\n",
                   std::string(read.status().message()).c_str());
      return 2;
    }
    known = *std::move(read);
  }
  std::optional<jaxpr::NamedArrays> inputs_npz;
  if (!FLAGS_inputs.empty()) {
    auto read = jaxpr::ReadNpzFile(FLAGS_inputs);
    if (!read.ok()) {
      std::fprintf(stderr, "jax2onnx eval: %s\n",
                   std::string(read.status().message()).c_str());
      return 2;
    }
    inputs_npz = *std::move(read);
  }
  const jaxpr::NamedArrays* inputs_ptr = inputs_npz ? &*inputs_npz : nullptr;
  // Outputs are printed for a single bundle run without --compare; several
  // bundles or --compare give one PASS/FAIL line each instead.
  const bool verdict_lines = FLAGS_compare || refs->size() > 1;
  std::vector<Outcome> outcomes;
  int passed = 0;
  Progress progress("eval", static_cast<int>(refs->size()));
  for (size_t i = 0; i < refs->size(); ++i) {
    const BundleRef& ref = (*refs)[i];
    progress.Update(static_cast<int>(i), ref.display);
    Outcome o =
        FLAGS_isolate
            ? RunBundleIsolated(ref, inputs_ptr, !verdict_lines, FLAGS_out)
            : RunBundle(ref, inputs_ptr, !verdict_lines, FLAGS_out);
    progress.Clear();
    if (o.passed) {
      ++passed;
      if (verdict_lines && !Quiet()) {
        std::printf("PASS %s\n", ref.display.c_str());
      }
    } else {
      std::printf("FAIL %s: %s\n", ref.display.c_str(), o.reason.c_str());
    }
    std::fflush(stdout);
    outcomes.push_back(std::move(o));
  }
  progress.Clear();
  const int failed = static_cast<int>(refs->size()) - passed;
  bool ok = failed == 0;
  if (policy) ok = CheckPolicy(*refs, outcomes, known);
  if (verdict_lines && !Quiet()) {
    std::printf("%d passed, %d failed\n", passed, failed);
  }
  return ok ? kExitOk : kExitFailure;
}

}  // namespace jax2onnx::cli
