// stablehlo_translate_check [--known_failures=FILE] FILE_OR_DIR...
//
// For each StableHLO file (.mlir): translate it (stablehlo/translate.h),
// print the program as a jaxpr and parse that text back (it must give the
// same program: a fixed point), then run it in the reference interpreter
// (which type checks it first) and compare every checked value with the
// file's expected value (XLA-computed for testdata/, hand-written for
// interpret/) under the file's tolerance (a file without checks and without
// inputs is run, with nothing to compare). Prints one line per failure and a
// summary; exits 1 when a file fails that is not listed in the known
// failures (`stablehlo/testdata/NAME reason` lines, as for `jax2onnx
// corpus --expected_failures`), 0 otherwise.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/compare.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/text/printer.h"
#include "stablehlo/translate.h"

namespace {

using namespace jax2onnx;  // NOLINT

std::string Check(const std::string& path) {
  auto prog = stablehlo::LoadStablehloFile(path);
  if (!prog.ok()) return "translate: " + std::string(prog.status().message());
  const std::string text = jaxpr::PrintJaxprFile(prog->file);
  auto re = jaxpr::ParseJaxprText(text, path + ".jaxpr");
  if (!re.ok()) return "reparse: " + std::string(re.status().message());
  std::string diff;
  if (!jaxpr::StructurallyEqual(*re, prog->file, &diff)) {
    return "not a fixed point: " + diff;
  }
  std::vector<jaxpr::Array> consts, inputs, expected;
  for (const auto& [k, v] : prog->arrays) {
    if (k.rfind("const_", 0) == 0) consts.push_back(v);
    if (k.rfind("input_", 0) == 0) inputs.push_back(v);
    if (k.rfind("expected_", 0) == 0) expected.push_back(v);
  }
  // A file without checks whose program takes no inputs (after_all.mlir:
  // StableHLO's test asserts only that its interpreter runs it) is run too;
  // there is nothing to compare.
  if (!prog->is_test && !prog->file.main->invars.empty()) return "";
  jaxpr::EvalOptions opts;
  opts.filename = path;
  auto outs = jaxpr::Evaluate(*prog->file.main, consts, inputs, opts);
  if (!outs.ok()) return "eval: " + std::string(outs.status().message());
  if (!prog->is_test) return "";
  if (outs->size() != expected.size()) return "eval: output count differs";
  for (size_t k = 0; k < expected.size(); ++k) {
    auto r = jaxpr::CompareArrays(expected[k], (*outs)[k], prog->rtol, prog->atol);
    if (!r.ok) return "check #" + std::to_string(k) + ": " + r.Summary();
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> known;
  std::vector<std::string> files;
  std::string root;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--known_failures=", 0) == 0) {
      std::ifstream in(arg.substr(17));
      std::string line;
      while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        size_t sp = line.find(' ');
        known[line.substr(0, sp)] = sp == std::string::npos ? "" : line.substr(sp + 1);
      }
      continue;
    }
    namespace fs = std::filesystem;
    if (fs::is_directory(arg)) {
      root = fs::path(arg).parent_path().string();
      for (const auto& e : fs::recursive_directory_iterator(arg)) {
        if (e.is_regular_file() && stablehlo::IsStablehloPath(e.path().string())) {
          files.push_back(e.path().string());
        }
      }
    } else {
      files.push_back(arg);
    }
  }
  std::sort(files.begin(), files.end());
  int pass = 0, xfail = 0, fail = 0;
  for (const std::string& f : files) {
    std::string name = f;
    if (!root.empty() && name.rfind(root + "/", 0) == 0) name = name.substr(root.size() + 1);
    if (name.size() > 5 && name.substr(name.size() - 5) == ".mlir") name.resize(name.size() - 5);
    const std::string err = Check(f);
    if (err.empty()) {
      ++pass;
      continue;
    }
    const std::string first = err.substr(0, err.find('\n'));
    if (known.count(name)) {
      ++xfail;
      if (std::getenv("VERBOSE")) std::printf("XFAIL %s %s\n", name.c_str(), first.c_str());
    } else {
      ++fail;
      std::printf("FAIL %s %s\n", name.c_str(), first.c_str());
    }
  }
  std::printf("%d passed, %d expected failures, %d failed (of %zu)\n", pass,
              xfail, fail, files.size());
  return fail == 0 ? 0 : 1;
}
