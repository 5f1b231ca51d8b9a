// Ref programs (jax/_src/state): the parser reads the index operands of
// get/swap/addupdate as JAX flattens them, the printer gives the text back,
// the type checker knows Ref{T}, and the discharge pass turns refs into SSA
// values or refuses with a located error.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/state/discharge.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/text/printer.h"
#include "jaxpr/typecheck/typecheck.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

JaxprFile MustParse(const std::string& text) {
  auto f = ParseJaxprText(text, "t.jaxpr");
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *std::move(f) : JaxprFile();
}

std::string ParseError(const std::string& text) {
  auto f = ParseJaxprText(text, "t.jaxpr");
  return f.ok() ? "" : std::string(f.status().message());
}

std::string CheckError(const std::string& text) {
  JaxprFile f = MustParse(text);
  absl::Status s = TypeCheckFile(f);
  return s.ok() ? "" : std::string(s.message());
}

std::string DischargeError(const std::string& text) {
  JaxprFile f = MustParse(text);
  absl::Status s = DischargeState(&f);
  return s.ok() ? "" : std::string(s.message());
}

constexpr char kAllForms[] =
    "{ lambda ; a:f32[4,3] b:i32[] c:f32[3] d:f32[2] e:i32[]. let\n"
    "    f:Ref{f32[4,3]} = new_ref[kind=None memory_space=None] a\n"
    "    g:f32[3] <- f[b,:]\n"
    "    f[0,:] <- c\n"
    "    h:f32[2], f[b:b+2,1] <- f[b:b+2,1], d\n"
    "    f[1:3,e] += d\n"
    "    i:f32[4,3] <- f[...]\n"
    "    j:f32[4,3] = freeze f\n"
    "  in (g, h, i, j) }";

TEST(RefStateParseTest, IndexOperandsFollowTheRefAndValueInPrintOrder) {
  const JaxprFile f = MustParse(kAllForms);
  const auto& e = f.main->eqns;
  ASSERT_EQ(e.size(), 7u);
  // get f[b,:]: ref, then the dynamic int indexer b.
  ASSERT_EQ(e[1].inputs.size(), 2u);
  EXPECT_EQ(e[1].inputs[1].var->name, "b");
  // f[0,:] <- c: ref, value, then the literal indexer 0.
  ASSERT_EQ(e[2].inputs.size(), 3u);
  ASSERT_TRUE(e[2].inputs[2].is_literal());
  EXPECT_EQ(e[2].inputs[2].literal->text, "0");
  // swap at [b:b+2,1]: the dynamic start b, then the literal 1.
  ASSERT_EQ(e[3].inputs.size(), 4u);
  EXPECT_EQ(e[3].inputs[2].var->name, "b");
  EXPECT_EQ(e[3].inputs[3].literal->text, "1");
  // addupdate [1:3,e]: the static slice adds nothing.
  ASSERT_EQ(e[4].inputs.size(), 3u);
  EXPECT_EQ(e[4].inputs[2].var->name, "e");
  EXPECT_EQ(e[5].inputs.size(), 1u);
  EXPECT_EQ(PrintJaxprFile(f), kAllForms);
}

TEST(RefStateParseTest, UnboundIndexVariableIsLocated) {
  EXPECT_THAT(ParseError("{ lambda ; a:Ref{f32[3]}. let\n"
                         "    b:f32[] <- a[zz]\n"
                         "  in (b,) }"),
              HasSubstr("t.jaxpr:2:18"));
  EXPECT_THAT(ParseError("{ lambda ; a:Ref{f32[3]} b:i32[]. let\n"
                         "    c:f32[2] <- a[b:c+2]\n"
                         "  in (c,) }"),
              HasSubstr("must read 'b+SIZE'"));
}

TEST(RefStateTypeCheckTest, AcceptsEveryForm) {
  EXPECT_EQ(CheckError(kAllForms), "");
}

TEST(RefStateTypeCheckTest, ReadTypeIsTheIndexedShape) {
  EXPECT_THAT(CheckError("{ lambda ; a:f32[4,3] b:i32[]. let\n"
                         "    c:Ref{f32[4,3]} = new_ref[kind=None "
                         "memory_space=None] a\n"
                         "    d:f32[4] <- c[b,:]\n"
                         "  in (d,) }"),
              HasSubstr("expected f32[3], declared f32[4]"));
}

TEST(RefStateTypeCheckTest, WrittenValueMustMatchTheIndexedShape) {
  EXPECT_THAT(CheckError("{ lambda ; a:f32[4] b:f32[3]. let\n"
                         "    c:Ref{f32[4]} = new_ref[kind=None "
                         "memory_space=None] a\n"
                         "    c[1:3] <- b\n"
                         "  in () }"),
              HasSubstr("value must be f32[2]"));
}

TEST(RefStateTypeCheckTest, NewRefResultMustWrapTheOperandType) {
  EXPECT_THAT(CheckError("{ lambda ; a:f32[4]. let\n"
                         "    c:Ref{f32[5]} = new_ref[kind=None "
                         "memory_space=None] a\n"
                         "  in () }"),
              HasSubstr("expected Ref{f32[4]}, declared Ref{f32[5]}"));
}

TEST(RefStateTypeCheckTest, EmptyRefReadsTheLongDtypeOfItsTyParam) {
  EXPECT_EQ(CheckError("{ lambda ; . let\n"
                       "    a:Ref{f32[2,3]} = empty_ref[memory_space=None "
                       "ty=float32[2,3]] \n"
                       "    b:f32[2,3] = freeze a\n"
                       "  in (b,) }"),
            "");
}

TEST(RefStateDischargeTest, RefsBecomeSsaValues) {
  JaxprFile f = MustParse(kAllForms);
  ASSERT_TRUE(DischargeState(&f).ok());
  const std::string printed = PrintJaxprFile(f);
  EXPECT_THAT(printed, Not(HasSubstr("Ref{")));
  EXPECT_THAT(printed, Not(HasSubstr("<-")));
  EXPECT_THAT(printed, HasSubstr("dynamic_update_slice"));
  EXPECT_THAT(printed, HasSubstr("dynamic_slice[slice_sizes=(1, 3)]"));
  // The discharged program is itself well typed.
  EXPECT_TRUE(TypeCheckFile(f).ok()) << TypeCheckFile(f) << "\n" << printed;
}

TEST(RefStateDischargeTest, ProgramWithoutRefsIsUntouched) {
  const std::string text =
      "{ lambda ; a:f32[3]. let b:f32[3] = neg a in (b,) }";
  JaxprFile f = MustParse(text);
  ASSERT_TRUE(DischargeState(&f).ok());
  EXPECT_EQ(PrintJaxprFile(f), text);
}

TEST(RefStateDischargeTest, JitBodyTakingARefReturnsItsFinalValue) {
  // JAX's pjit discharge rule: the body takes the ref's value and returns
  // its final value as an extra result; out_shardings gains an entry.
  JaxprFile f = MustParse(
      "{ lambda ; a:f32[3]. let\n"
      "    b:Ref{f32[3]} = new_ref[kind=None memory_space=None] a\n"
      "    pjit[\n"
      "      jaxpr={ lambda ; c:Ref{f32[3]}. let\n"
      "          d:f32[3] <- c[...]\n"
      "          e:f32[3] = neg d\n"
      "          c[...] <- e\n"
      "        in () }\n"
      "      name=g\n"
      "      out_shardings=()\n"
      "    ] b\n"
      "    f:f32[3] = freeze b\n"
      "  in (f,) }");
  ASSERT_TRUE(DischargeState(&f).ok());
  const std::string printed = PrintJaxprFile(f);
  // a goes in as the ref's value, the body returns the written e, and the
  // freeze reads the extra result.
  EXPECT_EQ(printed,
            "{ lambda ; a:f32[3]. let\n"
            "    b_st2:f32[3] = pjit[\n"
            "      jaxpr={ lambda ; c_st0:f32[3]. let e_st1:f32[3] = neg c_st0 "
            "in (e_st1,) }\n"
            "      name=g\n"
            "      out_shardings=(UnspecifiedValue,)\n"
            "    ] a\n"
            "  in (b_st2,) }");
  EXPECT_TRUE(TypeCheckFile(f).ok()) << TypeCheckFile(f) << "\n" << printed;
}

TEST(RefStateDischargeTest, RefPassedToAnOrdinaryPrimitiveIsALocatedError) {
  const std::string error = DischargeError(
      "{ lambda ; a:f32[3]. let\n"
      "    b:Ref{f32[3]} = new_ref[kind=None memory_space=None] a\n"
      "    c:f32[3] = neg b\n"
      "  in (c,) }");
  EXPECT_THAT(error, HasSubstr("t.jaxpr:3:5: error: neg: ref b:Ref{f32[3]}"));
  EXPECT_THAT(error, HasSubstr("not passed to 'neg'"));
}

TEST(RefStateDischargeTest, ScanConstRefBecomesACarry) {
  JaxprFile f = MustParse(
      "{ lambda ; a:f32[3] b:f32[2,3]. let\n"
      "    c:Ref{f32[3]} = new_ref[kind=None memory_space=None] a\n"
      "    scan[\n"
      "      jaxpr={ lambda ; d:Ref{f32[3]} e:f32[3]. let\n"
      "          d[...] += e\n"
      "        in () }\n"
      "      length=2\n"
      "      num_carry=0\n"
      "      num_consts=1\n"
      "      reverse=False\n"
      "      unroll=1\n"
      "    ] c b\n"
      "    f:f32[3] = freeze c\n"
      "  in (f,) }");
  ASSERT_TRUE(DischargeState(&f).ok());
  const std::string printed = PrintJaxprFile(f);
  EXPECT_THAT(printed, HasSubstr("num_carry=1"));
  EXPECT_THAT(printed, HasSubstr("num_consts=0"));
  EXPECT_THAT(printed, Not(HasSubstr("Ref{")));
  EXPECT_TRUE(TypeCheckFile(f).ok()) << TypeCheckFile(f) << "\n" << printed;
}

TEST(RefStateDischargeTest, ScanOverARefIsRefused) {
  EXPECT_THAT(DischargeError(
                  "{ lambda ; a:f32[3]. let\n"
                  "    c:Ref{f32[3]} = new_ref[kind=None memory_space=None] a\n"
                  "    e:Ref{f32[3]} = scan[\n"
                  "      jaxpr={ lambda ; d:Ref{f32[3]}. let  in (d,) }\n"
                  "      length=2\n"
                  "      num_carry=1\n"
                  "      num_consts=0\n"
                  "      reverse=False\n"
                  "      unroll=1\n"
                  "    ] c\n"
                  "  in () }"),
              HasSubstr("t.jaxpr:3:5: error: scan: a ref in the carry or "
                        "scanned over is not supported"));
}

TEST(RefStateDischargeTest, GatherIndexerIsRefused) {
  EXPECT_THAT(DischargeError("{ lambda ; a:f32[5] b:i32[2]. let\n"
                             "    c:Ref{f32[5]} = new_ref[kind=None "
                             "memory_space=None] a\n"
                             "    d:f32[2] <- c[b]\n"
                             "  in (d,) }"),
              HasSubstr("t.jaxpr:3:5: error: get: ref index [b]: integer "
                        "array indexer b:i32[2]"));
}

TEST(RefStateDischargeTest, RefProgramInputIsRefused) {
  EXPECT_THAT(DischargeError("{ lambda ; a:Ref{f32[3]}. let\n"
                             "    b:f32[3] <- a[...]\n"
                             "  in (b,) }"),
              HasSubstr("program input a:Ref{f32[3]} is a ref"));
}

TEST(RefStateDischargeTest, UninitializedRunStateIsRefused) {
  EXPECT_THAT(
      DischargeError("{ lambda ; . let\n"
                     "    run_state[\n"
                     "      is_initialized=(False,)\n"
                     "      jaxpr={ lambda ; a:Ref{f32[3]}. let  in () }\n"
                     "      which_linear=(False,)\n"
                     "    ] \n"
                     "  in () }"),
      HasSubstr("run_state: uninitialized refs"));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
