// The `jax2onnx` command line: `jax2onnx COMMAND [flags] ARGS...`.
//
// Flags are parsed here, not by gflags::ParseCommandLineFlags: each command
// accepts only the flags of its entry in Commands() (anything else is a
// usage error, exit 2, naming the flags it accepts), flags and positional
// arguments may be interleaved, and -q/-v work for every command.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gflags/gflags.h"
#include "jax2onnx/jax2onnx.h"
#include "jax2onnx_git.h"  // generated: JAX2ONNX_GIT_HASH
#include "jaxpr/io/output_guard.h"
#include "tools/cli_output.h"
#include "tools/commands.h"
#include "tools/flag_checks.h"

DEFINE_bool(json, false, "Print machine-readable JSON instead of text.");

namespace jax2onnx::cli {
namespace {

constexpr char kUseOnnxIrHelp[] =
    "Pipeline: the IR pipeline unless --use_onnx_ir=false selects the "
    "legacy one (default: IR). JAX2ONNX_USE_ONNX_IR, when set, overrides "
    "this flag.";
constexpr char kOpsetHelp[] = "ONNX opset to target (17..26).";
constexpr char kSeedHelp[] =
    "Seed of the random inputs of bundles without input_i.";

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {"parse",
       "parse FILE...",
       "Parse printed jaxprs and summarize them",
       "Parses each FILE (a printed ClosedJaxpr, optionally with `# key: "
       "value` header lines) and prints the number of equations, the "
       "constvars/invars/outvars and a histogram of primitives. Exits 0 when "
       "every file parses; parse errors are printed as file:line:col.",
       {{"json",
         "Print one JSON array with an object per file (errors "
         "included) instead of the text summary."}},
       &RunParse},
      {"verify",
       "verify FILE_OR_DIR...",
       "Type check printed jaxprs without converting them",
       "Parses each FILE (a directory stands for its *.jaxpr files, "
       "recursively) and type checks it as jax.core.check_jaxpr would: "
       "binders bound once, known dtypes, non-negative dims, and per "
       "primitive the arity, operand dtypes, params and the result type "
       "computed from operands and params against the declared one. Errors "
       "go to stderr as FILE:LINE:COL: error: ...; exit 0 when every file is "
       "well-typed, 1 otherwise. A primitive without a rule gets the "
       "structural checks and a note. convert, check and eval run the same "
       "check first.",
       {},
       &RunVerify},
      {"print",
       "print FILE [--to=jaxpr] [--input_format=auto|jaxpr|stablehlo]",
       "Print a jaxpr in canonical JAX style",
       "Parses FILE and prints it back in current JAX style to stdout. A "
       "StableHLO file (.mlir, .stablehlo) prints as the jaxpr it translates "
       "to (docs/stablehlo.md); that text parses back to the same program.",
       {{"to", "Output language: jaxpr (the only one)."}, "input_format"},
       &RunPrint},
      {"eval",
       "eval BUNDLE... [--inputs F.npz] [--out F.npz] [--compare]",
       "Run bundles through the reference interpreter",
       "Evaluates each bundle (NAME.jaxpr + NAME.npz) with the reference "
       "interpreter, which implements JAX/XLA semantics directly. Inputs "
       "default to the bundle's input_i. With --compare, outputs are checked "
       "against expected_i using the bundle's rtol/atol (defaults: f32 1e-5, "
       "f64 1e-7, f16 and bf16 1e-2; ints and bools exact; NaN equals NaN) and "
       "one "
       "PASS/FAIL line per bundle is printed, ending with `N passed, M "
       "failed`.",
       {"inputs",
        {"out", "Write the outputs as out_i to this .npz (one bundle only)."},
        "compare",
        "isolate",
        "timeout_s",
        "known_failures",
        "min_pass_rate",
        "must_pass_groups",
        "mesh",
        "threefry_partitionable"},
       &RunEval},
      {"convert",
       "convert BUNDLE -o OUT.onnx [--use_onnx_ir] [--opset N] "
       "[--input_names a,b] [--output_names c] "
       "[--external_data=auto|always|never] [--mesh data=4,model=2] "
       "[--optimize=0|1|2] [--fuse_attention] [--inputs_as_nchw=0,2] "
       "[--outputs_as_nchw=0] [--functions=GLOB,...] "
       "[--threefry_partitionable=false] [--report FILE.md|FILE.json]",
       "Convert a bundle to an ONNX model",
       "Converts the bundle (NAME.jaxpr + optional NAME.npz with const_i / "
       "literal_i) to ONNX and writes it atomically. The pipeline is IR by "
       "default (docs/shadow_and_parity.md); --use_onnx_ir=false or "
       "JAX2ONNX_USE_ONNX_IR=0 selects the legacy pipeline (the environment "
       "variable wins over the flag). Nothing is written on failure; errors "
       "read `NAME.jaxpr:LINE:COL: error: ...` (the failing equation's "
       "line) and name the primitive and equation. Tensors over 1 MiB, and "
       "more when the model would exceed 2 GiB, go to one sidecar "
       "OUT.onnx.data (ONNX external data, docs/output.md).",
       {{"o",
         "Output .onnx path (required); - writes the model to stdout "
         "(every tensor inline)."},
        {"report",
         "Write a conversion report here (Markdown, or JSON for *.json), "
         "also when the conversion fails (then no model is written): every "
         "unsupported or refused primitive with its count and first "
         "location, the primitive histogram, nodes per op after lowering "
         "and per pass with its time, initializer bytes per dtype, time per "
         "stage, opset and IR version."},
        {"use_onnx_ir", kUseOnnxIrHelp},
        {"opset", kOpsetHelp},
        "input_names",
        "output_names",
        "external_data",
        "external_data_threshold",
        "external_data_name",
        "mesh",
        "optimize",
        "fuse_attention",
        "inputs_as_nchw",
        "outputs_as_nchw",
        "functions",
        "threefry_partitionable",
        {"input_format",
         "auto (by extension: .mlir and .stablehlo are StableHLO text, "
         "docs/stablehlo.md), jaxpr or stablehlo."}},
       &RunConvert},
      {"check",
       "check BUNDLE_OR_DIR... | check MODEL.onnx BUNDLE  [--json] "
       "[--inputs F.npz | --seed N] [--rtol R] [--atol A] [--bisect] "
       "[--use_onnx_ir] "
       "[--opset N] [--optimize=0|1|2] [--fuse_attention] "
       "[--functions=GLOB,...] [--input_names a,b] [--output_names c] "
       "[--inputs_as_nchw=0] [--outputs_as_nchw=0]",
       "Convert, run in ONNX Runtime and compare with the oracle",
       "For each bundle: converts it, runs the model in ONNX Runtime and "
       "compares with the oracle. `check MODEL.onnx BUNDLE` instead runs the "
       "model file as it lies (its external data, names, NCHW adapters, "
       "functions and opset as shipped; nothing is re-converted): inputs are "
       "fed by name where --input_names or the bundle's `# input_names:` "
       "header name them, else by position (outputs likewise); inputs and "
       "outputs are taken channels-first where --inputs_as_nchw/"
       "--outputs_as_nchw say, else where the model's metadata (written by "
       "convert) says, else where the declared static shape is the "
       "channels-first permutation of the bundle's. Inputs: the bundle's "
       "input_i, and each further example set its npz records "
       "(input_i@K/expected_i@K, K = 1, 2, ...: a PASS/FAIL line per "
       "example, each counted); --inputs F.npz takes F's input_i instead (and F's "
       "expected_i as the oracle when it has them); --seed N (or a bundle "
       "without input_i) takes seeded random inputs, symbolic dims bound to "
       "small sizes. The oracle is expected_i when the inputs are the ones "
       "it was computed for, else the reference interpreter. Tolerance: "
       "--rtol/--atol, else the bundle's rtol/atol header, "
       "else the dtype defaults (f32 1e-5, f64 "
       "1e-7, f16 and bf16 1e-2; ints/bools exact). An f32 output the f32 "
       "default rejects (no rtol/atol flag or header) is then held to a noise "
       "bound "
       "that scales with the program: with ref the interpreter on the program "
       "widened to f64 and E the worst error against ref of the interpreter "
       "in f32 with the partial sums of dot_general and reduce_sum rounded to "
       "f32 in sequential order (to nearest, up and down), each element must "
       "satisfy |got - ref| <= 2 E + 1e-5 + 1e-5 |ref| (docs/testing.md, "
       "Tolerances); both errors are reported. Prints one PASS/FAIL line per "
       "bundle with a reason for each FAIL, then `N passed, M failed`; -v "
       "and --json add where the inputs came from and per output the max "
       "absolute and relative error over all elements and the tolerance "
       "used with its source. --bisect: when an output fails, a copy of the "
       "model that also outputs each top-level equation's value (found by "
       "the IR pipeline's value names, `c/add`) is compared in program order "
       "with the interpreter; the first equation diverging beyond the "
       "tolerance is printed (FILE:LINE:COL, the equation with its params, "
       "max |error|; -v lists every result, --json adds a `bisect` object), "
       "results without a value of their own (inside fused nodes, folded, "
       "aliased) are marked not observable.",
       {{"use_onnx_ir", kUseOnnxIrHelp},
        {"opset", kOpsetHelp},
        {"json",
         "Print one JSON array with an object per bundle on stdout; "
         "the summary line goes to stderr."},
        {"bisect", "On a failed output, name the first diverging equation."},
        {"seed",
         "Check on seeded random inputs (the interpreter as the oracle), "
         "also for bundles with input_i; without it, bundles without "
         "input_i use seed 0."},
        {"inputs",
         ".npz whose input_i replace the bundle's inputs (and whose "
         "expected_i, if any, are the oracle; else the interpreter)."},
        "rtol",
        "atol",
        "mesh",
        "optimize",
        "fuse_attention",
        "functions",
        "input_names",
        "output_names",
        "inputs_as_nchw",
        "outputs_as_nchw",
        "threefry_partitionable"},
       &RunCheck},
      {"plugins",
       "plugins [NAME_OR_GLOB...] [--json]",
       "List primitives and which pipelines lower them",
       "Prints the shared registry: each primitive with its legacy and IR "
       "lowerings and the ONNX ops the IR lowering may emit (a lowering "
       "shared by a family of primitives lists the family's ops). Primitives "
       "registered only to be refused (pallas_call, xla_pmap, xmap, the host "
       "callbacks) show `refused` and the reason. Arguments filter by name: "
       "a glob (fnmatch * ? [..]) or else a substring; exit 1 when nothing "
       "matches.",
       {{"json", "Print the registry as one JSON array."}},
       &RunPlugins},
      {"randomize",
       "randomize BUNDLE... [--seed N] [--sizes B=4,T=8] [--int_range LO,HI]",
       "Write seeded random consts/inputs/literals next to a jaxpr",
       "Writes NAME.npz next to each NAME.jaxpr with seeded random const_i "
       "(one per constvar), literal_i (one per elided `[...]` literal) and "
       "input_i (one per invar); no expected_i, so `check` and `eval` use the "
       "reference interpreter as the oracle. Floats are uniform in [-1, 1], "
       "ints in [-5, 5] (unsigned [0, 10]) unless --int_range is given, bools "
       "random. Symbolic dims take their --sizes value, else 2, 3, ... in "
       "order of appearance. Never overwrites an npz holding expected_i, "
       "nor (without --force) one holding const_i, literal_i or input_i.",
       {{"seed", "Seed of the generated values."},
        "sizes",
        "int_range",
        "force"},
       &RunRandomize},
      {"corpus",
       "corpus DIR_OR_BUNDLE... [--pipeline=legacy|ir] [--also_opset17] "
       "[--also_bf16] [--f64=false] [--expected_failures FILE] "
       "[--missing_ok]",
       "Run a bundle corpus through one pipeline (markers, expect_graph)",
       "Checks every bundle like `check`, in one process with one ONNX "
       "Runtime, honouring the header lines `# markers:` (legacy_only, "
       "ir_only, legacy_xfail, ir_xfail, f64_xfail, no_f64, opset17_xfail; "
       "`name(strict)`; `: reason`), `# expect_graph:` and `# opset:`. "
       "All-f32 bundles without npz also run as NAME[f64] (f32 promoted to "
       "f64); --also_opset17 adds NAME[opset17], checked with "
       "onnx::checker and strict shape inference with data propagation, "
       "after which every node output must have an element type and a "
       "rank; --also_bf16 adds "
       "NAME[bf16] (f32 types and arrays rounded to bf16, the interpreter "
       "as oracle). Prints one "
       "PASS/FAIL/XFAIL/XPASS/SKIP line per case, then `N passed, M failed, "
       "K skipped, X xfailed, Y xpassed`. Exit 1 on any FAIL or strict "
       "XPASS; 77 (skipped) when ONNX Runtime is missing and CI is not set. "
       "Grammar: docs/testing.md.",
       {"pipeline",
        {"use_onnx_ir", kUseOnnxIrHelp},
        {"opset", kOpsetHelp},
        {"seed", kSeedHelp},
        "also_opset17",
        "also_bf16",
        "f64",
        "root",
        "expected_failures",
        "missing_ok",
        "special_values",
        "rank_unknown_allowance",
        "write_rank_unknown"},
       &RunCorpus},
      {"shadow",
       "shadow BUNDLE_OR_DIR... [--json] [--opset N] [--seed N] "
       "[--functions=GLOB,...]",
       "Compare the legacy and IR pipelines on bundles",
       "Converts each bundle with both pipelines and prints a verdict: "
       "IDENTICAL (same canonical graph), EQUIVALENT (graphs differ, outputs "
       "agree in ONNX Runtime within tolerance), DIFFERENT, LEGACY_FAILED, "
       "IR_FAILED or BOTH_FAILED, with a name-independent structural diff "
       "(op histogram, aligned nodes, I/O signature, initializer digests) and "
       "per-output errors against each other and the oracle. --json prints "
       "the stable format of docs/shadow_and_parity.md. Exit 1 when some "
       "bundle is DIFFERENT.",
       {{"json",
         "Print one JSON array (docs/shadow_and_parity.md) instead "
         "of the text verdicts."},
        {"opset", kOpsetHelp},
        {"seed", kSeedHelp},
        "functions"},
       &RunShadow},
      {"parity",
       "parity DIR_OR_BUNDLE... --out DIR [--f64_variants=false] "
       "[--opset17_variants=false]",
       "Build the legacy-vs-IR parity dashboard",
       "Runs every bundle through both pipelines (one ONNX Runtime process), "
       "also as NAME[f64] (all-f32 bundles without npz) and NAME[opset17] "
       "(bundles without an `# opset:` header), "
       "and writes DIR/parity.json, DIR/PARITY.md and DIR/index.html (a "
       "static page with an SVG chart of pass counts per primitive), then "
       "prints the summary line `parity: N cases; legacy L pass, ir I pass, "
       "both B; identical X, equivalent Y, different Z`. Failing cases are "
       "reported, not errors: exit 0 unless the tool itself fails; 77 when "
       "ONNX Runtime is missing. Refresh the committed snapshot with "
       "`build/bin/jax2onnx parity testdata --out docs/parity`.",
       {{"out",
         "Directory to write parity.json, PARITY.md and index.html "
         "into (required; created when missing)."},
        {"opset", kOpsetHelp},
        {"seed", kSeedHelp},
        "f64_variants",
        "opset17_variants",
        {"usage_roots",
         "Comma-separated directories whose .jaxpr programs are counted, "
         "with the inputs, to order \"Next ports\" by use (default "
         "../shared/corpus/real; missing ones are skipped)."},
        {"json",
         "Also print the report as one JSON document on stdout; "
         "the summary lines go to stderr."}},
       &RunParityCommand},
  };
  return *commands;
}

// `-o` for one-letter flags, `--name` otherwise.
std::string Spelled(const std::string& name) {
  return name.size() == 1 ? "-" + name : "--" + name;
}

const Command* FindCommand(const std::string& name) {
  for (const Command& c : Commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The closest of `candidates` within a third of the word's length (at
// least 1, at most 3 edits), or "".
std::string Nearest(const std::string& word,
                    const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance =
      std::clamp<size_t>(word.size() / 3, 1, 3) + 1;  // exclusive bound
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

void PrintMainHelp(std::FILE* out) {
  std::fprintf(
      out,
      "jax2onnx %s: convert printed JAX programs (jaxpr bundles) to ONNX.\n\n"
      "Usage: jax2onnx COMMAND [flags] ARGS...\n\nCommands:\n",
      jax2onnx::Version());
  for (const Command& c : Commands()) {
    std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  }
  std::fprintf(out,
               "\nEvery command takes -q (only errors and failures) and -v "
               "(more detail).\nExit codes: 0 success, 1 failure, 2 usage "
               "error.\nRun `jax2onnx help COMMAND` for a command's flags; "
               "`jax2onnx --version`.\n");
}

void PrintCommandHelp(const Command& c) {
  std::printf("Usage: jax2onnx %s\n\n%s\n", c.usage, c.help);
  if (!c.flags.empty()) std::printf("\nFlags:\n");
  for (const FlagDoc& flag : c.flags) {
    gflags::CommandLineFlagInfo info;
    if (!gflags::GetCommandLineFlagInfo(flag.name.c_str(), &info)) continue;
    std::string help = flag.help != nullptr ? flag.help : info.description;
    // Global descriptions start with the command they were written for.
    const std::string prefix = absl::StrCat(c.name, ": ");
    if (absl::StartsWith(help, prefix)) help = help.substr(prefix.size());
    std::printf(
        "  %s (%s, default %s)\n      %s\n", Spelled(flag.name).c_str(),
        info.type.c_str(),
        info.default_value.empty() ? "\"\"" : info.default_value.c_str(),
        help.c_str());
  }
  std::printf(
      "\nCommon flags:\n  -q, --quiet   only errors and failures\n"
      "  -v, --verbose more detail\n  -h, --help    this help\n");
}

bool IsHelpFlag(const std::string& arg) {
  return arg == "--help" || arg == "-h" || arg == "-help";
}

int UsageError(const Command& c, const std::string& message) {
  std::fprintf(stderr, "jax2onnx %s: %s\n", c.name, message.c_str());
  return kExitUsage;
}

std::string AcceptedFlags(const Command& c) {
  std::vector<std::string> names;
  for (const FlagDoc& f : c.flags) names.push_back(Spelled(f.name));
  names.push_back("-q");
  names.push_back("-v");
  return absl::StrCat(c.name, " accepts: ", absl::StrJoin(names, ", "));
}

// Sets the command's flags from `args` (everything after the command name)
// and collects the positional arguments. Returns -1 to go on, else the exit
// code (help printed: 0; usage error: 2).
int ParseCommandArgs(const Command& c, const std::vector<std::string>& args,
                     std::vector<std::string>* positional) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional->insert(positional->end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positional->push_back(arg);
      continue;
    }
    if (IsHelpFlag(arg)) {
      PrintCommandHelp(c);
      return kExitOk;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    const size_t eq = body.find('=');
    const bool has_value = eq != std::string::npos;
    std::string name = body.substr(0, eq);
    std::string value = has_value ? body.substr(eq + 1) : "";
    if (!has_value && (name == "q" || name == "quiet")) {
      SetVerbosity(Verbosity::kQuiet);
      continue;
    }
    if (!has_value && (name == "v" || name == "verbose")) {
      SetVerbosity(Verbosity::kVerbose);
      continue;
    }
    if (name == "q" || name == "quiet" || name == "v" || name == "verbose") {
      return UsageError(c, absl::StrCat(Spelled(name), " takes no value"));
    }
    auto accepted = [&](const std::string& n) {
      return std::any_of(c.flags.begin(), c.flags.end(),
                         [&](const FlagDoc& f) { return f.name == n; });
    };
    gflags::CommandLineFlagInfo info;
    if (!accepted(name) && !has_value && absl::StartsWith(name, "no") &&
        accepted(name.substr(2)) &&
        gflags::GetCommandLineFlagInfo(name.substr(2).c_str(), &info) &&
        info.type == "bool") {
      name = name.substr(2);  // --noflag
      value = "false";
    } else if (!accepted(name) ||
               !gflags::GetCommandLineFlagInfo(name.c_str(), &info)) {
      std::vector<std::string> names;
      for (const FlagDoc& f : c.flags) names.push_back(f.name);
      const std::string near = Nearest(name, names);
      return UsageError(
          c, absl::StrCat(
                 "unknown flag ", Spelled(name), " (", AcceptedFlags(c), ")",
                 near.empty()
                     ? ""
                     : absl::StrCat("; did you mean ", Spelled(near), "?")));
    } else if (!has_value) {
      if (info.type == "bool") {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return UsageError(
            c, absl::StrCat(Spelled(name), " needs a value (", info.type, ")"));
      }
    }
    if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
      return UsageError(c, absl::StrCat("invalid value '", value, "' for ",
                                        Spelled(name), " (", info.type, ")"));
    }
  }
  return -1;
}

int UnknownCommand(const std::string& name) {
  std::vector<std::string> names = {"help"};
  for (const Command& c : Commands()) names.push_back(c.name);
  const std::string near = Nearest(name, names);
  std::fprintf(
      stderr, "jax2onnx: unknown command '%s'%s\n", name.c_str(),
      near.empty() ? "" : absl::StrCat("; did you mean '", near, "'?").c_str());
  std::fprintf(stderr, "Run `jax2onnx --help` for the list of commands.\n");
  return kExitUsage;
}

}  // namespace
}  // namespace jax2onnx::cli

int main(int argc, char** argv) {
  using namespace jax2onnx::cli;  // NOLINT
  // INT/TERM/HUP/QUIT remove this process's temporaries before it dies.
  jax2onnx::jaxpr::InstallSignalCleanup();
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintMainHelp(stderr);
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (IsHelpFlag(first)) {
    PrintMainHelp(stdout);
    return kExitOk;
  }
  if (first == "--version" || first == "version") {
    std::printf("jax2onnx %s (git %s)\n", jax2onnx::Version(),
                JAX2ONNX_GIT_HASH);
    return kExitOk;
  }
  if (first == "help") {
    if (args.size() == 1) {
      PrintMainHelp(stdout);
      return kExitOk;
    }
    const Command* c = FindCommand(args[1]);
    if (c == nullptr || args.size() > 2) {
      return c == nullptr ? UnknownCommand(args[1])
                          : UsageError(*c, "usage: jax2onnx help COMMAND");
    }
    PrintCommandHelp(*c);
    return kExitOk;
  }
  if (first[0] == '-') {
    std::fprintf(stderr,
                 "jax2onnx: expected a command before %s (run `jax2onnx "
                 "--help`)\n",
                 first.c_str());
    return kExitUsage;
  }
  const Command* command = FindCommand(first);
  if (command == nullptr) return UnknownCommand(first);
  std::vector<std::string> positional;
  const int parsed = ParseCommandArgs(
      *command, std::vector<std::string>(args.begin() + 1, args.end()),
      &positional);
  if (parsed >= 0) return parsed;
  if (!CheckFlagValues(*command)) return kExitUsage;
  return command->run(positional);
}
