// Equation parameters as a structured value tree. JAX prints params as
// Python reprs (`(1, 0)`, `GatherScatterMode.CLIP`, `float32`,
// `GatherDimensionNumbers(offset_dims=(1,), ...)`, `{ lambda ... }`); the
// parser turns them into ParamValues and keeps the source text of leaves so
// the printer can reproduce them exactly.
#ifndef JAX2ONNX_JAXPR_PARAMS_H_
#define JAX2ONNX_JAXPR_PARAMS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/dtype.h"

namespace jax2onnx::jaxpr {

class ClosedJaxpr;

class ParamValue {
 public:
  enum class Kind {
    kNone,        // None
    kBool,        // True / False
    kInt,         // 3, -2147483648, np.int64(1) (text keeps the spelling)
    kFloat,       // 1.0, 1e-05, inf, -inf, nan
    kName,        // bare or dotted identifier: float32, GatherScatterMode.CLIP,
                  // Precision.DEFAULT, f (a name that is not a jaxpr ref)
    kString,      // quoted string 'z' (value without quotes)
    kTuple,       // (a, b) or (a,) or ()
    kList,        // [a, b]
    kDict,        // {k: v, ...}; items() holds key/value pairs
    kCall,        // Name(k=v, ...) or Name(a, b): NamedTuple-style reprs
    kJaxpr,       // { lambda ... } or a reference to a shared jaxpr
    kJaxprTuple,  // ( {...} {...} ) cond branches, no commas
    kOpaque,      // anything else, kept as text: <function f at 0x...>
  };

  ParamValue() = default;

  static ParamValue None();
  static ParamValue Bool(bool v);
  static ParamValue Int(int64_t v, std::string text = "");
  static ParamValue Float(double v, std::string text = "");
  static ParamValue Name(std::string name);
  static ParamValue String(std::string value);
  static ParamValue Tuple(std::vector<ParamValue> items);
  static ParamValue List(std::vector<ParamValue> items);
  static ParamValue Dict(std::vector<std::pair<ParamValue, ParamValue>> items);
  // Keyword fields have a name; positional ones have an empty name.
  static ParamValue Call(std::string callee,
                         std::vector<std::pair<std::string, ParamValue>> args);
  // `ref_name` is set when the jaxpr was printed as a shared-name reference.
  static ParamValue Jaxpr(std::shared_ptr<ClosedJaxpr> jaxpr,
                          std::string ref_name = "");
  static ParamValue JaxprTuple(std::vector<ParamValue> jaxprs);
  static ParamValue Opaque(std::string text);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }

  bool bool_value() const { return int_value_ != 0; }
  int64_t int_value() const { return int_value_; }
  double float_value() const { return float_value_; }
  // kName: the identifier; kString: the unquoted value; kOpaque: the text;
  // kCall: the callee; kJaxpr: the shared name ("" when inline); kInt/kFloat:
  // the source spelling when known.
  const std::string& text() const { return text_; }
  const std::vector<ParamValue>& items() const { return items_; }
  const std::vector<std::pair<ParamValue, ParamValue>>& dict_items() const {
    return dict_items_;
  }
  const std::vector<std::pair<std::string, ParamValue>>& call_args() const {
    return call_args_;
  }
  const std::shared_ptr<ClosedJaxpr>& jaxpr() const { return jaxpr_; }

  // kCall keyword field, or nullptr.
  const ParamValue* Field(absl::string_view name) const;

  // Typed views; errors describe what was found. `what` names the value in
  // messages (e.g. "param 'axes'").
  absl::StatusOr<int64_t> AsInt(absl::string_view what = "value") const;
  absl::StatusOr<double> AsFloat(absl::string_view what = "value") const;
  absl::StatusOr<bool> AsBool(absl::string_view what = "value") const;
  absl::StatusOr<std::vector<int64_t>> AsIntList(
      absl::string_view what = "value") const;
  absl::StatusOr<DType> AsDType(absl::string_view what = "value") const;

  // Python-repr text (the source spelling for leaves where known). Jaxprs
  // print as their shared name, or `{ lambda ... }` via the printer hook.
  std::string ToString() const;

  // Structural equality (jaxprs compared by the printer's text when inline).
  friend bool operator==(const ParamValue& a, const ParamValue& b);

 private:
  Kind kind_ = Kind::kNone;
  int64_t int_value_ = 0;
  double float_value_ = 0;
  std::string text_;
  std::vector<ParamValue> items_;
  std::vector<std::pair<ParamValue, ParamValue>> dict_items_;
  std::vector<std::pair<std::string, ParamValue>> call_args_;
  std::shared_ptr<ClosedJaxpr> jaxpr_;
};

// Printer hook used by ParamValue::ToString for inline jaxprs; the text
// library installs it. Without it inline jaxprs print as `{ lambda ... }`.
using JaxprToStringFn = std::string (*)(const ClosedJaxpr&);
void SetJaxprToStringHook(JaxprToStringFn fn);
// Structural equality of jaxprs, installed alongside (default: identity).
using JaxprEqualFn = bool (*)(const ClosedJaxpr&, const ClosedJaxpr&);
void SetJaxprEqualHook(JaxprEqualFn fn);

// Ordered key=value list of one equation.
class Params {
 public:
  Params() = default;

  void Set(std::string key, ParamValue value);
  const ParamValue* Find(absl::string_view key) const;
  bool Has(absl::string_view key) const { return Find(key) != nullptr; }
  const std::vector<std::pair<std::string, ParamValue>>& entries() const {
    return entries_;
  }
  bool empty() const { return entries_.empty(); }

  // Typed accessors; a missing key or wrong type is an InvalidArgument
  // error that names the param and what it holds.
  absl::StatusOr<const ParamValue*> Get(absl::string_view key) const;
  absl::StatusOr<int64_t> GetInt(absl::string_view key) const;
  absl::StatusOr<double> GetFloat(absl::string_view key) const;
  absl::StatusOr<bool> GetBool(absl::string_view key) const;
  // Name or string text ("float32", "GatherScatterMode.CLIP", "f").
  absl::StatusOr<std::string> GetName(absl::string_view key) const;
  absl::StatusOr<std::vector<int64_t>> GetIntList(absl::string_view key) const;
  // None (or a missing key) gives nullopt.
  absl::StatusOr<std::optional<std::vector<int64_t>>> GetOptionalIntList(
      absl::string_view key) const;
  absl::StatusOr<DType> GetDType(absl::string_view key) const;
  absl::StatusOr<const ClosedJaxpr*> GetJaxpr(absl::string_view key) const;
  // A jaxpr tuple (cond branches); a single jaxpr gives a list of one.
  absl::StatusOr<std::vector<const ClosedJaxpr*>> GetJaxprs(
      absl::string_view key) const;
  // A NamedTuple-style call value, optionally checking the callee name.
  absl::StatusOr<const ParamValue*> GetCall(
      absl::string_view key, absl::string_view callee = "") const;

  friend bool operator==(const Params& a, const Params& b) {
    return a.entries_ == b.entries_;
  }

 private:
  std::vector<std::pair<std::string, ParamValue>> entries_;
};

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_PARAMS_H_
