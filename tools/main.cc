// The `jax2onnx` command line: `jax2onnx COMMAND [flags] ARGS...`.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gflags/gflags.h"
#include "tools/commands.h"

DEFINE_bool(json, false, "Print machine-readable JSON instead of text.");

namespace jax2onnx::cli {
namespace {

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {"parse",
       "parse FILE...",
       "Parse printed jaxprs and summarize them",
       "Parses each FILE (a printed ClosedJaxpr, optionally with `# key: "
       "value` header lines) and prints the number of equations, the "
       "constvars/invars/outvars and a histogram of primitives. Exits 0 when "
       "every file parses; parse errors are printed as file:line:col.",
       {"json"},
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
       "print FILE",
       "Print a jaxpr in canonical JAX style",
       "Parses FILE and prints it back in current JAX style to stdout.",
       {},
       &RunPrint},
      {"eval",
       "eval BUNDLE... [--inputs F.npz] [--out F.npz] [--compare]",
       "Run bundles through the reference interpreter",
       "Evaluates each bundle (NAME.jaxpr + NAME.npz) with the reference "
       "interpreter, which implements JAX/XLA semantics directly. Inputs "
       "default to the bundle's input_i. With --compare, outputs are checked "
       "against expected_i using the bundle's rtol/atol (defaults: f32 1e-5, "
       "f64 1e-7, f16 1e-2; ints and bools exact; NaN equals NaN) and one "
       "PASS/FAIL line per bundle is printed, ending with `N passed, M "
       "failed`.",
       {"inputs", "out", "compare", "isolate", "known_failures",
        "min_pass_rate", "must_pass_groups"},
       &RunEval},
      {"convert",
       "convert BUNDLE -o OUT.onnx [--use_onnx_ir] [--opset N] "
       "[--input_names a,b] [--output_names c] "
       "[--external_data=auto|always|never]",
       "Convert a bundle to an ONNX model",
       "Converts the bundle (NAME.jaxpr + optional NAME.npz with const_i / "
       "literal_i) to ONNX and writes it atomically. The pipeline is IR by "
       "default (docs/shadow_and_parity.md); --use_onnx_ir=false or "
       "JAX2ONNX_USE_ONNX_IR=0 selects the legacy pipeline (the environment "
       "variable wins over the flag). Nothing is "
       "written on failure; errors name the primitive, equation and source "
       "line. Tensors over 1 MiB, and more when the model would exceed 2 "
       "GiB, go to one sidecar OUT.onnx.data (ONNX external data, "
       "docs/output.md).",
       {"o", "use_onnx_ir", "opset", "input_names", "output_names",
        "external_data", "external_data_threshold", "external_data_name"},
       &RunConvert},
      {"check",
       "check BUNDLE_OR_DIR... [--use_onnx_ir] [--json] [--seed N]",
       "Convert, run in ONNX Runtime and compare with the oracle",
       "For each bundle: converts it, runs the model in ONNX Runtime on the "
       "bundle's input_i (or seeded random inputs, symbolic dims bound to "
       "small sizes) and compares with expected_i (or the reference "
       "interpreter) using the bundle's rtol/atol (defaults f32 1e-5, f64 "
       "1e-7, f16 1e-2; ints/bools exact). Prints one PASS/FAIL line per "
       "bundle with a reason for each FAIL, then `N passed, M failed`.",
       {"use_onnx_ir", "opset", "json", "seed"},
       &RunCheck},
      {"plugins",
       "plugins [--json]",
       "List primitives and which pipelines lower them",
       "Prints the shared registry: each primitive with its legacy and IR "
       "lowerings and the ONNX ops they use.",
       {"json"},
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
       "order of appearance. Refuses to overwrite an npz holding expected_i.",
       {"seed", "sizes", "int_range"},
       &RunRandomize},
      {"corpus",
       "corpus DIR_OR_BUNDLE... [--pipeline=legacy|ir] [--also_opset17] "
       "[--f64=false] [--expected_failures FILE] [--missing_ok]",
       "Run a bundle corpus through one pipeline (markers, expect_graph)",
       "Checks every bundle like `check`, in one process with one ONNX "
       "Runtime, honouring the header lines `# markers:` (legacy_only, "
       "ir_only, legacy_xfail, ir_xfail, f64_xfail, no_f64, opset17_xfail; "
       "`name(strict)`; `: reason`), `# expect_graph:` and `# opset:`. "
       "All-f32 bundles without npz also run as NAME[f64] (f32 promoted to "
       "f64); --also_opset17 adds NAME[opset17], checked with "
       "onnx::checker and strict shape inference. Prints one "
       "PASS/FAIL/XFAIL/XPASS/SKIP line per case, then `N passed, M failed, "
       "K skipped, X xfailed, Y xpassed`. Exit 1 on any FAIL or strict "
       "XPASS; 77 (skipped) when ONNX Runtime is missing and CI is not set. "
       "Grammar: docs/testing.md.",
       {"pipeline", "use_onnx_ir", "opset", "seed", "also_opset17", "f64",
        "root", "expected_failures", "missing_ok"},
       &RunCorpus},
      {"shadow",
       "shadow BUNDLE_OR_DIR... [--json] [--opset N] [--seed N]",
       "Compare the legacy and IR pipelines on bundles",
       "Converts each bundle with both pipelines and prints a verdict: "
       "IDENTICAL (same canonical graph), EQUIVALENT (graphs differ, outputs "
       "agree in ONNX Runtime within tolerance), DIFFERENT, LEGACY_FAILED, "
       "IR_FAILED or BOTH_FAILED, with a name-independent structural diff "
       "(op histogram, aligned nodes, I/O signature, initializer digests) and "
       "per-output errors against each other and the oracle. --json prints "
       "the stable format of docs/shadow_and_parity.md. Exit 1 when some "
       "bundle is DIFFERENT.",
       {"json", "opset", "seed"},
       &RunShadow},
      {"parity",
       "parity DIR_OR_BUNDLE... --out DIR [--f64_variants=false]",
       "Build the legacy-vs-IR parity dashboard",
       "Runs every bundle through both pipelines (one ONNX Runtime process) "
       "and writes DIR/parity.json, DIR/PARITY.md and DIR/index.html (a "
       "static page with an SVG chart of pass counts per primitive), then "
       "prints the summary line `parity: N cases; legacy L pass, ir I pass, "
       "both B; identical X, equivalent Y, different Z`. Failing cases are "
       "reported, not errors: exit 0 unless the tool itself fails; 77 when "
       "ONNX Runtime is missing. Refresh the committed snapshot with "
       "`build/bin/jax2onnx parity testdata --out docs/parity`.",
       {"out", "opset", "seed", "f64_variants", "json"},
       &RunParityCommand},
  };
  return *commands;
}

void PrintMainHelp() {
  std::printf(
      "jax2onnx: convert printed JAX programs (jaxpr bundles) to ONNX.\n\n"
      "Usage: jax2onnx COMMAND [flags] ARGS...\n\nCommands:\n");
  for (const Command& c : Commands()) {
    std::printf("  %-10s %s\n", c.name, c.summary);
  }
  std::printf("\nRun `jax2onnx COMMAND --help` for a command's flags.\n");
}

void PrintCommandHelp(const Command& c) {
  std::printf("Usage: jax2onnx %s\n\n%s\n", c.usage, c.help);
  if (!c.flags.empty()) std::printf("\nFlags:\n");
  for (const std::string& name : c.flags) {
    gflags::CommandLineFlagInfo info;
    if (gflags::GetCommandLineFlagInfo(name.c_str(), &info)) {
      std::printf(
          "  --%s (%s, default %s)\n      %s\n", info.name.c_str(),
          info.type.c_str(),
          info.default_value.empty() ? "\"\"" : info.default_value.c_str(),
          info.description.c_str());
    }
  }
}

bool IsHelp(const char* arg) {
  return std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0 ||
         std::strcmp(arg, "help") == 0 || std::strcmp(arg, "-help") == 0;
}

}  // namespace
}  // namespace jax2onnx::cli

int main(int argc, char** argv) {
  using jax2onnx::cli::Command;
  using jax2onnx::cli::Commands;
  if (argc < 2 || jax2onnx::cli::IsHelp(argv[1])) {
    jax2onnx::cli::PrintMainHelp();
    return argc < 2 ? 2 : 0;
  }
  const Command* command = nullptr;
  for (const Command& c : Commands()) {
    if (std::strcmp(c.name, argv[1]) == 0) command = &c;
  }
  if (command == nullptr) {
    std::fprintf(stderr, "jax2onnx: unknown command '%s'\n\n", argv[1]);
    jax2onnx::cli::PrintMainHelp();
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    if (jax2onnx::cli::IsHelp(argv[i])) {
      jax2onnx::cli::PrintCommandHelp(*command);
      return 0;
    }
  }
  // gflags sees "jax2onnx" followed by the command's own arguments.
  std::vector<char*> rest;
  rest.push_back(argv[0]);
  for (int i = 2; i < argc; ++i) rest.push_back(argv[i]);
  int rest_argc = static_cast<int>(rest.size());
  char** rest_argv = rest.data();
  gflags::SetUsageMessage("see `jax2onnx --help`");
  gflags::ParseCommandLineFlags(&rest_argc, &rest_argv, /*remove_flags=*/true);
  std::vector<std::string> args(rest_argv + 1, rest_argv + rest_argc);
  return command->run(args);
}
