// Converts bundles with the IR pipeline and writes two models per bundle:
// NAME.literal.onnx (the pipeline's output today) and NAME.fused.onnx (the
// same model after the fusion passes, ir/passes/fusions.h), printing one
// line per model with its node count and op histogram. bench/fusion_bench.sh
// then times both in ONNX Runtime (bench/ort_latency.js); the table is in
// docs/performance.md.
//
// Usage: fusion_bench OUT_DIR OPSET BUNDLE.jaxpr...
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/convert_internal.h"
#include "converter2/convert.h"
#include "ir/pass.h"
#include "ir/passes/fusions.h"
#include "ir/passes/passes.h"
#include "ir/serde.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/io/bundle.h"

namespace {

std::string Histogram(const jax2onnx::ir::Model& model) {
  std::map<std::string, int> counts;
  for (const jax2onnx::ir::Node* n : model.graph().nodes()) {
    ++counts[n->op_type()];
  }
  std::string out;
  for (const auto& [op, n] : counts) absl::StrAppend(&out, " ", op, "=", n);
  return out;
}

std::string Stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  return base.substr(0, base.rfind(".jaxpr"));
}

int Run(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: fusion_bench OUT_DIR OPSET BUNDLE.jaxpr...\n";
    return 2;
  }
  const std::string out_dir = argv[1];
  const int opset = std::atoi(argv[2]);
  jax2onnx::api::RegisterAllLowerings();
  for (int i = 3; i < argc; ++i) {
    absl::StatusOr<jax2onnx::jaxpr::Bundle> bundle =
        jax2onnx::jaxpr::LoadBundle(argv[i]);
    if (!bundle.ok()) {
      std::cerr << argv[i] << ": " << bundle.status() << "\n";
      return 1;
    }
    jax2onnx::converter2::IrConvertOptions options;
    options.opset = opset;
    options.optimize = 0;  // the literal graph; the fusions run below
    absl::StatusOr<jax2onnx::ir::Model> model =
        jax2onnx::converter2::ConvertToIr(*bundle, options);
    if (!model.ok()) {
      std::cerr << argv[i] << ": " << model.status() << "\n";
      return 1;
    }
    const std::string stem = Stem(argv[i]);
    for (const char* kind : {"literal", "fused"}) {
      if (std::string(kind) == "fused") {
        jax2onnx::ir::PassManager manager;
        jax2onnx::ir::AddFusionPasses(manager, opset);
        // What the fusions orphan (constants of the replaced chains).
        manager.Add(jax2onnx::ir::CreateDeadNodeEliminationPass());
        manager.Add(jax2onnx::ir::CreateUnusedInitializerPruningPass());
        if (absl::Status s = manager.Run(*model).status(); !s.ok()) {
          std::cerr << argv[i] << ": " << s << "\n";
          return 1;
        }
      }
      const std::string path =
          absl::StrCat(out_dir, "/", stem, ".", kind, ".onnx");
      if (absl::Status s =
              jax2onnx::WriteModel(jax2onnx::ir::ToProto(*model), path);
          !s.ok()) {
        std::cerr << path << ": " << s << "\n";
        return 1;
      }
      std::cout << stem << " " << kind
                << " nodes=" << model->graph().num_nodes() << " "
                << Histogram(*model) << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
