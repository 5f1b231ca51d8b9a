// The conversion report (`convert --report FILE.md|FILE.json`): what the
// program holds and what the conversion did with it, written whether the
// conversion succeeded or not.
//
//   - every primitive the selected pipeline cannot lower (no lowering, or
//     registered only to be refused), each with its count and first
//     location, found by scanning the whole program (nested jaxprs
//     included) before converting, so all of them are listed at once, not
//     just the first the converter meets; the conversion's own error too;
//   - the primitive histogram (equations at any depth);
//   - IR pipeline: per pass run (in order; a pass run several times in a
//     fixpoint group is one entry) its runs, time, main-graph node count
//     before and after and the ops whose counts it changed; the op
//     histogram after lowering and of the final graph;
//   - initializer bytes per dtype (main graph, external data included);
//   - time per stage (load, convert = lowering + passes + serialization,
//     write) and the opset and IR version.
//
// The library side: ToOnnxWithReport (ToOnnxForWriting with a report).
#ifndef JAX2ONNX_API_REPORT_H_
#define JAX2ONNX_API_REPORT_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "api/bundle_access.h"
#include "api/convert_internal.h"
#include "api/router.h"
#include "ir/ir.h"
#include "ir/passes/fusions.h"
#include "nlohmann/json.hpp"
#include "onnx/onnx_pb.h"

namespace jax2onnx::api {

struct UnsupportedPrimitive {
  std::string primitive;
  int count = 0;
  std::string first_location;  // FILE:LINE:COL
  std::string reason;
};

struct PassRecord {
  std::string name;
  int runs = 0;
  double seconds = 0;
  int64_t nodes_before = 0;                 // before its first run
  int64_t nodes_after = 0;                  // after its last run
  std::map<std::string, int64_t> op_delta;  // op -> summed count change
};

struct ConversionReport {
  std::string bundle;
  std::string pipeline;
  int opset = 0;
  int ir_version = 0;
  bool converted = false;
  std::string error;  // the conversion's error, when it failed
  std::vector<UnsupportedPrimitive> unsupported;
  std::map<std::string, int64_t> primitives;   // histogram
  std::map<std::string, int64_t> ops_lowered;  // IR pipeline, before passes
  std::map<std::string, int64_t> ops_final;
  std::vector<PassRecord> passes;
  ir::FusionLog fusions;  // IR pipeline: applied fusions and near misses
  std::map<std::string, int64_t> initializer_bytes;  // dtype -> bytes
  std::vector<std::pair<std::string, double>> stage_seconds;

  nlohmann::json ToJson() const;
  std::string ToMarkdown() const;
};

// Fills unsupported and primitives from the program (the whole of it).
void ScanProgram(const Bundle& bundle, Pipeline pipeline,
                 ConversionReport* report);

// Fills ops_final and initializer_bytes from the converted model.
void DescribeModel(const onnx::ModelProto& model, ConversionReport* report);

// The IR pipeline's step hook (converter2::IrConvertOptions::dump) that
// records into `report` and then calls `inner` (may be null).
std::function<void(const std::string&, const ir::Model&)> ReportingDump(
    ConversionReport* report,
    std::function<void(const std::string&, const ir::Model&)> inner);

// ToOnnxForWriting with `report` filled: the program scanned first, the
// conversion recorded, the model described; on failure report->error holds
// the conversion's error (formatted as FILE:LINE:COL: error: ...).
absl::StatusOr<PendingModel> ToOnnxWithReport(const Bundle& bundle,
                                              const ConvertOptions& options,
                                              ConversionReport* report);

// Writes the report as Markdown, or as JSON when `path` ends in .json.
absl::Status WriteReport(const ConversionReport& report,
                         const std::string& path);

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_REPORT_H_
