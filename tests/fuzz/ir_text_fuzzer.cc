// libFuzzer target for the IR text parser (ir/parser.h) and printer. Besides
// "no crash, no hang, no leak", it checks the exact printer's fixed point on
// every input that parses: print(parse(x)) must parse again and print
// identically.
//
// Built in the fuzz tree (scripts/fuzz.sh: -DJAX2ONNX_FUZZ=ON, clang);
// seeds: tests/fuzz/ir_text_seeds/*.ir.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "ir/parser.h"
#include "ir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jax2onnx::ir;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Model> model = ParseModel(text);
  if (!model.ok()) return 0;
  const PrintOptions exact{.exact = true};
  const std::string printed = PrintModel(*model, exact);
  absl::StatusOr<Model> again = ParseModel(printed);
  if (!again.ok()) {
    std::fprintf(stderr, "printed text does not parse: %s\n--- printed\n%s\n",
                 std::string(again.status().message()).c_str(),
                 printed.c_str());
    std::abort();
  }
  const std::string second = PrintModel(*again, exact);
  if (second != printed) {
    std::fprintf(stderr,
                 "second print differs\n--- first\n%s\n--- second\n%s\n",
                 printed.c_str(), second.c_str());
    std::abort();
  }
  return 0;
}
