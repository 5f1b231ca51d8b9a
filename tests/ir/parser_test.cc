// The IR text parser (ir/parser.cc): hand-written text reads into the graph
// it describes (checked by printing it back and by the IR's own accessors),
// errors are located, and print -> parse -> print is the identity in the
// exact mode on every libonnx backend test model and on every testdata
// bundle converted by both pipelines.
#include "ir/parser.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/bundle_access.h"
#include "api/convert_internal.h"
#include "api/corpus.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "ir/serde.h"
#include "ir/verifier.h"
#include "tests/ir/parse_ir.h"

namespace jax2onnx::ir {
namespace {

using ::testing::HasSubstr;

constexpr PrintOptions kExact{.exact = true};

using pass_test::ParseIr;

std::string ParseError(absl::string_view text) {
  absl::StatusOr<Model> m = ParseModel(text);
  return m.ok() ? "parsed" : std::string(m.status().message());
}

TEST(ParserTest, ReadsWhatThePrinterWrites) {
  const std::string text =
      "model ir_version=10 opsets={\"\": 23, \"com.microsoft\": 1} "
      "producer=\"jax2onnx 0.1.0\"\n"
      "meta \"source\" = \"a\\\"b\"\n"
      "graph main(%x: f32[B,3], %c: bool[], %w: f32[3]) -> (%y: f32[B,3], "
      "%o: f32[*]) {\n"
      "  init %k: i64[2] = i64[2]{-1, 3}\n"
      "  init %w: f32[3] = f32[3]{0.5, -inf, nan}\n"
      "  %t: f32[B,3] = Relu(%x)  # relu 0\n"
      "  %y: f32[B,3] = Add(%t, %w) {alpha=1.0, axes=[0, -1], "
      "mode=\"a\\\"b\", scales=[0.25, 2.0], empty=floats []}\n"
      "  %o, _ = com.microsoft::Custom(%y, _, %\"odd name\") "
      "{f=@beta: float}\n"
      "  %\"odd name\": f32[?,\"2*b\"] = If(%c) {else_branch=graph "
      "else_g() -> (%e: f32[2]) {\n"
      "    %e: f32[2] = Neg(%x)\n"
      "  }, then_branch=graph then_g() -> (%x) {\n"
      "  }}\n"
      "}\n";
  Model m = ParseIr(text);
  EXPECT_EQ(m.ir_version(), 10);
  EXPECT_EQ(m.OpsetVersion("com.microsoft"), 1);
  EXPECT_EQ(m.producer_name(), "jax2onnx");
  EXPECT_EQ(m.producer_version(), "0.1.0");
  const Graph& g = m.graph();
  ASSERT_EQ(g.inputs().size(), 3u);
  // %w is an input with a default value; %k an initializer only.
  EXPECT_TRUE(g.inputs()[2]->is_initializer());
  EXPECT_EQ(g.initializer("k")->const_value()->data<int64_t>()[0], -1);
  std::vector<const Node*> nodes(g.nodes().begin(), g.nodes().end());
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[0]->name(), "relu 0");
  EXPECT_EQ(nodes[1]->attr("alpha")->type(), onnx::AttributeProto::FLOAT);
  EXPECT_EQ(nodes[1]->attr("axes")->ints(), (std::vector<int64_t>{0, -1}));
  EXPECT_EQ(nodes[1]->attr("empty")->type(), onnx::AttributeProto::FLOATS);
  EXPECT_EQ(nodes[2]->domain(), "com.microsoft");
  EXPECT_EQ(nodes[2]->input(1), nullptr);
  // Used before its definition: bound once the graph was read.
  EXPECT_EQ(nodes[2]->input(2), nodes[3]->output(0));
  EXPECT_EQ(nodes[2]->output(1)->name(), "");
  EXPECT_TRUE(nodes[2]->attr("f")->is_ref());
  EXPECT_EQ(nodes[3]->output(0)->shape()->dims()[1].param(), "2*b");
  // The output's declared type types %o; the subgraph reads %x of the
  // main graph.
  const Graph* else_g = nodes[3]->attr("else_branch")->g();
  EXPECT_EQ(else_g->first_node()->input(0), g.inputs()[0]);
  EXPECT_EQ(nodes[3]->attr("then_branch")->g()->outputs()[0], g.inputs()[0]);
  // Printing gives the text back in the printer's layout: attributes and
  // initializers sorted by name.
  EXPECT_EQ(PrintModel(m),
            "model ir_version=10 opsets={\"\": 23, \"com.microsoft\": 1} "
            "producer=\"jax2onnx 0.1.0\"\n"
            "meta \"source\" = \"a\\\"b\"\n"
            "graph main(%x: f32[B,3], %c: bool[], %w: f32[3]) -> (%y: "
            "f32[B,3], %o: f32[*]) {\n"
            "  init %k: i64[2] = i64[2]{-1, 3}\n"
            "  init %w: f32[3] = f32[3]{0.5, -inf, nan}\n"
            "  %t: f32[B,3] = Relu(%x)  # relu 0\n"
            "  %y: f32[B,3] = Add(%t, %w) {alpha=1.0, axes=[0, -1], "
            "empty=floats [], mode=\"a\\\"b\", scales=[0.25, 2.0]}\n"
            "  %o: f32[*], _ = com.microsoft::Custom(%y, _, %\"odd name\") "
            "{f=@beta: float}\n"
            "  %\"odd name\": f32[?,2*b] = If(%c) {else_branch=graph "
            "else_g() -> (%e: f32[2]) {\n"
            "    %e: f32[2] = Neg(%x)\n"
            "  }, then_branch=graph then_g() -> (%x: f32[B,3]) {\n"
            "  }}\n"
            "}\n");
}

TEST(ParserTest, ReadsEveryElementTypeAndFunctions) {
  const std::string text =
      "graph g() -> () {\n"
      "  init %a: f16[2] = f16[2]{0.1, 65504}\n"
      "  init %b: bf16[1] = bf16[1]{3.14159}\n"
      "  init %c: c64[1] = c64[1]{1e+10+-2.5i}\n"
      "  init %d: u8[2] = u8[2]{0, 255}\n"
      "  init %e: bool[2] = bool[2]{true, false}\n"
      "  init %s: str[2] = str[2]{\"x\", \"\\n\"}\n"
      "  init %f: f64[1] = f64[1]{0.10000000000000001}\n"
      "  init %x: f32[1] = f32[1]{external location=\"w.bin\", "
      "offset=\"0\"}\n"
      "}\n"
      "function my.dom::Scale attrs=[factor] opsets={\"\": 23}\n"
      "body Scale(%in) -> (%out) {\n"
      "  %out = Mul(%in, %in) {k=@factor: int}\n"
      "}\n";
  Model m = ParseIr(text);
  const Graph& g = m.graph();
  // f16 0.1 rounds to 0x2e66; 65504 is the largest half, 0x7bff; bf16 of
  // 3.14159 (0x40490fd0) rounds to 0x4049.
  EXPECT_EQ(g.initializer("a")->const_value()->data<uint16_t>()[0], 0x2e66);
  EXPECT_EQ(g.initializer("a")->const_value()->data<uint16_t>()[1], 0x7bff);
  EXPECT_EQ(g.initializer("b")->const_value()->data<uint16_t>()[0], 0x4049);
  absl::Span<const float> c = absl::Span<const float>(
      reinterpret_cast<const float*>(
          g.initializer("c")->const_value()->bytes().data()),
      2);
  EXPECT_EQ(c[0], 1e10f);
  EXPECT_EQ(c[1], -2.5f);
  EXPECT_EQ(g.initializer("s")->const_value()->strings()[1], "\n");
  EXPECT_EQ(g.initializer("f")->const_value()->data<double>()[0], 0.1);
  EXPECT_TRUE(g.initializer("x")->const_value()->is_external());
  ASSERT_EQ(m.functions().size(), 1u);
  const Function& f = *m.functions()[0];
  EXPECT_EQ(f.domain(), "my.dom");
  EXPECT_EQ(f.attributes(), (std::vector<std::string>{"factor"}));
  EXPECT_EQ(f.body().first_node()->attr("k")->type(),
            onnx::AttributeProto::INT);
  EXPECT_EQ(PrintModel(ParseIr(PrintModel(m, kExact)), kExact),
            PrintModel(m, kExact));
}

TEST(ParserTest, ErrorsNameTheLineAndColumn) {
  EXPECT_EQ(ParseError("graph g() -> (%y) {\n  %y = Relu(%x)\n}\n"),
            "2:13: error: %x is not defined");
  EXPECT_EQ(ParseError("graph g(%x: f32[2]) -> () {\n  %x = Relu(%x)\n}\n"),
            "2:3: error: %x is defined twice");
  EXPECT_EQ(ParseError("graph g(%x: q32[2]) -> () {\n}\n"),
            "1:13: error: unknown element type `q32`");
  EXPECT_EQ(ParseError("graph g() -> () {\n  init %a: u8[1] = u8[1]{300}\n}\n"),
            "2:26: error: `300` is not a u8 value");
  EXPECT_EQ(ParseError("graph g() -> () {\n  init %a: i8[2] = i8[2]{1}\n}\n"),
            "2:26: error: tensor of 2 elements lists 1");
  EXPECT_THAT(ParseError("graph g() -> () {\n  init %a: f32[20] = f32[20]{1, "
                         "... (20 elements, fnv1a 0)}\n}\n"),
              HasSubstr("2:33: error: a tensor printed with a digest"));
  EXPECT_EQ(ParseError("graph g() -> (%y: f32[3]) {\n  %y: f32[2] = "
                       "Constant()\n}\n"),
            "1:15: error: %y is declared f32[2] where it is defined");
  EXPECT_EQ(ParseError("graph g() -> () {\n}\nextra"),
            "3:1: error: expected `function` or the end");
  // Found by ir_text_fuzzer: a repeated attribute replaced the first one and
  // freed its subgraph while that subgraph's use of %x (defined later) was
  // still waiting to be bound.
  EXPECT_EQ(ParseError("graph g(%c: bool[]) -> () {\n"
                       "  %o = If(%c) {then_branch=graph a() -> (%n) {\n"
                       "    %n = Neg(%x)\n"
                       "  }, then_branch=graph b() -> () {\n"
                       "  }}\n"
                       "  %x = Relu(%c)\n"
                       "}\n"),
            "4:6: error: attribute then_branch is given twice");
  // Nesting is bounded (types here; subgraphs count the same way), so no
  // input can overflow the stack.
  std::string deep = "graph g(%x: ";
  for (int i = 0; i < 300; ++i) deep += "seq(";
  EXPECT_EQ(ParseError(deep), "1:1033: error: nested more than 256 deep");
}

// print(exact) -> parse -> print(exact) is the identity, and the parsed
// model verifies when the original did.
void ExpectRoundTrip(const Model& model, const std::string& what,
                     std::vector<std::string>* failures) {
  const std::string text = PrintModel(model, kExact);
  absl::StatusOr<Model> parsed = ParseModel(text);
  if (!parsed.ok()) {
    failures->push_back(absl::StrCat(what, ": ", parsed.status().message()));
    return;
  }
  const std::string again = PrintModel(*parsed, kExact);
  if (again != text) {
    size_t at =
        std::mismatch(text.begin(), text.end(), again.begin(), again.end())
            .first -
        text.begin();
    size_t from = at < 80 ? 0 : at - 80;
    failures->push_back(absl::StrCat(what, ": prints back differently at ", at,
                                     ":\n  ", text.substr(from, 160),
                                     "\n  vs\n  ", again.substr(from, 160)));
    return;
  }
  VerifyOptions options{.require_io_types = false};
  if (Verify(model, options).ok()) {
    if (absl::Status s = Verify(*parsed, options); !s.ok()) {
      failures->push_back(absl::StrCat(what, ": parsed model: ", s.message()));
    }
  }
}

// The IR dumps kept as the fuzzer's seeds (JAX2ONNX_DEBUG_IR_DUMP of cond,
// while, scan and function bundles, printed in the default mode) parse and
// print back to themselves.
TEST(ParserRoundTripTest, TheFuzzerSeedsPrintBackToThemselves) {
  int seeds = 0;
  for (const auto& e : std::filesystem::directory_iterator(
           JAX2ONNX_SOURCE_DIR "/tests/fuzz/ir_text_seeds")) {
    std::ifstream in(e.path());
    std::stringstream buf;
    buf << in.rdbuf();
    absl::StatusOr<Model> m = ParseModel(buf.str());
    ASSERT_TRUE(m.ok()) << e.path() << ": " << m.status();
    EXPECT_EQ(PrintModel(*m), buf.str()) << e.path();
    ++seeds;
  }
  EXPECT_GT(seeds, 10);
}

TEST(ParserRoundTripTest, EveryLibonnxTestdataModel) {
  constexpr char kDir[] = "/usr/share/libonnx-testdata/data";
  std::error_code ec;
  if (!std::filesystem::is_directory(kDir, ec)) {
    GTEST_SKIP() << "libonnx-testdata is not installed";
  }
  std::vector<std::string> failures;
  int models = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kDir)) {
    if (!e.is_regular_file() || e.path().filename() != "model.onnx") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    onnx::ModelProto proto;
    if (!proto.ParseFromString(buf.str())) continue;
    absl::StatusOr<Model> model = FromProto(proto);
    if (!model.ok()) continue;
    ++models;
    ExpectRoundTrip(*model, e.path().string(), &failures);
  }
  std::cout << "round trip: " << models << " libonnx models\n";
  EXPECT_GT(models, 1000);
  for (size_t i = 0; i < failures.size() && i < 20; ++i) {
    ADD_FAILURE() << failures[i];
  }
  EXPECT_EQ(failures.size(), 0u);
}

TEST(ParserRoundTripTest, EveryTestdataBundleOnBothPipelines) {
  api::RegisterAllLowerings();
  absl::StatusOr<std::vector<std::string>> bundles =
      api::FindBundles({JAX2ONNX_SOURCE_DIR "/testdata"});
  ASSERT_TRUE(bundles.ok()) << bundles.status();
  std::vector<std::string> failures;
  int converted = 0;
  for (const std::string& path : *bundles) {
    absl::StatusOr<api::Bundle> bundle = api::LoadBundle(path);
    if (!bundle.ok()) continue;  // the refusal tests' bundles
    for (api::Pipeline pipeline :
         {api::Pipeline::kLegacy, api::Pipeline::kIr}) {
      ConvertOptions options;
      options.read_environment = false;
      absl::StatusOr<onnx::ModelProto> proto =
          api::ConvertWithPipeline(pipeline, *bundle, options);
      if (!proto.ok()) continue;
      // The IR holds no tensor of the float8 types (StableHLO's f8 modules
      // at opset 26 keep them in the model): nothing to print.
      absl::StatusOr<Model> model = FromProto(*proto);
      if (!model.ok()) continue;
      ++converted;
      ExpectRoundTrip(
          *model,
          absl::StrCat(path,
                       pipeline == api::Pipeline::kIr ? " [ir]" : " [legacy]"),
          &failures);
    }
  }
  std::cout << "round trip: " << converted << " conversions of "
            << bundles->size() << " bundles\n";
  // testdata holds about 3000 bundles; most convert on both pipelines.
  EXPECT_GT(converted, 5000);
  for (size_t i = 0; i < failures.size() && i < 20; ++i) {
    ADD_FAILURE() << failures[i];
  }
  EXPECT_EQ(failures.size(), 0u);
}

}  // namespace
}  // namespace jax2onnx::ir
