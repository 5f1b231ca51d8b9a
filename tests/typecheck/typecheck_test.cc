// The type checker (jaxpr/typecheck/typecheck.h): every registered primitive
// has a rule; each class of ill-typed program is refused with a
// FILE:LINE:COL error; valid programs pass.
#include "jaxpr/typecheck/typecheck.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/convert_internal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "jaxpr/text/parser.h"
#include "plugin/registry.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

absl::Status Check(const std::string& text) {
  auto file = ParseJaxprText(text, "t.jaxpr");
  if (!file.ok()) return file.status();
  TypeCheckOptions options;
  options.unknown_primitive_is_error = true;
  return TypeCheckFile(*file, options);
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(TypeCheckRegistryTest, EveryRegisteredPrimitiveHasARule) {
  api::RegisterAllLowerings();
  int count = 0;
  for (const plugin::PrimitiveEntry* entry :
       plugin::Registry::Global().Entries()) {
    EXPECT_TRUE(HasTypeRule(entry->name))
        << "no type rule for registered primitive '" << entry->name << "'";
    ++count;
  }
  EXPECT_GT(count, 100);
}

TEST(TypeCheckTest, WellTypedProgramPasses) {
  EXPECT_TRUE(Check(R"({ lambda ; a:f32[5] b:f32[5]. let
    c:f32[5] = add a b
    d:bool[5] = lt c 1.0:f32[]
    e:f32[5,1] = reshape[dimensions=None new_sizes=(5, 1)] c
    f:f32[1,5] = transpose[permutation=(1, 0)] e
    g:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] f
  in (d, g) })")
                  .ok());
}

// An untyped literal takes the dtype of a typed operand of its kind; a
// float literal cannot be a bool, integer or complex operand (JAX prints
// those as True, 1 and (1+0j)). Found by the ORT gate on the ill-typed
// sweep: the converters lowered `and 1.0 b` with an f32 constant.
TEST(TypeCheckTest, UntypedLiteralOfTheWrongKindIsAnError) {
  EXPECT_THAT(Message(Check(R"({ lambda ; b:bool[3]. let
    c:bool[3] = and 1.0 b
  in (c,) })")),
              HasSubstr("the untyped literal 1.0 (operand 0) cannot be a "
                        "bool[3] like operand 1"));
  EXPECT_THAT(Message(Check(R"({ lambda ; b:i32[3]. let
    c:i32[3] = max b 0.5
  in (c,) })")),
              HasSubstr("the untyped literal 0.5 (operand 1) cannot be a "
                        "i32[3] like operand 0"));
  EXPECT_THAT(Message(Check(R"({ lambda ; d:c64[3]. let
    f:bool[3] = ne 1.0 d
  in (f,) })")),
              HasSubstr("the untyped literal 1.0 (operand 0) cannot be a "
                        "c64[3]"));
  EXPECT_THAT(Message(Check(R"({ lambda ; b:bool[3]. let
    c:bool[3] = or b 1
  in (c,) })")),
              HasSubstr("the untyped literal 1 (operand 1) cannot be a "
                        "bool[3]"));
  // Of its kind, or an integer literal in a float operation: fine.
  EXPECT_TRUE(Check(R"({ lambda ; a:f32[3] b:i32[3]. let
    c:f32[3] = add a 2
    d:f32[3] = mul 0.5 c
    e:i32[3] = max b 0
  in (d, e) })")
                  .ok());
}

// JAX 0.11's scan prints ft_in/ft_out flat trees: the consts/carry split
// is their leaf count (RightsOnly(Left(...)) entries are no leaves), never
// a guess from the avals, so counts that disagree with the equation are an
// error naming them.
TEST(TypeCheckTest, ScanFtInLeafCountsGiveTheSplit) {
  const std::string body =
      "jaxpr={ lambda ; e:f32[] f:f32[] g:f32[2]. let\n"
      "          h:f32[2] = mul g e\n"
      "          i:f32[2] = add h f\n"
      "        in (i,) }\n"
      "      length=5 reverse=False unroll=1\n";
  auto scan = [&](const std::string& ft) {
    return Check("{ lambda ; a:f32[] b:f32[] c:f32[5,2]. let\n"
                 "    d:f32[5,2] = scan[\n      " + ft + "\n      " + body +
                 "    ] a b c\n  in (d,) }");
  };
  EXPECT_TRUE(scan("ft_in=((None, None), (), (None,)) ft_out=((), "
                   "(RightsOnly(Right(None)), RightsOnly(Left(None))))")
                  .ok());
  EXPECT_THAT(Message(scan("ft_in=((None,), (None,), (None,)) ft_out=((None,),"
                           " (RightsOnly(Right(None)),))")),
              HasSubstr("ft_in/ft_out count 1+1+1 operands and 1+1 results; "
                        "the equation has 3 and 1"));
  EXPECT_THAT(Message(scan("ft_in=((None, None), (), (None,)) ft_out=((None,),"
                           " ())")),
              HasSubstr("ft_in has 0 carry leaves but ft_out has 1"));
}

// The primitives current JAX emits for ordinary code (rules_program.cc).
TEST(TypeCheckTest, StackUnstackTileEmptyRules) {
  EXPECT_TRUE(Check(R"({ lambda ; a:f32[2,3] b:f32[2,3]. let
    c:f32[2,2,3] = stack[axis=1] a b
    d:f32[2,3] e:f32[2,3] = unstack[axis=1] c
    f:f32[4,9] = tile[reps=(2, 3)] d
    g:i32[B,4] = empty[dtype=int32 out_sharding=None shape=(B, 4)] 
    h:f32[] = empty2[dtype=float32 memory_space=MemorySpace.Device] 
  in (e, f, g, h) })")
                  .ok());
  EXPECT_THAT(Message(Check(R"({ lambda ; a:f32[2,3] b:f32[3,2]. let
    c:f32[2,2,3] = stack[axis=0] a b
  in (c,) })")),
              HasSubstr("all operands must have the same shape"));
  EXPECT_THAT(Message(Check(R"({ lambda ; a:f32[3,2]. let
    b:f32[2] c:f32[2] = unstack[axis=0] a
  in (b, c) })")),
              HasSubstr("'unstack'"));
  EXPECT_THAT(Message(Check(R"({ lambda ; a:f32[2,3]. let
    b:f32[4,3] = tile[reps=(2,)] a
  in (b,) })")),
              HasSubstr("reps has 1 entries for an operand of rank 2"));
  EXPECT_THAT(Message(Check(R"({ lambda ; . let
    a:f32[3] = empty[dtype=float32 shape=(3,)] 
  in (a,) })")),
              HasSubstr("out_sharding"));
}

// An untyped literal with no typed operand takes the declared result's
// dtype (JAX 0.4.2x printed `x:bf16[] = neg 1`), so this is well typed.
TEST(TypeCheckTest, UntypedLiteralTakesTheDeclaredResultDtype) {
  EXPECT_TRUE(Check(R"({ lambda ; a:bf16[3]. let
    b:bf16[] = neg 1
    c:bf16[3] = mul a b
  in (c,) })")
                  .ok());
}

TEST(TypeCheckTest, DeclaredResultTooLongIsNamed) {
  // add of two f32[5] is f32[5] (lax broadcasting_shape_rule).
  const absl::Status s = Check(R"({ lambda ; a:f32[5] b:f32[5]. let
    c:f32[6] = add a b
  in (c,) })");
  EXPECT_EQ(Message(s),
            "t.jaxpr:2:5: error: 'add': expected f32[5], declared f32[6] "
            "(operands: f32[5], f32[5])");
}

TEST(TypeCheckTest, ConcatenateOfMixedDtypesIsRefused) {
  const absl::Status s = Check(R"({ lambda ; a:f32[2] b:i32[3]. let
    c:f32[5] = concatenate[dimension=0] a b
  in (c,) })");
  EXPECT_THAT(Message(s), StartsWith("t.jaxpr:2:5: error: 'concatenate': "
                                     "operands must have the same dtype"));
}

// convert_fuzzer found an i64 operand passed to a shard_map body that takes
// f32: the legacy pipeline then emitted an Add of i64 and f32 that the ONNX
// checker rejects. Sharding keeps dtypes and ranks, so the checker refuses.
TEST(TypeCheckTest, ShardMapOperandOfAnotherDtypeThanTheBodyIsRefused) {
  const absl::Status s = Check(R"({ lambda ; a:i64[8,4]. let
    b:f32[8,4] = shard_map[
      check_vma=False
      in_specs=(P('data', None),)
      jaxpr={ lambda ; c:f32[4,4]. let d:f32[4,4] = neg c in (d,) }
      manual_axes=frozenset({'data'})
      mesh=Mesh('data': 2, axis_types=(Auto,))
      out_specs=(P('data', None),)
    ] a
  in (b,) })");
  EXPECT_THAT(Message(s),
              StartsWith("t.jaxpr:2:5: error: 'shard_map': operand 0 is "
                         "i64[8,4] but the body's is f32[4,4]"));
  const absl::Status r = Check(R"({ lambda ; a:f32[8,4]. let
    b:i32[8] = shard_map[
      check_vma=False
      in_specs=(P('data', None),)
      jaxpr={ lambda ; c:f32[4,4]. let d:f32[4,4] = neg c in (d,) }
      manual_axes=frozenset({'data'})
      mesh=Mesh('data': 2, axis_types=(Auto,))
      out_specs=(P('data', None),)
    ] a
  in (b,) })");
  EXPECT_THAT(Message(r), HasSubstr("result 0 is i32[8] but the body's is "
                                    "f32[4,4]"));
}

// A shard_map over f32[8,4] on a 2-device mesh whose body applies
// `collective` to its f32[4,4] shard, binding a `declared` result, and
// returns the shard negated.
std::string ShardMapApplying(absl::string_view collective,
                             absl::string_view declared = "f32[4,4]") {
  return absl::StrCat(R"({ lambda ; a:f32[8,4]. let
    b:f32[8,4] = shard_map[
      check_vma=False
      in_specs=(P('data', None),)
      jaxpr={ lambda ; c:f32[4,4]. let
          d:)",
                      declared, " = ", collective, R"( c
          e:f32[4,4] = neg c
        in (e,) }
      manual_axes=frozenset({'data'})
      mesh=Mesh('data': 2, axis_types=(Auto,))
      out_specs=(P('data', None),)
    ] a
  in (b,) })");
}

// The declared result of a collective keeps its operand's dtype, rank (one
// more for an untiled all_gather, one less for an untiled reduce_scatter)
// and the dims it does not touch; ppermute's and axis_index's are computed.
TEST(TypeCheckTest, CollectiveResultsKeepDtypeRankAndUntouchedDims) {
  const std::string a2a =
      "all_to_all[axis_index_groups=None axis_name=('data',) concat_axis=0 "
      "split_axis=1 tiled=True]";
  EXPECT_TRUE(Check(ShardMapApplying(a2a, "f32[8,2]")).ok());
  EXPECT_THAT(Message(Check(ShardMapApplying(a2a, "i32[8,2]"))),
              HasSubstr("'all_to_all': declared i32[8,2], which the operand "
                        "f32[4,4] cannot become"));
  const std::string gather =
      "all_gather[all_gather_dimension=0 axis_index_groups=None "
      "axis_name=('data',) axis_size=2 tiled=False]";
  EXPECT_TRUE(Check(ShardMapApplying(gather, "f32[2,4,4]")).ok());
  EXPECT_THAT(Message(Check(ShardMapApplying(gather, "f32[8,4]"))),
              HasSubstr("declared f32[8,4], which the operand"));
  const std::string scatter =
      "reduce_scatter[axis_index_groups=None axis_name=('data',) "
      "axis_size=2 scatter_dimension=1 tiled=True]";
  EXPECT_TRUE(Check(ShardMapApplying(scatter, "f32[4,2]")).ok());
  EXPECT_THAT(Message(Check(ShardMapApplying(scatter, "f32[3,2]"))),
              HasSubstr("declared f32[3,2]"));
  EXPECT_THAT(
      Message(Check(ShardMapApplying(
          "ppermute[axis_name=('data',) perm=((0, 1), (1, 0))]", "f32[4,5]"))),
      HasSubstr("expected f32[4,4], declared f32[4,5]"));
}

// convert_fuzzer's fifth finding: a bitcast_convert_type whose new_dtype
// names no dtype was passed through, and the legacy pipeline emitted a
// model whose declared output shape disagreed with its Cast. A dtype JAX has
// but the checker cannot size (float8_e4m3fn) still passes through.
TEST(TypeCheckTest, BitcastToANameThatIsNoDtypeIsRefused) {
  EXPECT_THAT(
      Message(Check("{ lambda ; a:f16[16]. let b:u16[16,2] = "
                    "bitcast_convert_type[new_dtype=uinT16] a in (b,) }")),
      HasSubstr("'bitcast_convert_type': param 'new_dtype' names no dtype: "
                "uinT16"));
  EXPECT_TRUE(Check("{ lambda ; a:u8[16]. let b:f8_e4m3fn[16] = "
                    "bitcast_convert_type[new_dtype=float8_e4m3fn] a in (b,) }")
                  .ok());
}

// convert_fuzzer's fourth finding: all_to_all with split_axis=4 on a rank-3
// shard read past the shape in the mesh emulation (heap-buffer-overflow).
// The dims a collective splits, joins or gathers along must exist.
TEST(TypeCheckTest, CollectiveAxesOutOfRangeAreRefused) {
  EXPECT_THAT(
      Message(Check(
          ShardMapApplying("all_to_all[axis_index_groups=None "
                           "axis_name=('data',) concat_axis=0 split_axis=4 "
                           "tiled=True]"))),
      HasSubstr("'all_to_all': split_axis=4 is out of range for f32[4,4]"));
  EXPECT_THAT(Message(Check(ShardMapApplying(
                  "all_to_all[axis_index_groups=None "
                  "axis_name=('data',) concat_axis=-1 split_axis=0 "
                  "tiled=True]"))),
              HasSubstr("'all_to_all': concat_axis=-1 is out of range"));
  EXPECT_THAT(Message(Check(ShardMapApplying(
                  "reduce_scatter[axis_index_groups=None axis_name=('data',) "
                  "axis_size=2 scatter_dimension=2 tiled=True]"))),
              HasSubstr("'reduce_scatter': scatter_dimension=2 is out of "
                        "range"));
  EXPECT_THAT(Message(Check(ShardMapApplying(
                  "all_gather[all_gather_dimension=2 axis_index_groups=None "
                  "axis_name=('data',) axis_size=2 tiled=True]"))),
              HasSubstr("'all_gather': all_gather_dimension=2 is out of "
                        "range"));
  // Untiled, the gathered dim may be inserted after the last one.
  EXPECT_THAT(Message(Check(ShardMapApplying(
                  "all_gather[all_gather_dimension=2 axis_index_groups=None "
                  "axis_name=('data',) axis_size=2 tiled=False]"))),
              Not(HasSubstr("out of range")));
}

// convert_fuzzer's second finding: a mesh axis of size 1 whose body still
// declares the halved shard shape; the IR pipeline then emitted an Identity
// whose declared shape disagrees with its input. The checker computes each
// body parameter's shard shape from the mesh and the spec.
TEST(TypeCheckTest, ShardMapBodyShapeMustBeTheShardShape) {
  const absl::Status s = Check(R"({ lambda ; a:f32[8,4]. let
    b:f32[8,4] = shard_map[
      check_vma=False
      in_specs=(P('data', None),)
      jaxpr={ lambda ; c:f32[4,4]. let d:f32[4,4] = neg c in (d,) }
      manual_axes=frozenset({'data'})
      mesh=Mesh('data': 1, axis_types=(Auto,))
      out_specs=(P('data', None),)
    ] a
  in (b,) })");
  EXPECT_THAT(Message(s),
              StartsWith("t.jaxpr:2:5: error: 'shard_map': operand 0 f32[8,4] "
                         "has the shard shape f32[8,4] on this mesh, the body "
                         "declares f32[4,4]"));
  // On a mesh of 2 the same program is well typed.
  const absl::Status ok = Check(R"({ lambda ; a:f32[8,4]. let
    b:f32[8,4] = shard_map[
      check_vma=False
      in_specs=(P('data', None),)
      jaxpr={ lambda ; c:f32[4,4]. let d:f32[4,4] = neg c in (d,) }
      manual_axes=frozenset({'data'})
      mesh=Mesh('data': 2, axis_types=(Auto,))
      out_specs=(P('data', None),)
    ] a
  in (b,) })");
  EXPECT_TRUE(ok.ok()) << ok;
}

// convert_fuzzer's third finding: `i32[;B,5]` parses as a (0.4.30) named
// shape kept as opaque text; the checker skipped opaque binders, and the
// legacy emitter then hit a CHECK on its dtype. A binder the rule computes
// as an array must be one.
TEST(TypeCheckTest, OpaqueBinderWhereAnArrayIsComputedIsRefused) {
  const absl::Status s = Check(R"({ lambda ; a:i32[B,2] b:i32[B,3]. let
    c:i32[;B,5] = concatenate[dimension=1] a b
  in (c,) })");
  EXPECT_THAT(Message(s),
              StartsWith("t.jaxpr:2:5: error: 'concatenate': expected "
                         "i32[B,5], declared i32[;B,5]"));
}

TEST(TypeCheckTest, UnaryWithTwoOperandsIsRefused) {
  const absl::Status s = Check(R"({ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = neg a b
  in (c,) })");
  EXPECT_THAT(Message(s), StartsWith("t.jaxpr:2:5: error: 'neg': takes 1 "
                                     "operand, got 2"));
}

TEST(TypeCheckTest, ZeroOperandsAreRefused) {
  const absl::Status s = Check(
      "{ lambda ; a:f32[3]. let\n    b:f32[3] = sin \n"
      "  in (b,) }");
  EXPECT_THAT(Message(s), StartsWith("t.jaxpr:2:5: error: 'sin': takes 1 "
                                     "operand, got 0"));
}

TEST(TypeCheckTest, DuplicateBinderIsRefused) {
  const absl::Status s = Check(R"({ lambda ; a:f32[2]. let
    b:f32[2] = neg a
    b:f32[2] = sin a
  in (b,) })");
  EXPECT_THAT(Message(s), StartsWith("t.jaxpr:3:5: error: duplicate binder "
                                     "'b' (first bound at t.jaxpr:2:5)"));
}

TEST(TypeCheckTest, NegativeDimIsRefused) {
  const absl::Status s = Check(R"({ lambda ; a:f32[-2]. let
    b:f32[-2] = neg a
  in (b,) })");
  EXPECT_THAT(Message(s), HasSubstr("negative dimension -2"));
  EXPECT_THAT(Message(s), StartsWith("t.jaxpr:"));
}

TEST(TypeCheckTest, ElementCountOverflowIsRefused) {
  const absl::Status s = Check(R"({ lambda ; a:f32[4294967296,4294967296]. let
    b:f32[4294967296,4294967296] = neg a
  in (b,) })");
  EXPECT_THAT(Message(s), HasSubstr("more elements than fit"));
}

TEST(TypeCheckTest, UnknownDtypesAreParseErrorsWithLocation) {
  for (const char* dtype : {"f33", "i33", "i31", "u7"}) {
    const absl::Status s = Check(absl::StrCat(
        "{ lambda ; a:f32[2]. let\n    b:", dtype, "[2] = neg a\n  in (b,) }"));
    EXPECT_THAT(Message(s),
                StartsWith(absl::StrCat("t.jaxpr:2:7: error: unknown dtype '",
                                        dtype, "'")));
  }
  // A typed literal and an elided literal of an unknown dtype.
  EXPECT_THAT(Message(Check("{ lambda ; a:f32[2]. let\n    b:f32[2] = mul a "
                            "2.0:f33[]\n  in (b,) }")),
              HasSubstr("unknown dtype 'f33'"));
  EXPECT_THAT(Message(Check("{ lambda ; a:f32[2]. let\n    b:f32[2] = mul a "
                            "[...]:i31[2]\n  in (b,) }")),
              HasSubstr("unknown dtype 'i31'"));
}

TEST(TypeCheckTest, PassThroughDtypesStayValid) {
  EXPECT_TRUE(Check(R"({ lambda ; a:f8_e4m3fn[2] k:key<fry>[]. let
    b:f32[2] = convert_element_type[new_dtype=float32 weak_type=False] a
  in (b,) })")
                  .ok());
}

TEST(TypeCheckTest, UnknownDtypeParamIsRefused) {
  const absl::Status s = Check(R"({ lambda ; a:f32[2]. let
    b:f32[2] = convert_element_type[new_dtype=float33 weak_type=False] a
  in (b,) })");
  EXPECT_THAT(Message(s),
              StartsWith("t.jaxpr:2:5: error: 'convert_element_type': "));
}

TEST(TypeCheckTest, ComparisonsGiveBool) {
  const absl::Status s = Check(R"({ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = lt a b
  in (c,) })");
  EXPECT_THAT(Message(s), HasSubstr("expected bool[2], declared f32[2]"));
}

TEST(TypeCheckTest, ShiftsNeedIntegers) {
  const absl::Status s = Check(R"({ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = shift_left a b
  in (c,) })");
  EXPECT_THAT(Message(s), HasSubstr("operand 0 must be integer"));
}

TEST(TypeCheckTest, AxesOutOfRangeAreRefused) {
  const absl::Status s = Check(R"({ lambda ; a:f32[2,3]. let
    b:f32[2] = reduce_sum[axes=(2,) out_sharding=None] a
  in (b,) })");
  EXPECT_THAT(Message(s), HasSubstr("axes=2 is out of range for rank 2"));
}

TEST(TypeCheckTest, BadPermutationIsRefused) {
  const absl::Status s = Check(R"({ lambda ; a:f32[2,3]. let
    b:f32[3,2] = transpose[permutation=(0, 0)] a
  in (b,) })");
  EXPECT_THAT(Message(s), HasSubstr("is not a permutation"));
}

TEST(TypeCheckTest, LiteralWhereAVariableIsNeededIsRefused) {
  const absl::Status s = Check(R"({ lambda ; a:f32[3]. let
    b:f32[] = cumsum[axis=0 reverse=False] 1.0:f32[]
  in (b,) })");
  EXPECT_THAT(Message(s), HasSubstr("operand 0 must be a variable"));
}

TEST(TypeCheckTest, MissingParamIsRefused) {
  const absl::Status s = Check(R"({ lambda ; a:f32[2,3]. let
    b:f32[3,2] = transpose a
  in (b,) })");
  EXPECT_THAT(Message(s), StartsWith("t.jaxpr:2:5: error: 'transpose': "));
  EXPECT_THAT(Message(s), HasSubstr("permutation"));
}

TEST(TypeCheckTest, SymbolicDimsCompareSymbolically) {
  // concatenate of b and b+1 along 0 is 2*b + 1, however it is printed.
  EXPECT_TRUE(Check(R"({ lambda ; a:f32[b] c:f32[b + 1]. let
    d:f32[2*b + 1] = concatenate[dimension=0] a c
  in (d,) })")
                  .ok());
  const absl::Status s = Check(R"({ lambda ; a:f32[b] c:f32[b + 1]. let
    d:f32[2*b] = concatenate[dimension=0] a c
  in (d,) })");
  EXPECT_THAT(Message(s), HasSubstr("declared f32[2*b]"));
}

TEST(TypeCheckTest, NestedErrorNamesInnerAndEnclosingLines) {
  const absl::Status s = Check(R"({ lambda ; a:f32[2]. let
    b:f32[2] = pjit[
      name=f
      jaxpr={ lambda ; c:f32[2]. let
          d:f32[3] = sin c
        in (d,) }
    ] a
  in (b,) })");
  EXPECT_EQ(Message(s),
            "t.jaxpr:5:11: error: 'sin': expected f32[2], declared f32[3] "
            "(operands: f32[2]) (in the jaxpr of 'pjit' at t.jaxpr:2:5)");
}

TEST(TypeCheckTest, CalleeSignatureMustMatchOperands) {
  const absl::Status s = Check(R"({ lambda ; a:f32[3]. let
    b:f32[2] = pjit[
      name=f
      jaxpr={ lambda ; c:f32[2]. let d:f32[2] = sin c in (d,) }
    ] a
  in (b,) })");
  EXPECT_THAT(Message(s), HasSubstr("callee inputs: expected f32[3], got "
                                    "f32[2]"));
}

TEST(TypeCheckTest, WhileBodyMustKeepTheCarry) {
  const absl::Status s = Check(R"({ lambda ; a:i32[]. let
    b:i32[] = while[
      body_jaxpr={ lambda ; c:i32[]. let d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c in (d,) }
      body_nconsts=0
      cond_jaxpr={ lambda ; e:i32[]. let f:bool[] = lt e 3:i32[] in (f,) }
      cond_nconsts=0
    ] a
  in (b,) })");
  EXPECT_THAT(Message(s), HasSubstr("body_jaxpr outputs"));
}

TEST(TypeCheckTest, FamilyRulesRefuseIllTypedParams) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      // dot_general: contracting dims 3 vs 4.
      {R"({ lambda ; a:f32[2,3] b:f32[4,5]. let
    c:f32[2,5] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) })",
       "'dot_general': contracting dimensions must have equal sizes"},
      // dot_general: the result is [batch..., lhs free..., rhs free...].
      {R"({ lambda ; a:f32[2,3] b:f32[3,5]. let
    c:f32[5,2] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) })",
       "expected f32[2,5], declared f32[5,2]"},
      // reshape: 6 elements cannot become 8.
      {R"({ lambda ; a:f32[2,3]. let
    b:f32[8] = reshape[dimensions=None new_sizes=(8,)] a
  in (b,) })",
       "cannot reshape f32[2,3] to [8]"},
      // broadcast_in_dim: operand dim 3 cannot become 4.
      {R"({ lambda ; a:f32[3]. let
    b:f32[2,4] = broadcast_in_dim[broadcast_dimensions=(1,) shape=(2, 4)] a
  in (b,) })",
       "operand dimension 0 (3) must be 1 or match result dimension 1 (4)"},
      // gather: float indices.
      {R"({ lambda ; a:f32[5,3] b:f32[4,1]. let
    c:f32[4,3] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None indices_are_sorted=False mode=GatherScatterMode.CLIP
      slice_sizes=(1, 3) unique_indices=False
    ] a b
  in (c,) })",
       "'gather': operand 1 must be integer"},
      // slice past the end.
      {R"({ lambda ; a:f32[5]. let
    b:f32[3] = slice[limit_indices=(7,) start_indices=(4,) strides=None] a
  in (b,) })",
       "is out of bounds for dimension 0"},
      // scan: xs leading dim 4, length 3.
      {R"({ lambda ; a:f32[] b:f32[4]. let
    c:f32[] = scan[
      _split_transpose=False
      jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = add d e in (f,) }
      length=3 linear=(False, False) num_carry=1 num_consts=0 reverse=False
      unroll=1
    ] a b
  in (c,) })",
       "must have leading dimension length=3"},
      // select_n: a bool `which` picks between at most two cases.
      {R"({ lambda ; p:bool[] a:f32[2]. let
    b:f32[2] = select_n p a a a
  in (b,) })",
       "at most 2 cases"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(Message(Check(c.text)), HasSubstr(c.error)) << c.text;
    EXPECT_THAT(Message(Check(c.text)), StartsWith("t.jaxpr:")) << c.text;
  }
}

// The lax.linalg products added with their lowerings: each shape mismatch
// JAX's shape rules reject is a located type error, never a conversion.
TEST(TypeCheckTest, LinalgProductRulesRefuseMismatchedShapes) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      // symmetric_product: a has 3 rows, c is 4x4.
      {R"({ lambda ; a:f32[3,2] b:f32[4,4]. let
    c:f32[4,4] = symmetric_product[alpha=1.0 beta=0.0] a b
  in (c,) })",
       "symmetric_product expects a [..., n, k] and c [..., n, n]"},
      // cholesky_update: w has 3 entries for a 4x4 factor.
      {R"({ lambda ; a:f64[4,4] b:f64[3]. let
    c:f64[4,4] = cholesky_update a b
  in (c,) })",
       "cholesky_update takes a square matrix and a vector of its size"},
      // ormqr from the left: c has 4 rows, a has 5.
      {R"({ lambda ; a:f32[5,3] b:f32[3] c:f32[4,2]. let
    d:f32[4,2] = ormqr[left=True transpose=False] a b c
  in (d,) })",
       "must have as many rows as a has rows"},
      // hessenberg: a non-square matrix.
      {R"({ lambda ; a:f32[4,3]. let
    b:f32[4,3] c:f32[2] = hessenberg a
  in (b, c) })",
       "hessenberg needs square matrices"},
      // hessenberg: taus of a 5x5 matrix have 4 entries.
      {R"({ lambda ; a:f32[5,5]. let
    b:f32[5,5] c:f32[5] = hessenberg a
  in (b, c) })",
       "expected f32[4], declared f32[5]"},
      // tridiagonal: a non-square matrix.
      {R"({ lambda ; a:f32[4,3]. let
    b:f32[4,3] c:f32[4] d:f32[3] e:f32[3] = tridiagonal[lower=True] a
  in (b, c, d, e) })",
       "tridiagonal needs square matrices"},
      // tridiagonal: d and e of a complex matrix are real (JAX's
      // _tridiagonal_dtype_rule).
      {R"({ lambda ; a:c64[3,3]. let
    b:c64[3,3] c:c64[3] d:f32[2] e:c64[2] = tridiagonal[lower=True] a
  in (b, c, d, e) })",
       "expected f32[3], declared c64[3]"},
      // tridiagonal: e of a 3x3 matrix has 2 entries.
      {R"({ lambda ; a:f64[3,3]. let
    b:f64[3,3] c:f64[3] d:f64[3] e:f64[2] = tridiagonal[lower=False] a
  in (b, c, d, e) })",
       "expected f64[2], declared f64[3]"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(Message(Check(c.text)), HasSubstr(c.error)) << c.text;
    EXPECT_THAT(Message(Check(c.text)), StartsWith("t.jaxpr:")) << c.text;
  }
}

TEST(TypeCheckTest, UnknownPrimitiveIsNamedOnlyWhenAsked) {
  auto file = ParseJaxprText(R"({ lambda ; a:f32[2]. let
    b:f32[2] = frobnicate a
  in (b,) })",
                             "t.jaxpr");
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE(TypeCheckFile(*file).ok());
  TypeCheckOptions strict;
  strict.unknown_primitive_is_error = true;
  EXPECT_THAT(Message(TypeCheckFile(*file, strict)),
              HasSubstr("'frobnicate': no type rule"));
}

}  // namespace
}  // namespace jax2onnx::jaxpr

namespace jax2onnx::jaxpr {
namespace {

TEST(CheckedSizeTest, NegativeAndOverflowingShapesAreErrors) {
  EXPECT_EQ(*CheckedNumElements({2, 3, 4}), 24);
  EXPECT_EQ(*CheckedNumElements({}), 1);
  // A zero dim makes the count 0 even when the other dims overflow.
  EXPECT_EQ(*CheckedNumElements({int64_t{1} << 62, 0, int64_t{1} << 62}), 0);
  EXPECT_THAT(std::string(CheckedNumElements({2, -1}).status().message()),
              HasSubstr("negative dimension -1"));
  EXPECT_THAT(
      std::string(CheckedNumElements({int64_t{1} << 32, int64_t{1} << 32})
                      .status()
                      .message()),
      HasSubstr("more elements than fit"));
  // 2^30 f32 elements are 4 GiB: over a 1 GiB cap.
  EXPECT_FALSE(CheckedByteSize(DType::kF32, {int64_t{1} << 30}, 1 << 30).ok());
  EXPECT_EQ(*CheckedByteSize(DType::kF32, {256}, 1 << 30), 1024);
}

}  // namespace
}  // namespace jax2onnx::jaxpr
