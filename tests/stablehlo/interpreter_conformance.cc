#include <iostream>
#include "stablehlo/translate.h"
#include "jaxpr/text/printer.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/compare.h"
using namespace jax2onnx;
int main(int argc, char** argv) {
  bool verbose = getenv("V") != nullptr;
  int ok = 0, n = 0;
  for (int i = 1; i < argc; ++i) {
    ++n;
    std::string path = argv[i];
    auto prog = stablehlo::LoadStablehloFile(path);
    if (!prog.ok()) { std::cout << "FAIL translate " << prog.status().message().substr(0, 300) << "\n"; continue; }
    std::string text = jaxpr::PrintJaxprFile(prog->file);
    if (verbose) std::cout << text << "\n";
    auto re = jaxpr::ParseJaxprText(text, path + ".jaxpr");
    if (!re.ok()) { std::cout << "FAIL reparse " << path << " " << re.status().message().substr(0, 300) << "\n"; continue; }
    std::string diff;
    if (!jaxpr::StructurallyEqual(*re, prog->file, &diff)) { std::cout << "FAIL fixpoint " << path << " " << diff << "\n"; continue; }
    std::vector<jaxpr::Array> consts, inputs, expected;
    for (auto& [k, v] : prog->arrays) {
      if (k.rfind("const_", 0) == 0) consts.push_back(v);
      if (k.rfind("input_", 0) == 0) inputs.push_back(v);
      if (k.rfind("expected_", 0) == 0) expected.push_back(v);
    }
    jaxpr::EvalOptions opts; opts.filename = path;
    auto outs = jaxpr::Evaluate(*prog->file.main, consts, inputs, opts);
    if (!outs.ok()) { std::cout << "FAIL eval " << outs.status().message().substr(0, 300) << "\n"; continue; }
    bool good = true;
    for (size_t k = 0; k < expected.size() && k < outs->size(); ++k) {
      auto r = jaxpr::CompareArrays(expected[k], (*outs)[k], prog->rtol, prog->atol);
      if (!r.ok) { std::cout << "FAIL compare " << path << " #" << k << " " << r.Summary().substr(0, 300) << "\n"; good = false; break; }
    }
    if (good) { ++ok; if (verbose) std::cout << "OK " << path << "\n"; }
  }
  std::cout << ok << " / " << n << " ok\n";
}
