// fft, triangular_solve, rng_bit_generator, tuples, tokens.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

absl::Status Fft(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  std::string type;
  if (auto t = ctx.op().Attr("type")) type = std::string(StripSpace(*t));
  if (auto t = ctx.op().Attr("fft_type")) {
    for (const char* k : {"IRFFT", "RFFT", "IFFT", "FFT"}) {
      if (absl::StrContains(*t, absl::StrCat(" ", k, ">"))) {
        type = k;
        break;
      }
    }
  }
  if (type != "FFT" && type != "IFFT" && type != "RFFT" && type != "IRFFT") {
    return ctx.Error(absl::StrCat("unknown fft type `", type, "`"));
  }
  std::vector<int64_t> lengths;
  if (ctx.op().Attr("length")) {
    J2O_ASSIGN_OR_RETURN(lengths, ctx.IntListAttr("length"));
  } else {
    J2O_ASSIGN_OR_RETURN(lengths, ctx.IntListAttr("fft_length"));
  }
  Params p;
  p.Set("fft_lengths", IntTuple(lengths));
  p.Set("fft_type", Name(absl::StrCat("FftType.", type)));
  ctx.Bind(0, ctx.Emit1("fft", std::move(p), {x}, out));
  return absl::OkStatus();
}

absl::Status TriangularSolve(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val b, ctx.Input(1));
  auto flag = [&](absl::string_view k) {
    auto v = ctx.op().Attr(k);
    return v.has_value() && absl::StartsWith(*v, "true");
  };
  bool transpose = false, conjugate = false;
  if (auto t = ctx.op().Attr("transpose_a")) {
    if (absl::StrContains(*t, "ADJOINT")) {
      transpose = conjugate = true;
    } else if (absl::StrContains(*t, "NO_TRANSPOSE")) {
    } else if (absl::StrContains(*t, "TRANSPOSE")) {
      transpose = true;
    }
  }
  Params p;
  p.Set("conjugate_a", ParamValue::Bool(conjugate));
  p.Set("left_side", ParamValue::Bool(flag("left_side")));
  p.Set("lower", ParamValue::Bool(flag("lower")));
  p.Set("transpose_a", ParamValue::Bool(transpose));
  p.Set("unit_diagonal", ParamValue::Bool(flag("unit_diagonal")));
  // f16/bf16 systems are solved in f32 and the solution rounded to the
  // element type (lax's triangular_solve lowers f32/f64 only; LAPACK has no
  // half precision). XLA's own expansion rounds intermediate results to
  // the element type, so the two may differ by a few of its ulps.
  const DType d = b.aval.dtype;
  if (d == DType::kF16 || d == DType::kBF16) {
    Val a32 = ConvertTo(ctx, a, DType::kF32);
    Val b32 = ConvertTo(ctx, b, DType::kF32);
    Val x32 = ctx.Emit1("triangular_solve", std::move(p), {a32, b32}, b32.aval);
    ctx.Bind(0, ConvertTo(ctx, x32, d));
    return absl::OkStatus();
  }
  ctx.Bind(0, ctx.Emit1("triangular_solve", std::move(p), {a, b}, b.aval));
  return absl::OkStatus();
}

absl::Status Tuple(OpContext& ctx) {
  if (ctx.num_results() != 1) return ctx.Error("expects one result");
  ctx.scope()->BindTuple(ctx.op().results[0], ctx.op().operands);
  return absl::OkStatus();
}

absl::Status GetTupleElement(OpContext& ctx) {
  const Operation& op = ctx.op();
  if (op.operands.size() != 1 || op.results.size() != 1) return ctx.Error("expects one operand");
  int64_t index = -1;
  if (!op.positional.empty()) {  // %t[1]
    absl::string_view s = op.positional[0];
    auto v = ParseIntList(s);
    if (v.ok() && v->size() == 1) index = (*v)[0];
  } else if (op.Attr("index")) {
    J2O_ASSIGN_OR_RETURN(index, ctx.IntAttr("index"));
  }
  const std::vector<std::string>* elems = ctx.scope()->TupleOf(op.operands[0]);
  if (elems == nullptr) return ctx.Error(absl::StrCat(op.operands[0], " is not a tuple"));
  if (index < 0 || index >= static_cast<int64_t>(elems->size())) return ctx.Error("index out of range");
  const std::string& name = (*elems)[index];
  if (const std::vector<std::string>* inner = ctx.scope()->TupleOf(name)) {
    ctx.scope()->BindTuple(op.results[0], *inner);
    return absl::OkStatus();
  }
  J2O_ASSIGN_OR_RETURN(Val v, ctx.scope()->Lookup(name, op.loc));
  ctx.Bind(0, v);
  return absl::OkStatus();
}

// rng_bit_generator -> lax rng_bit_generator (XLA's CPU generators; the
// primitive comes with the jaxpr frontend's rng_bit_generator support):
// `algorithm = THREE_FRY` (pretty) or `rng_algorithm =
// #stablehlo<rng_algorithm THREE_FRY>` (generic); results (new state, bits).
absl::Status RngBitGenerator(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val state, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Aval new_state, ctx.ResultAval(0));
  J2O_ASSIGN_OR_RETURN(Aval bits, ctx.ResultAval(1));
  absl::string_view raw;
  if (auto a = ctx.op().Attr("algorithm")) {
    raw = *a;
  } else {
    J2O_ASSIGN_OR_RETURN(raw, ctx.Attr("rng_algorithm"));
  }
  std::string algorithm;
  for (const char* name : {"THREE_FRY", "PHILOX", "DEFAULT"}) {
    if (absl::StrContains(raw, name)) {
      algorithm = absl::StrCat("RNG_", name);
      break;
    }
  }
  if (algorithm.empty()) {
    return ctx.Error(absl::StrCat("unknown rng algorithm `", raw, "`"));
  }
  Params p;
  p.Set("algorithm", Name(algorithm));
  p.Set("dtype", NumpyDType(bits.dtype));
  p.Set("out_sharding", ParamValue::None());
  p.Set("shape", IntTuple(StaticDims(bits)));
  std::vector<Val> outs =
      ctx.Emit("rng_bit_generator", std::move(p), {state}, {new_state, bits});
  ctx.Bind(0, outs[0]);
  ctx.Bind(1, outs[1]);
  return absl::OkStatus();
}

// after_all / create_token: a `!stablehlo.token` orders side effects, and a
// program ONNX can express has none (host I/O, infeed/outfeed/send/recv, is
// refused), so a token is a value without an atom that no equation reads.
// TranslateOp refuses every other op with a token operand or result, and
// Run a token among @main's arguments or results: a token survives only
// where nothing consumes it, so dropping it changes no value.
absl::Status AfterAll(OpContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    if (v.aval.kind != Aval::Kind::kToken) {
      return ctx.Error(absl::StrCat("operand #", i, " is not a token"));
    }
  }
  if (ctx.num_results() != 1) return ctx.Error("expects one result");
  ctx.Bind(0, TokenVal());
  return absl::OkStatus();
}

}  // namespace

Val TokenVal() {
  Val v;
  v.aval.kind = Aval::Kind::kToken;
  v.aval.opaque_text = "Tok";
  return v;
}

void RegisterMiscOps(TranslatorTable& table) {
  table["stablehlo.after_all"] = &AfterAll;
  table["stablehlo.create_token"] = &AfterAll;
  table["stablehlo.rng_bit_generator"] = &RngBitGenerator;
  table["stablehlo.fft"] = &Fft;
  table["stablehlo.triangular_solve"] = &TriangularSolve;
  table["stablehlo.tuple"] = &Tuple;
  table["stablehlo.get_tuple_element"] = &GetTupleElement;
}

}  // namespace jax2onnx::stablehlo
