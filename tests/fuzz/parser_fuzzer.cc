// libFuzzer target for the jaxpr text parser and printer. Besides "no
// crash, no hang, no leak", it checks the printer fixed point on every
// input that parses: parse(print(x)) must succeed, be structurally equal,
// and print identically.
//
// Build (clang only): CXX=clang++ cmake -S . -B build-fuzz -G Ninja &&
//   ninja -C build-fuzz parser_fuzzer
// Run: build-fuzz/bin/parser_fuzzer -max_total_time=60 CORPUS_DIR
//   (seed CORPUS_DIR with ../shared/corpus/real/*.jaxpr)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "absl/strings/string_view.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/text/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jax2onnx::jaxpr;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  ParseOptions options;
  options.max_nesting_depth = 64;
  auto file = ParseJaxprText(text, "fuzz", options);
  if (!file.ok()) return 0;
  const std::string printed = PrintJaxprFile(*file);
  auto again = ParseJaxprText(printed, "printed", options);
  if (!again.ok()) {
    std::fprintf(stderr, "printed text does not parse: %s\n--- printed\n%s\n",
                 std::string(again.status().message()).c_str(),
                 printed.c_str());
    std::abort();
  }
  std::string diff;
  if (!StructurallyEqual(*file, *again, &diff)) {
    std::fprintf(stderr, "not a fixed point: %s\n--- printed\n%s\n",
                 diff.c_str(), printed.c_str());
    std::abort();
  }
  if (PrintJaxprFile(*again) != printed) {
    std::fprintf(stderr, "second print differs\n--- first\n%s\n--- second\n%s\n",
                 printed.c_str(), PrintJaxprFile(*again).c_str());
    std::abort();
  }
  // The equation entry point on the same bytes.
  ClosedJaxpr scope;
  (void)ParseEquations(text, "fuzz", &scope, options);
  return 0;
}
