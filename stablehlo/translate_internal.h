// Internal interface between the translation core (translate.cc) and the
// per-family op translators (translate_*.cc). Each family file registers
// its ops in the table with Register*Ops; a translator reads one operation
// through an OpContext, emits equations and binds the op's results.
#ifndef JAX2ONNX_STABLEHLO_TRANSLATE_INTERNAL_H_
#define JAX2ONNX_STABLEHLO_TRANSLATE_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/array.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/params.h"
#include "stablehlo/mlir_ast.h"

namespace jax2onnx::stablehlo {

using jaxpr::Atom;
using jaxpr::Aval;
using jaxpr::DType;
using jaxpr::ParamValue;
using jaxpr::Params;

// A value of the program: an atom (var or literal) and its type.
struct Val {
  Atom atom;
  Aval aval;
};

class Translator;

// The value of a `!stablehlo.token` (translate_misc.cc): no atom; only
// after_all / create_token read or make one.
Val TokenVal();
inline bool IsToken(const Val& v) {
  return v.aval.kind == Aval::Kind::kToken;
}

// Where the op being translated sits: in which emulated process of
// interpreter.run_parallel (translate_parallel.cc) and in which
// sdy.manual_computation (translate_sdy.cc). Each translation owns its own,
// so concurrent translations never see each other's.
struct ProcessPosition {
  int64_t replica = 0;
  int64_t partition = 0;
};
struct ManualMesh;
struct Enclosing {
  const ProcessPosition* process = nullptr;
  const ManualMesh* manual_mesh = nullptr;
};

// The equations of one jaxpr under construction and the names visible in
// it. Region scopes capture outer values as extra leading invars; scopes of
// inlined calls share their caller's jaxpr but not its names.
class Scope {
 public:
  Scope(Translator* tr, jaxpr::ClosedJaxpr* jaxpr, Scope* parent,
        bool captures)
      : tr_(tr), jaxpr_(jaxpr), parent_(parent), captures_(captures) {}

  Translator* tr() const { return tr_; }
  jaxpr::ClosedJaxpr* jaxpr() const { return jaxpr_; }
  Scope* parent() const { return parent_; }
  // The innermost scope that owns `jaxpr` as a region (or the root).
  void Bind(const std::string& name, Val v) { values_[name] = std::move(v); }
  absl::StatusOr<Val> Lookup(const std::string& name, Loc loc);
  // Tuple values are kept as the names of their elements (which may be
  // tuples themselves); they never reach the jaxpr.
  void BindTuple(const std::string& name, std::vector<std::string> elems) {
    tuples_[name] = std::move(elems);
  }
  const std::vector<std::string>* TupleOf(const std::string& name) const {
    auto it = tuples_.find(name);
    if (it != tuples_.end()) return &it->second;
    return parent_ != nullptr && !captures_ ? parent_->TupleOf(name) : nullptr;
  }
  // (outer value, inner var) in capture order.
  const std::vector<std::pair<Val, jaxpr::Var*>>& captured() const {
    return captured_list_;
  }

 private:
  Translator* tr_;
  jaxpr::ClosedJaxpr* jaxpr_;
  Scope* parent_;
  bool captures_;
  absl::flat_hash_map<std::string, Val> values_;
  absl::flat_hash_map<std::string, std::vector<std::string>> tuples_;
  std::vector<std::pair<Val, jaxpr::Var*>> captured_list_;
};

// A translated region: a jaxpr whose invars are the captured outer values
// followed by the block arguments.
struct RegionJaxpr {
  std::shared_ptr<jaxpr::ClosedJaxpr> jaxpr;
  std::vector<Val> captured;  // outer values, in invar order
};

class OpContext {
 public:
  OpContext(Translator* tr, Scope* scope, const Operation& op)
      : tr_(tr), scope_(scope), op_(op) {}

  const Operation& op() const { return op_; }
  Scope* scope() const { return scope_; }
  Translator* tr() const { return tr_; }
  // This translation's enclosing process and manual computation.
  Enclosing& enclosing();
  int num_inputs() const { return static_cast<int>(op_.operands.size()); }
  absl::StatusOr<Val> Input(int i);
  // The declared type of result i as an aval.
  absl::StatusOr<Aval> ResultAval(int i);
  int num_results() const { return static_cast<int>(op_.results.size()); }
  void Bind(int i, Val v);

  // Emits `outs = prim[params] inputs` and returns the outputs.
  std::vector<Val> Emit(const std::string& primitive, Params params,
                        const std::vector<Val>& inputs,
                        const std::vector<Aval>& out_avals);
  Val Emit1(const std::string& primitive, Params params,
            const std::vector<Val>& inputs, const Aval& out_aval) {
    return Emit(primitive, std::move(params), inputs, {out_aval})[0];
  }
  // Inlines function @symbol on this op's operands, binding its results.
  absl::Status CallFunction(const std::string& symbol);
  // Function @symbol of the module being translated, or nullptr.
  const Func* FindFunction(const std::string& symbol) const;
  // Translates `op` in `scope` (a scope of this translation), as the
  // translation of a block does (interpreter.run_parallel's processes).
  absl::Status TranslateIn(Scope* scope, const Operation& op);
  // A fresh variable owned by `j` (a jaxpr of this translation).
  jaxpr::Var* NewVar(jaxpr::ClosedJaxpr* j, const Aval& aval);
  // Scalar literal of a dtype.
  Val Scalar(DType dtype, double value);
  Val ScalarInt(DType dtype, int64_t value);
  // A constant array as a value (literal when scalar, else a constvar).
  absl::StatusOr<Val> Constant(const jaxpr::Array& array);
  // The value of a constant (literal or constvar), or nullopt.
  std::optional<jaxpr::Array> ConstValue(const Val& v);
  // Translates region `index` with block-argument avals from its block.
  absl::StatusOr<RegionJaxpr> Region(int index);
  absl::StatusOr<RegionJaxpr> RegionOf(const stablehlo::Region& region);
  // Region `index` whose block arguments are `names` (the pretty while's
  // iter_args; empty: the block's own) with types `avals`.
  absl::StatusOr<RegionJaxpr> RegionWithArgs(
      int index, const std::vector<std::string>& names,
      const std::vector<Aval>& avals);

  absl::Status Error(absl::string_view message) const;
  absl::Status Unsupported(absl::string_view what) const;

  // Attribute helpers (errors name the op and attribute).
  absl::StatusOr<absl::string_view> Attr(absl::string_view key) const;
  absl::StatusOr<std::vector<int64_t>> IntListAttr(absl::string_view key) const;
  absl::StatusOr<int64_t> IntAttr(absl::string_view key) const;
  // The dense literal of a stablehlo.constant: its pretty operand
  // (`stablehlo.constant dense<...>`) or its generic `value` attribute.
  absl::StatusOr<absl::string_view> ConstantLiteral() const;

  // Symbolic shapes (translate_symbolic.cc): the dimension expressions a
  // small integer tensor holds (constants, get_dimension_size and
  // arithmetic on it), or nullopt when unknown.
  std::optional<std::vector<jaxpr::DimExpr>> DimValues(const Val& v);
  void SetDimValues(const Val& v, std::vector<jaxpr::DimExpr> dims);
  // `v` (a bool) holds `a == b` of two dimension values.
  void SetDimEquality(const Val& v, jaxpr::DimExpr a, jaxpr::DimExpr b);
  std::optional<std::pair<jaxpr::DimExpr, jaxpr::DimExpr>> DimEquality(
      const Val& v);
  // `v` (a bool) holds `a <direction> b` (EQ NE LT LE GT GE) of two
  // dimension values: what a shape_assertion's predicate compares.
  struct DimComparison {
    std::string direction;
    jaxpr::DimExpr a, b;
  };
  void SetDimComparison(const Val& v, DimComparison c);
  std::optional<DimComparison> GetDimComparison(const Val& v);
  // A step of JAX's integer floor division or remainder of dimension
  // values (jnp.floor_divide / jnp.remainder, what eval_dynamic_shape
  // emits for floordiv and mod): `kind` names what the scalar `v` holds of
  // (a, b), e.g. "div" for a truncating divide(a, b); translate_symbolic.cc
  // assembles the steps into floordiv(a, b) / mod(a, b).
  struct IntFact {
    std::string kind;
    jaxpr::DimExpr a, b;
  };
  void SetIntFact(const Val& v, IntFact f);
  std::optional<IntFact> GetIntFact(const Val& v);
  // The whole text of the file being translated.
  const std::string& FileText() const;
  // The `?` symbol `from` of @main is the dimension variable `to`.
  void NoteSymbolName(const std::string& from, const std::string& to);

 private:
  Translator* tr_;
  Scope* scope_;
  const Operation& op_;
};

using OpTranslator = absl::Status (*)(OpContext& ctx);
using TranslatorTable = absl::flat_hash_map<std::string, OpTranslator>;

void RegisterElementwiseOps(TranslatorTable& table);
void RegisterShapeOps(TranslatorTable& table);
void RegisterIndexingOps(TranslatorTable& table);
void RegisterReduceOps(TranslatorTable& table);
void RegisterControlOps(TranslatorTable& table);
void RegisterCustomCallOps(TranslatorTable& table);
void RegisterChloOps(TranslatorTable& table);
void RegisterDotConvOps(TranslatorTable& table);
void RegisterMiscOps(TranslatorTable& table);
void RegisterDynamicOps(TranslatorTable& table);
void RegisterSdyOps(TranslatorTable& table);
void RegisterParallelOps(TranslatorTable& table);

// f8E4M3 / f8E3M4 values carried in f32 (translate_carried.cc): whether
// an op's types name them; a checked or input array decoded to f32 (other
// arrays unchanged); `x` rounded to `type`'s format when it is one;
// `op` translated by `translate` with those types read as f32 and each such
// result rounded to its format.
bool MentionsCarriedFloat(const Operation& op);
bool IsCarriedType(const MlirType& type);
absl::StatusOr<jaxpr::Array> DecodeCarried(const jaxpr::Array& a);
std::optional<Val> RoundIfCarried(OpContext& ctx, const Val& x,
                                  const MlirType& type);
absl::Status TranslateCarried(
    OpContext& ctx,
    const std::function<absl::Status(const Operation&)>& translate);

// Uniform quantized types carried as their storage integers
// (translate_quant.cc): whether an op's types name one; `op` translated
// with quantize/dequantize around `translate` of its float form.
bool MentionsQuantizedType(const Operation& op);
absl::Status TranslateQuantized(
    OpContext& ctx,
    const std::function<absl::Status(const Operation&)>& translate);

// custom_call @lapack_* (translate_lapack.cc).
absl::Status LapackCustomCall(OpContext& ctx, const std::string& target);

// ---- symbolic dims (translate_symbolic.cc) ----

// The placeholder symbol of a `?` dim whose expression is not known yet.
inline constexpr char kUnknownDim[] = "?";
bool IsUnknownDim(const jaxpr::DimExpr& d);
bool HasUnknownDim(const Aval& aval);
// A shape param as JAX prints it: ints, symbols (`(b, 4)`), expressions.
ParamValue DimsParam(const std::vector<jaxpr::DimExpr>& dims);
// The values of shape operand #`operand` (dynamic_gather's slice sizes,
// dynamic_pad's padding): constants, or dimension values computed from the
// argument shapes (symbolic under shape polymorphism); else unsupported,
// naming `what`.
absl::StatusOr<std::vector<jaxpr::DimExpr>> DimOperand(OpContext& ctx,
                                                       int operand,
                                                       absl::string_view what);
// Fills the `?` dims of result `aval` that the op determines: the shape
// operand of dynamic_broadcast_in_dim / dynamic_reshape / dynamic_iota,
// the operands of elementwise ops. Others stay placeholders for Emit.
absl::Status ResolveResultDims(OpContext& ctx, Aval* aval);
// After an op is translated: the dim values of its result.
void PropagateDimValues(OpContext& ctx);

// ---- shared helpers (translate_util.cc) ----

// MLIR element type -> dtype; an error for types ONNX cannot hold.
absl::StatusOr<DType> ElementDType(absl::string_view element);
absl::StatusOr<Aval> AvalOfType(const MlirType& type);
// Parses a dense<...> / array<...> / [..] value for `type`.
absl::StatusOr<jaxpr::Array> ParseDense(absl::string_view raw,
                                        const MlirType& type);
// "[1, 2]", "array<i64: 1, 2>", "dense<[1, 2]> : tensor<2xi64>", "[]".
absl::StatusOr<std::vector<int64_t>> ParseIntList(absl::string_view raw);
// "1 : i64", "1" -> 1; "true" -> 1.
absl::StatusOr<int64_t> ParseIntScalar(absl::string_view raw);
// Field `key = value` inside "#stablehlo.gather<...>" and similar.
std::optional<absl::string_view> StructField(absl::string_view raw,
                                             absl::string_view key);
// Integer matrix attribute `key` (`dense<[[0, 1], [2, -1]]> : ...`, a
// splat or a flat list as one row), row by row.
absl::StatusOr<std::vector<std::vector<int64_t>>> IntMatrixAttr(
    OpContext& ctx, absl::string_view key);
// Splits "a, b, [c, d]" at depth-0 commas.
std::vector<absl::string_view> SplitTopLevel(absl::string_view s, char sep);
absl::string_view StripSpace(absl::string_view s);

// Param builders in the shapes JAX prints.
ParamValue IntTuple(const std::vector<int64_t>& v);
ParamValue IntList(const std::vector<int64_t>& v);
ParamValue PairTuple(const std::vector<std::pair<int64_t, int64_t>>& v);
ParamValue Name(absl::string_view n);
ParamValue NumpyDType(DType d);
ParamValue JaxprParam(std::shared_ptr<jaxpr::ClosedJaxpr> j);
std::vector<int64_t> StaticDims(const Aval& aval);
Aval ShapedAval(DType dtype, const std::vector<int64_t>& shape);
Aval WithDType(const Aval& aval, DType dtype);
// `v` as `dtype` (convert_element_type; `v` itself when it has it).
Val ConvertTo(OpContext& ctx, const Val& v, DType dtype);
// Shape primitives with the params JAX prints (static result shapes).
Val EmitBroadcastInDim(OpContext& ctx, const Val& x,
                       const std::vector<int64_t>& broadcast_dimensions,
                       const Aval& out);
Val EmitReshape(OpContext& ctx, const Val& x, const Aval& out);
Val EmitIota(OpContext& ctx, const Aval& out, int64_t dimension);

}  // namespace jax2onnx::stablehlo

#endif  // JAX2ONNX_STABLEHLO_TRANSLATE_INTERNAL_H_
