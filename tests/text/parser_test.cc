// Targeted tests for the parser checklist of JAXPR_FORMAT.md §11 (one or
// more per pitfall), the data it produces, and its error messages.
#include "jaxpr/text/parser.h"

#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/text/dim_parser.h"
#include "jaxpr/text/printer.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::HasSubstr;

JaxprFile MustParse(const std::string& text) {
  auto file = ParseJaxprText(text, "test.jaxpr");
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return JaxprFile();
  return *std::move(file);
}

std::string ErrorOf(const std::string& text) {
  auto file = ParseJaxprText(text, "test.jaxpr");
  EXPECT_FALSE(file.ok()) << "parsed unexpectedly: " << text;
  return file.ok() ? "" : std::string(file.status().message());
}

// §11.1: ANSI colours are stripped; layout (line breaks) does not matter.
TEST(ParserPitfallTest, AnsiColoursAndLineBreaksAreInsignificant) {
  const std::string plain =
      "{ lambda ; a:f32[2,3]. let b:f32[2,3] = sin a in (b,) }";
  const std::string coloured =
      "{ \x1b[94mlambda \x1b[39m; a\x1b[35m:f32[2,3]\x1b[39m. "
      "\x1b[94mlet\x1b[39m b\x1b[35m:f32[2,3]\x1b[39m = sin a "
      "\x1b[94min \x1b[39m(b,) }";
  const std::string wrapped =
      "{ lambda ;\n  a:f32[2,3].\n let\n\n b:f32[2,3]\n =\n sin\n   a\n in\n "
      "(\nb\n,\n)\n}";
  const JaxprFile a = MustParse(plain);
  std::string diff;
  EXPECT_TRUE(StructurallyEqual(a, MustParse(coloured), &diff)) << diff;
  EXPECT_TRUE(StructurallyEqual(a, MustParse(wrapped), &diff)) << diff;
}

// §11.2: keywords and literal words are valid variable names.
TEST(ParserPitfallTest, KeywordsAreVariableNames) {
  const JaxprFile f = MustParse(
      "{ lambda ; let:f32[16] im:f32[16]. let\n"
      "    in:f32[16] = add im let\n"
      "    inf:f32[16] = rsqrt in\n"
      "    lambda:f32[16] = max inf inf:f32[]\n"
      "    if:f32[16] = mul lambda in\n"
      "  in (if, in) }");
  const ClosedJaxpr& j = *f.main;
  ASSERT_EQ(j.eqns.size(), 4u);
  EXPECT_EQ(j.eqns[0].outputs[0]->name, "in");
  EXPECT_EQ(j.eqns[1].inputs[0].var, j.eqns[0].outputs[0]);  // rsqrt in
  // `max inf inf:f32[]`: the bound variable, then a typed literal.
  ASSERT_EQ(j.eqns[2].inputs.size(), 2u);
  EXPECT_EQ(j.eqns[2].inputs[0].var, j.eqns[1].outputs[0]);
  ASSERT_TRUE(j.eqns[2].inputs[1].is_literal());
  EXPECT_TRUE(std::isinf(j.eqns[2].inputs[1].literal->float_value));
  EXPECT_EQ(j.outvars[1].var, j.eqns[0].outputs[0]);
}

TEST(ParserPitfallTest, UnboundInfIsALiteralAndBinderInfStartsAnEquation) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:f32[]. let\n"
      "    b:f32[] = max a inf\n"
      "    inf:f32[] = min b -inf:f32[]\n"
      "  in (inf,) }");
  const ClosedJaxpr& j = *f.main;
  ASSERT_EQ(j.eqns.size(), 2u);
  EXPECT_TRUE(j.eqns[0].inputs[1].is_literal());
  EXPECT_FALSE(j.eqns[0].inputs[1].literal->aval.has_value());
  EXPECT_EQ(j.eqns[1].outputs[0]->name, "inf");
  EXPECT_EQ(j.eqns[1].inputs[1].literal->float_value,
            -std::numeric_limits<double>::infinity());
}

// §11.3 / §2: operand lists end where an unbound identifier (a primitive of
// a zero-output equation) begins; wrapped operands continue the list.
TEST(ParserPitfallTest, BoundVariableRuleEndsOperandLists) {
  const JaxprFile f = MustParse(
      "let f = { lambda ; a:f32[1]. let  in () } in\n"
      "{ lambda ; g:f32[1] h:f32[1]. let\n"
      "    pjit[name=f jaxpr=f] g\n"
      "    debug_print g\n"
      "          h\n"
      "    i:f32[1] = mul g\n"
      "      h\n"
      "  in (i,) }");
  const ClosedJaxpr& j = *f.main;
  ASSERT_EQ(j.eqns.size(), 3u);
  EXPECT_EQ(j.eqns[0].primitive, "pjit");
  EXPECT_TRUE(j.eqns[0].outputs.empty());
  EXPECT_EQ(j.eqns[0].inputs.size(), 1u);
  EXPECT_EQ(j.eqns[1].primitive, "debug_print");
  EXPECT_EQ(j.eqns[1].inputs.size(), 2u);
  EXPECT_EQ(j.eqns[2].inputs.size(), 2u);
}

// §11.4: zero outputs (no `=`), zero operands (trailing space), both.
TEST(ParserPitfallTest, ZeroOutputAndZeroOperandEquations) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:f32[]. let\n"
      "    b:i32[1,2] = iota[dimension=1 dtype=int32 shape=(1, 2)] \n"
      "    c:Tok = create_token \n"
      "    check[err_tree=None] a\n"
      "  in (b,) }");
  const ClosedJaxpr& j = *f.main;
  ASSERT_EQ(j.eqns.size(), 3u);
  EXPECT_TRUE(j.eqns[0].inputs.empty());
  EXPECT_EQ(j.eqns[1].primitive, "create_token");
  EXPECT_EQ(j.eqns[1].outputs[0]->aval.kind, Aval::Kind::kToken);
  EXPECT_TRUE(j.eqns[2].outputs.empty());
  EXPECT_EQ(j.eqns[2].inputs.size(), 1u);
  // The printer keeps JAX's trailing space of zero-operand equations.
  EXPECT_THAT(PrintJaxprFile(f), HasSubstr("shape=(1, 2)] \n"));
}

// §11.5: the one-line form separates equations with `; `.
TEST(ParserPitfallTest, OneLineSemicolonForm) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:f32[]. let b:f32[] = cos a; c:f32[] = sin b; "
      "_:f32[] = mul a c in (c,) }");
  ASSERT_EQ(f.main->eqns.size(), 3u);
  EXPECT_EQ(f.main->eqns[1].inputs[0].var, f.main->eqns[0].outputs[0]);
  EXPECT_TRUE(f.main->eqns[2].outputs[0]->is_drop);
}

// §11.6: empty binder lists, empty bodies, empty and one-element tuples.
TEST(ParserPitfallTest, EmptyListsAndOneElementTuples) {
  const JaxprFile f = MustParse("{ lambda ; . let  in () }");
  EXPECT_TRUE(f.main->invars.empty());
  EXPECT_TRUE(f.main->eqns.empty());
  EXPECT_TRUE(f.main->outvars.empty());
  EXPECT_EQ(PrintJaxprFile(f), "{ lambda ; . let  in () }");
  const JaxprFile g = MustParse("{ lambda a:f32[3]; . let  in (a,) }");
  EXPECT_EQ(g.main->constvars.size(), 1u);
  EXPECT_EQ(PrintJaxprFile(g), "{ lambda a:f32[3]; . let  in (a,) }");
}

// §11.7: cond branches are a comma-less tuple of closed jaxprs, each with
// its own scope (the same names may appear in both).
TEST(ParserPitfallTest, CondBranchesAreSeparateScopes) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:i32[] b:f32[]. let\n"
      "    c:f32[] = cond[\n"
      "      branches=(\n"
      "        { lambda ; d:f32[]. let e:f32[] = sin d in (e,) }\n"
      "        { lambda ; d:f32[]. let e:f32[] = cos d in (e,) }\n"
      "      )\n"
      "    ] a b\n"
      "  in (c,) }");
  auto branches = f.main->eqns[0].params.GetJaxprs("branches");
  ASSERT_TRUE(branches.ok()) << branches.status();
  ASSERT_EQ(branches->size(), 2u);
  EXPECT_EQ((*branches)[0]->eqns[0].primitive, "sin");
  EXPECT_EQ((*branches)[1]->eqns[0].primitive, "cos");
  EXPECT_EQ((*branches)[1]->eqns[0].inputs[0].var, (*branches)[1]->invars[0]);
  EXPECT_NE((*branches)[0]->invars[0], (*branches)[1]->invars[0]);
}

// §11.8: shared `let NAME = ... in` jaxprs, referenced by name from jaxpr
// params only, possibly before their definition (sample 013 style).
TEST(ParserPitfallTest, SharedJaxprsAndReferences) {
  const JaxprFile f = MustParse(
      "let outer = { lambda ; a:f32[1]. let\n"
      "    b:f32[1] = jit[name=inner jaxpr=inner] a\n"
      "  in (b,) } in\n"
      "let inner = { lambda ; c:f32[1]. let d:f32[1] = neg c in (d,) } in\n"
      "{ lambda ; e:f32[1]. let\n"
      "    f:f32[1] = jit[name=outer jaxpr=outer] e\n"
      "    g:f32[1] = cond[branches=(inner outer)] e\n"
      "  in (g,) }");
  ASSERT_EQ(f.shared.size(), 2u);
  EXPECT_EQ(f.shared[0].first, "outer");
  const Params& p = f.main->eqns[0].params;
  // `name=outer` is a plain name; `jaxpr=outer` is the shared jaxpr.
  EXPECT_EQ(p.Find("name")->kind(), ParamValue::Kind::kName);
  EXPECT_EQ(*p.GetJaxpr("jaxpr"), f.shared[0].second.get());
  auto branches = f.main->eqns[1].params.GetJaxprs("branches");
  ASSERT_TRUE(branches.ok());
  EXPECT_EQ((*branches)[0], f.shared[1].second.get());
  // The forward reference inside `outer` resolves to `inner`'s definition.
  EXPECT_EQ(*f.shared[0].second->eqns[0].params.GetJaxpr("jaxpr"),
            f.shared[1].second.get());
  EXPECT_EQ(f.shared[1].second->eqns[0].primitive, "neg");
}

TEST(ParserPitfallTest, UndefinedOrCyclicSharedReferencesAreErrors) {
  EXPECT_THAT(ErrorOf("{ lambda ; a:f32[]. let b:f32[] = jit[jaxpr=nope] a "
                      "in (b,) }"),
              HasSubstr("no 'let nope = { ... } in' defines it"));
  EXPECT_THAT(ErrorOf("let f = { lambda ; a:f32[]. let\n"
                      "  b:f32[] = jit[jaxpr=f] a in (b,) } in\n"
                      "{ lambda ; a:f32[]. let  in (a,) }"),
              HasSubstr("refers to itself"));
  EXPECT_THAT(ErrorOf("let f = { lambda ; . let  in () } in\n"
                      "let f = { lambda ; . let  in () } in\n"
                      "{ lambda ; . let  in () }"),
              HasSubstr("defined twice"));
}

// §11.9: inner jit jaxprs rebind the outer names in their own scope.
TEST(ParserPitfallTest, InnerJaxprsRebindOuterNames) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:f32[] b:f32[]. let\n"
      "    c:f32[] = jit[\n"
      "      name=f\n"
      "      jaxpr={ lambda ; b:f32[] a:f32[]. let c:f32[] = sub b a in (c,) "
      "}\n"
      "    ] a b\n"
      "    d:f32[] = mul c a\n"
      "  in (d,) }");
  const ClosedJaxpr& outer = *f.main;
  auto inner = outer.eqns[0].params.GetJaxpr("jaxpr");
  ASSERT_TRUE(inner.ok());
  const ClosedJaxpr& in = **inner;
  EXPECT_EQ(in.eqns[0].inputs[0].var, in.invars[0]);  // inner b
  EXPECT_NE(in.invars[0], outer.invars[1]);
  EXPECT_EQ(outer.eqns[1].inputs[0].var, outer.eqns[0].outputs[0]);
  EXPECT_EQ(outer.eqns[1].inputs[1].var, outer.invars[0]);
}

// §11.10: every literal form.
TEST(ParserPitfallTest, LiteralsOfEveryForm) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = p a 2 -2147483648 1.0 9.999999747378752e-06 1e+30 "
      "-0.0 True False:bool[] nan inf:bf16[] (1+0j) (-0-1j):c64[] 1j "
      "3.0:f32[] 18446744073709551615:u64[] [...]:f32[3] [...]:i32[2]\n"
      "  in (b, [...]:f32[]) }");
  const auto& in = f.main->eqns[0].inputs;
  ASSERT_EQ(in.size(), 18u);  // a + 17 literals
  auto lit = [&](int i) { return *in[i].literal; };
  EXPECT_EQ(lit(1).kind, Literal::Kind::kInt);
  EXPECT_EQ(lit(1).int_value, 2);
  EXPECT_FALSE(lit(1).aval.has_value());
  EXPECT_EQ(lit(2).int_value, -2147483648LL);
  EXPECT_EQ(lit(3).kind, Literal::Kind::kFloat);
  EXPECT_EQ(lit(4).float_value, 9.999999747378752e-06);
  EXPECT_EQ(lit(5).float_value, 1e30);
  EXPECT_TRUE(std::signbit(lit(6).float_value));
  EXPECT_EQ(lit(7).kind, Literal::Kind::kBool);
  EXPECT_TRUE(lit(7).bool_value);
  EXPECT_FALSE(lit(8).bool_value);
  EXPECT_EQ(lit(8).aval->dtype, DType::kBool);
  EXPECT_TRUE(std::isnan(lit(9).float_value));
  EXPECT_EQ(lit(10).aval->dtype, DType::kBF16);
  EXPECT_EQ(lit(11).kind, Literal::Kind::kComplex);
  EXPECT_EQ(lit(11).float_value, 1.0);
  EXPECT_EQ(lit(11).imag_value, 0.0);
  EXPECT_EQ(lit(12).imag_value, -1.0);
  EXPECT_EQ(lit(12).aval->dtype, DType::kC64);
  EXPECT_EQ(lit(13).imag_value, 1.0);
  EXPECT_EQ(lit(14).aval->dtype, DType::kF32);
  // 2^64 - 1 does not fit int64; it is exact in uint_value.
  EXPECT_EQ(lit(15).uint_value, 18446744073709551615ULL);
  EXPECT_EQ(lit(16).kind, Literal::Kind::kElidedArray);
  EXPECT_EQ(lit(16).elided_index, 0);
  EXPECT_EQ(lit(17).elided_index, 1);
  EXPECT_EQ(f.main->outvars[1].literal->elided_index, 2);
  EXPECT_EQ(f.num_elided_literals, 3);
  EXPECT_THAT(ErrorOf("{ lambda ; . let b:u64[] = p 99999999999999999999 "
                      "in (b,) }"),
              HasSubstr("does not fit in 64 bits"));
}

// §11.11: symbolic dims, sharding, vma suffixes, memory spaces, odd avals.
TEST(ParserPitfallTest, DimsAndTypeDecorations) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:f32[2*b + 1,mod(b, 2),- b + 4] c:f32[B,b^2,"
      "non_negative(b - 1)] d:f32[256@data,512@(x,y)] e:f32[8]{V:x}{U:y} "
      "g:f32<host>[8] h:key<fry>[] i:Ref<vmem>{f32[8,128]} "
      "j:MemRef<None>{float32[8,128]} k:Tok l:f8_e4m3fn[3]. let  in () }");
  const auto& v = f.main->invars;
  ASSERT_EQ(v.size(), 10u);
  const Aval& a = v[0]->aval;
  ASSERT_EQ(a.rank(), 3);
  EXPECT_EQ(a.shape[0].ToString(), "2*b + 1");
  EXPECT_EQ(*a.shape[0].Evaluate({{"b", 5}}), 11);
  EXPECT_EQ(a.shape[1].kind(), DimExpr::Kind::kMod);
  EXPECT_EQ(*a.shape[2].Evaluate({{"b", 1}}), 3);
  EXPECT_EQ(a.ToString(), "f32[2*b + 1,mod(b, 2),- b + 4]");
  EXPECT_EQ(*v[1]->aval.shape[1].Evaluate({{"b", 3}}), 9);
  EXPECT_EQ(*v[1]->aval.shape[2].Evaluate({{"b", 0}}), 0);
  EXPECT_EQ(v[2]->aval.dim_sharding,
            (std::vector<std::string>{"data", "(x,y)"}));
  EXPECT_EQ(v[2]->aval.shape[1].constant_value(), 512);
  EXPECT_EQ(v[3]->aval.suffix, "{V:x}{U:y}");
  EXPECT_EQ(v[4]->aval.memory_space, "host");
  EXPECT_EQ(v[5]->aval.dtype_name, "key<fry>");
  EXPECT_EQ(v[6]->aval.kind, Aval::Kind::kOpaque);
  EXPECT_EQ(v[6]->aval.opaque_text, "Ref<vmem>{f32[8,128]}");
  EXPECT_EQ(v[7]->aval.opaque_text, "MemRef<None>{float32[8,128]}");
  EXPECT_EQ(v[8]->aval.kind, Aval::Kind::kToken);
  EXPECT_EQ(v[9]->aval.dtype, NarrowDType(NarrowFormat::kF8E4M3FN));
  // Everything prints back as written.
  const std::string printed = PrintJaxprFile(f);
  EXPECT_THAT(printed, HasSubstr("d:f32[256@data,512@(x,y)]"));
  EXPECT_THAT(printed, HasSubstr("e:f32[8]{V:x}{U:y} g:f32<host>[8]"));
}

// JAX prints symbolic dims bare inside shape params (`new_sizes=(4*b,)`):
// each compound dim is an opaque item of a tuple (what the StableHLO
// translation builds), plain symbols are names, numbers ints, and the
// program prints back as written.
TEST(ParserPitfallTest, DimExpressionsInTupleParamsAreOpaqueItems) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:f32[b,4]. let\n"
      "    c:f32[4*b] = reshape[dimensions=None new_sizes=(4*b,) "
      "sharding=None] a\n"
      "    d:f32[b + 1,mod(b, 2),b,3] = broadcast_in_dim[broadcast_dimensions=() "
      "shape=(b + 1, mod(b, 2), b, 3) sharding=None] 1.0:f32[]\n"
      "    e:i32[] = dim_as_value[dim=mod(b, 2)] \n"
      "  in (c, d, e) }");
  const Params& r = f.main->eqns[0].params;
  const ParamValue* sizes = r.Find("new_sizes");
  ASSERT_EQ(sizes->kind(), ParamValue::Kind::kTuple);
  ASSERT_EQ(sizes->items().size(), 1u);
  EXPECT_EQ(sizes->items()[0].kind(), ParamValue::Kind::kOpaque);
  EXPECT_EQ(sizes->items()[0].text(), "4*b");
  const ParamValue* shape = f.main->eqns[1].params.Find("shape");
  ASSERT_EQ(shape->kind(), ParamValue::Kind::kTuple);
  ASSERT_EQ(shape->items().size(), 4u);
  EXPECT_EQ(shape->items()[0].kind(), ParamValue::Kind::kOpaque);
  EXPECT_EQ(shape->items()[0].text(), "b + 1");
  EXPECT_EQ(shape->items()[1].kind(), ParamValue::Kind::kOpaque);
  EXPECT_EQ(shape->items()[1].text(), "mod(b, 2)");
  EXPECT_EQ(shape->items()[2].kind(), ParamValue::Kind::kName);
  EXPECT_EQ(*shape->items()[3].AsInt(), 3);
  const ParamValue* dim = f.main->eqns[2].params.Find("dim");
  EXPECT_EQ(dim->kind(), ParamValue::Kind::kOpaque);
  EXPECT_EQ(dim->text(), "mod(b, 2)");
  const std::string printed = PrintJaxprFile(f);
  EXPECT_THAT(printed, HasSubstr("new_sizes=(4*b,)"));
  EXPECT_THAT(printed, HasSubstr("shape=(b + 1, mod(b, 2), b, 3)"));
  std::string diff;
  EXPECT_TRUE(StructurallyEqual(f, MustParse(printed), &diff)) << diff;
  // Calls that are not dims stay calls.
  const JaxprFile g = MustParse(
      "{ lambda ; a:f32[8]. let b:f32[8] = p[specs=(P('x'), P(None))] a "
      "in (b,) }");
  EXPECT_EQ(g.main->eqns[0].params.Find("specs")->items()[0].kind(),
            ParamValue::Kind::kCall);
}

TEST(ParserPitfallTest, DynamicShapeDimIsASymbol) {
  // Sample 033: `i32[b]` where b is a variable of the jaxpr.
  const JaxprFile f = MustParse("{ lambda ; b:i32[] c:i32[b]. let  in (c,) }");
  EXPECT_EQ(f.main->invars[1]->aval.shape[0].kind(), DimExpr::Kind::kSymbol);
  EXPECT_EQ(f.main->invars[1]->aval.shape[0].symbol(), "b");
}

TEST(DimParserTest, RoundTripsJaxSpellings) {
  for (const char* text :
       {"b", "2*b + 1", "- b + 4", "b^2", "mod(b, 2)", "floordiv(b, 2)",
        "max(a, b)", "min(a, 4)", "non_negative(b - 1)", "-2*b", "(b + 1)*c",
        "a*b - 3"}) {
    DimExpr e;
    std::string error;
    size_t offset = 0;
    ASSERT_TRUE(ParseDimExpr(text, 32, &e, &error, &offset)) << text << error;
    EXPECT_EQ(e.ToString(), text);
  }
  DimExpr e;
  std::string error;
  size_t offset = 0;
  EXPECT_FALSE(ParseDimExpr("foo(b)", 32, &e, &error, &offset));
  EXPECT_THAT(error, HasSubstr("unknown dimension function 'foo'"));
  EXPECT_FALSE(ParseDimExpr(std::string(100, '(') + "b" + std::string(100, ')'),
                            32, &e, &error, &offset));
}

// numpy >= 2 reprs numpy scalars as np.int64(64), np.float32(0.5),
// np.True_: JAX prints them wherever a param holds one. Ints and floats read
// as plain numbers (kind kInt/kFloat, so every rule sees a number) and print
// back as written; np.True_/np.bool_(x) stay names/calls that AsBool reads.
TEST(ParserPitfallTest, NumpyScalarReprsAreThePlainValues) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = p[f=np.float32(0.5) i=np.int64(-3) n=np.uint8(7) "
      "s=(np.int64(2), np.int64(4)) t=np.True_ u=np.bool_(False) "
      "v=np.float64(nan)] a\n"
      "  in (b,) }");
  const Params& p = f.main->eqns[0].params;
  EXPECT_EQ(p.Find("i")->kind(), ParamValue::Kind::kInt);
  EXPECT_EQ(*p.GetInt("i"), -3);
  EXPECT_EQ(p.Find("i")->ToString(), "np.int64(-3)");
  EXPECT_EQ(*p.GetInt("n"), 7);
  EXPECT_EQ(p.Find("f")->kind(), ParamValue::Kind::kFloat);
  EXPECT_EQ(*p.GetFloat("f"), 0.5);
  EXPECT_EQ(p.Find("f")->ToString(), "np.float32(0.5)");
  EXPECT_TRUE(std::isnan(*p.GetFloat("v")));
  EXPECT_EQ(*p.GetIntList("s"), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(p.Find("s")->ToString(), "(np.int64(2), np.int64(4))");
  EXPECT_EQ(*p.GetBool("t"), true);
  EXPECT_EQ(p.Find("t")->ToString(), "np.True_");
  EXPECT_EQ(*p.GetBool("u"), false);
}

// §11.12: param values are Python reprs with spaces and brackets.
TEST(ParserPitfallTest, ParamValuesAreStructuredOrOpaque) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = p[\n"
      "      bwd=<function f_bwd at 0x7f12ab34cd56>\n"
      "      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), "
      "collapsed_slice_dims=(0,), start_index_map=(0,))\n"
      "      fill_value=-inf\n"
      "      in_names=({0: ('z',), 1: ('y',)},)\n"
      "      mesh=Mesh('z': 16, 'y': 1)\n"
      "      mode=GatherScatterMode.CLIP\n"
      "      new_dtype=float32\n"
      "      np_int=(np.int64(1),)\n"
      "      out_specs=(P('x', None),)\n"
      "      residuals_tree=...\n"
      "      rounding=RoundingMethod.AWAY_FROM_ZERO\n"
      "      rounding2=0\n"
      "      sizes=[1, 2]\n"
      "      auto=frozenset()\n"
      "      names=frozenset({'x', 'y'})\n"
      "      update_jaxpr=None\n"
      "    ] a\n"
      "  in (b,) }");
  const Params& p = f.main->eqns[0].params;
  EXPECT_EQ(p.Find("bwd")->kind(), ParamValue::Kind::kOpaque);
  EXPECT_EQ(p.Find("bwd")->text(), "<function f_bwd at 0x7f12ab34cd56>");
  auto dn = p.GetCall("dimension_numbers", "GatherDimensionNumbers");
  ASSERT_TRUE(dn.ok());
  EXPECT_EQ(*(*dn)->Field("offset_dims")->AsIntList(),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(*p.GetFloat("fill_value"),
            -std::numeric_limits<double>::infinity());
  const ParamValue* names = p.Find("in_names");
  ASSERT_EQ(names->kind(), ParamValue::Kind::kTuple);
  ASSERT_EQ(names->items()[0].kind(), ParamValue::Kind::kDict);
  EXPECT_EQ(names->items()[0].dict_items()[1].second.items()[0].text(), "y");
  EXPECT_EQ(p.Find("mesh")->kind(), ParamValue::Kind::kOpaque);
  EXPECT_EQ(*p.GetName("mode"), "GatherScatterMode.CLIP");
  EXPECT_EQ(*p.GetDType("new_dtype"), DType::kF32);
  EXPECT_EQ(*p.Find("np_int")->items()[0].AsInt(), 1);
  EXPECT_EQ(p.Find("out_specs")->items()[0].text(), "P");
  EXPECT_EQ(p.Find("residuals_tree")->ToString(), "...");
  EXPECT_EQ(*p.GetName("rounding"), "RoundingMethod.AWAY_FROM_ZERO");
  EXPECT_EQ(*p.GetInt("rounding2"), 0);
  EXPECT_EQ(*p.GetIntList("sizes"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(p.Find("auto")->kind(), ParamValue::Kind::kCall);
  EXPECT_EQ(p.Find("names")->kind(), ParamValue::Kind::kOpaque);
  EXPECT_TRUE(p.Find("update_jaxpr")->is_none());
  // Stored order is source order.
  EXPECT_EQ(p.entries()[0].first, "bwd");
  EXPECT_EQ(p.entries().back().first, "update_jaxpr");
}

// §11.13: unknown primitives, params and dtypes pass through unchanged.
TEST(ParserPitfallTest, UnknownPrimitivesPassThrough) {
  const std::string text =
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = my-custom_prim[\n"
      "      brand_new=Thing(x=1)\n"
      "      weird=<lambda>\n"
      "      z=((1, 2), (3, 4))\n"
      "    ] a\n"
      "  in (b,) }";
  const JaxprFile f = MustParse(text);
  EXPECT_EQ(f.main->eqns[0].primitive, "my-custom_prim");
  EXPECT_EQ(f.main->eqns[0].params.Find("weird")->text(), "<lambda>");
  EXPECT_EQ(PrintJaxprFile(f), text);
}

// §8: ref/state forms map onto get/swap/addupdate with the index as text.
TEST(ParserPitfallTest, RefStateForms) {
  const std::string text =
      "{ lambda ; a:Ref{f32[8]} b:i32[]. let\n"
      "    c:f32[8] <- a[...]\n"
      "    a[0:8] <- c\n"
      "    d:f32[8], a[:] <- a[:], c\n"
      "    a[b] += 1.0:f32[]\n"
      "  in (d,) }";
  const JaxprFile f = MustParse(text);
  const auto& e = f.main->eqns;
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].primitive, "get");
  EXPECT_EQ(e[0].params.Find("idx")->text(), "...");
  EXPECT_EQ(e[1].primitive, "swap");
  EXPECT_TRUE(e[1].outputs.empty());
  EXPECT_EQ(e[2].primitive, "swap");
  EXPECT_EQ(e[2].outputs.size(), 1u);
  EXPECT_EQ(e[3].primitive, "addupdate");
  EXPECT_TRUE(e[3].inputs[1].is_literal());
  EXPECT_EQ(PrintJaxprFile(f), text);
}

TEST(ParserTest, HeaderLinesBeforeTheJaxpr) {
  const JaxprFile f = MustParse(
      "# source: somewhere.mlir\n# RTOL: 1e-5\n#note without colon\n\n"
      "{ lambda ; a:f32[]. let  in (a,) }\n");
  ASSERT_EQ(f.header.size(), 3u);
  EXPECT_EQ(*f.Header("source"), "somewhere.mlir");
  EXPECT_EQ(*f.Header("rtol"), "1e-5");
  EXPECT_EQ(f.header[2].first, "note without colon");
  EXPECT_THAT(ErrorOf("{ lambda ; a:f32[]. let  in (a,) }\n# late: 1\n"),
              HasSubstr("only allowed at the top"));
}

TEST(ParserTest, EllipsisEquationAndEffects) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:f32[]. let\n    ...\n    b:f32[] = sin a\n"
      "  in (b,) : { Debug, ClassName(a, b) } }");
  ASSERT_EQ(f.main->eqns.size(), 2u);
  EXPECT_EQ(f.main->eqns[0].primitive, "...");
  EXPECT_EQ(f.main->effects,
            (std::vector<std::string>{"Debug", "ClassName(a, b)"}));
}

TEST(ParserTest, EquationLocationsAreLineAndColumn) {
  const JaxprFile f = MustParse(
      "{ lambda ; a:f32[]. let\n    b:f32[] = sin a\n  c:f32[] = cos b; "
      "d:f32[] = neg c\n  in (d,) }");
  const auto& e = f.main->eqns;
  EXPECT_EQ(e[0].loc.line, 2);
  EXPECT_EQ(e[0].loc.column, 5);
  EXPECT_EQ(e[1].loc.line, 3);
  EXPECT_EQ(e[1].loc.column, 3);
  EXPECT_EQ(e[2].loc.line, 3);
  EXPECT_EQ(e[2].loc.column, 20);
}

TEST(ParserErrorTest, MessageHasFileLineColumnSourceAndCaret) {
  // `q` is not bound; column 21 is where it starts on line 2.
  const std::string message =
      ErrorOf("{ lambda ; a:f32[]. let\n    b:f32[] = add a 1.0\n  in (q,) }");
  EXPECT_EQ(message,
            "test.jaxpr:3:7: error: unknown variable 'q' in the output tuple\n"
            "  in (q,) }\n"
            "      ^");
}

TEST(ParserErrorTest, PositionsPointAtTheProblem) {
  EXPECT_THAT(ErrorOf("{ lambda ; a:f32[]. let\n  b:f32[] = sin a a:\n"),
              HasSubstr("test.jaxpr:2:"));
  EXPECT_THAT(ErrorOf("{ lambda ; a:f32[3. let  in () }"),
              HasSubstr("test.jaxpr:1:19: error: unexpected '.'"));
  EXPECT_THAT(ErrorOf("{ lambda ; a:f32[]. let\n  b:f32[] = p[x=(1, 2] a\n"),
              HasSubstr("unterminated value of param 'x'"));
  EXPECT_THAT(ErrorOf("{ lambda ; a:f32[]. let\n  b:f32[] = sin a\n"),
              HasSubstr("test.jaxpr:3:1: error: unexpected end of input"));
  EXPECT_THAT(
      ErrorOf("{ lambda ; a:f32[]. let\n  b:f32[] = sin a\n  undefined_var\n"
              "  in (b,) }"),
      HasSubstr("test.jaxpr:3:3: error: 'undefined_var' is not a variable"));
  EXPECT_THAT(ErrorOf("{ lambda ; a:f32[mod(b 2)]. let  in () }"),
              HasSubstr("test.jaxpr:1:24: error: expected ',' or ')'"));
}

TEST(ParserErrorTest, ParseEquationsUsesTheScope) {
  ClosedJaxpr scope;
  Var* x = scope.NewVar("x", Aval::Static(DType::kF32, {2}));
  auto eqns =
      ParseEquations("y:f32[2] = neg x; z:f32[2] = add y w", "frag", &scope);
  ASSERT_TRUE(eqns.ok()) << eqns.status();
  ASSERT_EQ(eqns->size(), 2u);
  EXPECT_EQ((*eqns)[0].inputs[0].var, x);
  EXPECT_EQ((*eqns)[1].inputs[0].var, (*eqns)[0].outputs[0]);
  EXPECT_EQ((*eqns)[1].inputs[1].var->name, "w");
  EXPECT_EQ((*eqns)[1].inputs[1].var->aval.kind, Aval::Kind::kOpaque);
}

// custom_linear_solve prints its jaxprs inside a NamedTuple's repr; the
// fields are parsed as jaxprs (and None), and the text round-trips.
TEST(ParserCallValueTest, NamedTupleOfJaxprsParsesAndRoundTrips) {
  const std::string text =
      "{ lambda ; a:f32[2] b:f32[2]. let\n"
      "    c:f32[2] = custom_linear_solve[\n"
      "      const_lengths=_LinearSolveTuple(matvec=1, vecmat=0, solve=1, "
      "transpose_solve=0)\n"
      "      jaxprs=_LinearSolveTuple(matvec={ lambda ; d:f32[2] e:f32[2]. "
      "let f:f32[2] = mul d e in (f,) }, vecmat=None, solve={ lambda ; "
      "g:f32[2] h:f32[2]. let i:f32[2] = div h g in (i,) }, "
      "transpose_solve=None)\n"
      "    ] a a b\n"
      "  in (c,) }";
  auto file = ParseJaxprText(text, "test.jaxpr");
  ASSERT_TRUE(file.ok()) << file.status();
  const Params& params = file->main->eqns[0].params;
  auto jaxprs = params.GetCall("jaxprs", "_LinearSolveTuple");
  ASSERT_TRUE(jaxprs.ok()) << jaxprs.status();
  const ParamValue* solve = (*jaxprs)->Field("solve");
  ASSERT_NE(solve, nullptr);
  ASSERT_NE(solve->jaxpr(), nullptr);
  EXPECT_EQ(solve->jaxpr()->eqns[0].primitive, "div");
  ASSERT_NE((*jaxprs)->Field("vecmat"), nullptr);
  EXPECT_TRUE((*jaxprs)->Field("vecmat")->is_none());
  auto again = ParseJaxprText(PrintJaxprFile(*file), "again.jaxpr");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << PrintJaxprFile(*file);
  std::string diff;
  EXPECT_TRUE(StructurallyEqual(*file, *again, &diff)) << diff;
}

}  // namespace
}  // namespace jax2onnx::jaxpr
