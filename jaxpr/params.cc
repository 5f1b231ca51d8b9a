#include "jaxpr/params.h"

#include <charconv>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace jax2onnx::jaxpr {
namespace {

JaxprToStringFn g_jaxpr_to_string = nullptr;
JaxprEqualFn g_jaxpr_equal = nullptr;

std::string KindName(ParamValue::Kind kind) {
  switch (kind) {
    case ParamValue::Kind::kNone:
      return "None";
    case ParamValue::Kind::kBool:
      return "a bool";
    case ParamValue::Kind::kInt:
      return "an int";
    case ParamValue::Kind::kFloat:
      return "a float";
    case ParamValue::Kind::kName:
      return "a name";
    case ParamValue::Kind::kString:
      return "a string";
    case ParamValue::Kind::kTuple:
      return "a tuple";
    case ParamValue::Kind::kList:
      return "a list";
    case ParamValue::Kind::kDict:
      return "a dict";
    case ParamValue::Kind::kCall:
      return "a call";
    case ParamValue::Kind::kJaxpr:
      return "a jaxpr";
    case ParamValue::Kind::kJaxprTuple:
      return "a tuple of jaxprs";
    case ParamValue::Kind::kOpaque:
      return "opaque text";
  }
  return "?";
}

absl::Status TypeError(absl::string_view what, absl::string_view expected,
                       const ParamValue& got) {
  std::string shown = got.ToString();
  if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
  return absl::InvalidArgumentError(absl::StrCat(what, ": expected ", expected,
                                                 ", got ", KindName(got.kind()),
                                                 " '", shown, "'"));
}

std::string PythonFloatRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string Quoted(const std::string& s) { return absl::StrCat("'", s, "'"); }

}  // namespace

void SetJaxprToStringHook(JaxprToStringFn fn) { g_jaxpr_to_string = fn; }
void SetJaxprEqualHook(JaxprEqualFn fn) { g_jaxpr_equal = fn; }

ParamValue ParamValue::None() { return ParamValue(); }

ParamValue ParamValue::Bool(bool v) {
  ParamValue p;
  p.kind_ = Kind::kBool;
  p.int_value_ = v ? 1 : 0;
  return p;
}

ParamValue ParamValue::Int(int64_t v, std::string text) {
  ParamValue p;
  p.kind_ = Kind::kInt;
  p.int_value_ = v;
  p.float_value_ = static_cast<double>(v);
  p.text_ = std::move(text);
  return p;
}

ParamValue ParamValue::Float(double v, std::string text) {
  ParamValue p;
  p.kind_ = Kind::kFloat;
  p.float_value_ = v;
  p.text_ = std::move(text);
  return p;
}

ParamValue ParamValue::Name(std::string name) {
  ParamValue p;
  p.kind_ = Kind::kName;
  p.text_ = std::move(name);
  return p;
}

ParamValue ParamValue::String(std::string value) {
  ParamValue p;
  p.kind_ = Kind::kString;
  p.text_ = std::move(value);
  return p;
}

ParamValue ParamValue::Tuple(std::vector<ParamValue> items) {
  ParamValue p;
  p.kind_ = Kind::kTuple;
  p.items_ = std::move(items);
  return p;
}

ParamValue ParamValue::List(std::vector<ParamValue> items) {
  ParamValue p;
  p.kind_ = Kind::kList;
  p.items_ = std::move(items);
  return p;
}

ParamValue ParamValue::Dict(
    std::vector<std::pair<ParamValue, ParamValue>> items) {
  ParamValue p;
  p.kind_ = Kind::kDict;
  p.dict_items_ = std::move(items);
  return p;
}

ParamValue ParamValue::Call(
    std::string callee, std::vector<std::pair<std::string, ParamValue>> args) {
  ParamValue p;
  p.kind_ = Kind::kCall;
  p.text_ = std::move(callee);
  p.call_args_ = std::move(args);
  return p;
}

ParamValue ParamValue::Jaxpr(std::shared_ptr<ClosedJaxpr> jaxpr,
                             std::string ref_name) {
  ParamValue p;
  p.kind_ = Kind::kJaxpr;
  p.jaxpr_ = std::move(jaxpr);
  p.text_ = std::move(ref_name);
  return p;
}

ParamValue ParamValue::JaxprTuple(std::vector<ParamValue> jaxprs) {
  ParamValue p;
  p.kind_ = Kind::kJaxprTuple;
  p.items_ = std::move(jaxprs);
  return p;
}

ParamValue ParamValue::Opaque(std::string text) {
  ParamValue p;
  p.kind_ = Kind::kOpaque;
  p.text_ = std::move(text);
  return p;
}

const ParamValue* ParamValue::Field(absl::string_view name) const {
  if (kind_ != Kind::kCall) return nullptr;
  for (const auto& [key, value] : call_args_) {
    if (key == name) return &value;
  }
  return nullptr;
}

absl::StatusOr<int64_t> ParamValue::AsInt(absl::string_view what) const {
  if (kind_ == Kind::kInt) return int_value_;
  // np.int64(3) and friends parse as calls with one positional int.
  if (kind_ == Kind::kCall && call_args_.size() == 1 &&
      call_args_[0].first.empty() &&
      call_args_[0].second.kind() == Kind::kInt) {
    return call_args_[0].second.int_value();
  }
  return TypeError(what, "an int", *this);
}

absl::StatusOr<double> ParamValue::AsFloat(absl::string_view what) const {
  if (kind_ == Kind::kFloat || kind_ == Kind::kInt) return float_value_;
  if (kind_ == Kind::kCall && call_args_.size() == 1 &&
      call_args_[0].first.empty()) {
    return call_args_[0].second.AsFloat(what);
  }
  return TypeError(what, "a number", *this);
}

absl::StatusOr<bool> ParamValue::AsBool(absl::string_view what) const {
  if (kind_ == Kind::kBool) return bool_value();
  // numpy >= 2 reprs: np.True_, np.False_, np.bool_(True) (kept as a name /
  // call so they print back as written).
  if (kind_ == Kind::kName &&
      (text_ == "np.True_" || text_ == "np.False_" ||
       text_ == "numpy.True_" || text_ == "numpy.False_")) {
    return absl::EndsWith(text_, "True_");
  }
  if (kind_ == Kind::kCall && call_args_.size() == 1 &&
      call_args_[0].first.empty() &&
      (text_ == "np.bool_" || text_ == "numpy.bool_")) {
    return call_args_[0].second.AsBool(what);
  }
  return TypeError(what, "a bool", *this);
}

absl::StatusOr<std::vector<int64_t>> ParamValue::AsIntList(
    absl::string_view what) const {
  if (kind_ != Kind::kTuple && kind_ != Kind::kList) {
    return TypeError(what, "a tuple of ints", *this);
  }
  std::vector<int64_t> out;
  out.reserve(items_.size());
  for (const ParamValue& item : items_) {
    auto v = item.AsInt(what);
    if (!v.ok()) return TypeError(what, "a tuple of ints", *this);
    out.push_back(*v);
  }
  return out;
}

absl::StatusOr<DType> ParamValue::AsDType(absl::string_view what) const {
  if (kind_ == Kind::kName || kind_ == Kind::kString) {
    // `dtype('float32')`-style values are calls; plain names are common.
    if (auto d = DTypeFromAnyName(text_)) return *d;
  }
  if (kind_ == Kind::kCall && call_args_.size() == 1) {
    return call_args_[0].second.AsDType(what);
  }
  return TypeError(what, "a dtype name", *this);
}

std::string ParamValue::ToString() const {
  switch (kind_) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return bool_value() ? "True" : "False";
    case Kind::kInt:
      return text_.empty() ? absl::StrCat(int_value_) : text_;
    case Kind::kFloat:
      return text_.empty() ? PythonFloatRepr(float_value_) : text_;
    case Kind::kName:
    case Kind::kOpaque:
      return text_;
    case Kind::kString:
      return Quoted(text_);
    case Kind::kTuple: {
      std::vector<std::string> parts;
      for (const auto& item : items_) parts.push_back(item.ToString());
      if (parts.size() == 1) return absl::StrCat("(", parts[0], ",)");
      return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
    }
    case Kind::kList: {
      std::vector<std::string> parts;
      for (const auto& item : items_) parts.push_back(item.ToString());
      return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
    }
    case Kind::kDict: {
      std::vector<std::string> parts;
      for (const auto& [k, v] : dict_items_) {
        parts.push_back(absl::StrCat(k.ToString(), ": ", v.ToString()));
      }
      return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    }
    case Kind::kCall: {
      std::vector<std::string> parts;
      for (const auto& [k, v] : call_args_) {
        parts.push_back(k.empty() ? v.ToString()
                                  : absl::StrCat(k, "=", v.ToString()));
      }
      // PartitionSpec's repr is its partitions tuple's: `P('x',)`.
      const bool one_tuple =
          (text_ == "P" || text_ == "PartitionSpec") &&
          call_args_.size() == 1 && call_args_[0].first.empty();
      return absl::StrCat(text_, "(", absl::StrJoin(parts, ", "),
                          one_tuple ? ",)" : ")");
    }
    case Kind::kJaxpr:
      if (!text_.empty()) return text_;
      if (g_jaxpr_to_string != nullptr && jaxpr_ != nullptr) {
        return g_jaxpr_to_string(*jaxpr_);
      }
      return "{ lambda ... }";
    case Kind::kJaxprTuple: {
      std::vector<std::string> parts;
      for (const auto& item : items_) parts.push_back(item.ToString());
      return absl::StrCat("( ", absl::StrJoin(parts, " "), " )");
    }
  }
  return "?";
}

bool operator==(const ParamValue& a, const ParamValue& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case ParamValue::Kind::kNone:
      return true;
    case ParamValue::Kind::kBool:
    case ParamValue::Kind::kInt:
      return a.int_value_ == b.int_value_;
    case ParamValue::Kind::kFloat:
      return (std::isnan(a.float_value_) && std::isnan(b.float_value_)) ||
             a.float_value_ == b.float_value_;
    case ParamValue::Kind::kName:
    case ParamValue::Kind::kString:
    case ParamValue::Kind::kOpaque:
      return a.text_ == b.text_;
    case ParamValue::Kind::kTuple:
    case ParamValue::Kind::kList:
    case ParamValue::Kind::kJaxprTuple:
      return a.items_ == b.items_;
    case ParamValue::Kind::kDict:
      return a.dict_items_ == b.dict_items_;
    case ParamValue::Kind::kCall:
      return a.text_ == b.text_ && a.call_args_ == b.call_args_;
    case ParamValue::Kind::kJaxpr:
      if (a.text_ != b.text_) return false;
      if (a.jaxpr_ == b.jaxpr_) return true;
      if (a.jaxpr_ == nullptr || b.jaxpr_ == nullptr) return false;
      return g_jaxpr_equal != nullptr && g_jaxpr_equal(*a.jaxpr_, *b.jaxpr_);
  }
  return false;
}

void Params::Set(std::string key, ParamValue value) {
  for (auto& [k, v] : entries_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

const ParamValue* Params::Find(absl::string_view key) const {
  for (const auto& [k, v] : entries_) {
    if (k == key) return &v;
  }
  return nullptr;
}

absl::StatusOr<const ParamValue*> Params::Get(absl::string_view key) const {
  const ParamValue* v = Find(key);
  if (v == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("missing param '", key, "'"));
  }
  return v;
}

namespace {
std::string What(absl::string_view key) {
  return absl::StrCat("param '", key, "'");
}
}  // namespace

absl::StatusOr<int64_t> Params::GetInt(absl::string_view key) const {
  auto v = Get(key);
  if (!v.ok()) return v.status();
  return (*v)->AsInt(What(key));
}

absl::StatusOr<double> Params::GetFloat(absl::string_view key) const {
  auto v = Get(key);
  if (!v.ok()) return v.status();
  return (*v)->AsFloat(What(key));
}

absl::StatusOr<bool> Params::GetBool(absl::string_view key) const {
  auto v = Get(key);
  if (!v.ok()) return v.status();
  return (*v)->AsBool(What(key));
}

absl::StatusOr<std::string> Params::GetName(absl::string_view key) const {
  auto v = Get(key);
  if (!v.ok()) return v.status();
  const ParamValue& p = **v;
  if (p.kind() == ParamValue::Kind::kName ||
      p.kind() == ParamValue::Kind::kString ||
      (p.kind() == ParamValue::Kind::kJaxpr && !p.text().empty())) {
    return p.text();
  }
  return TypeError(What(key), "a name", p);
}

absl::StatusOr<std::vector<int64_t>> Params::GetIntList(
    absl::string_view key) const {
  auto v = Get(key);
  if (!v.ok()) return v.status();
  return (*v)->AsIntList(What(key));
}

absl::StatusOr<std::optional<std::vector<int64_t>>> Params::GetOptionalIntList(
    absl::string_view key) const {
  const ParamValue* v = Find(key);
  if (v == nullptr || v->is_none()) return std::nullopt;
  auto list = v->AsIntList(What(key));
  if (!list.ok()) return list.status();
  return std::optional<std::vector<int64_t>>(*std::move(list));
}

absl::StatusOr<DType> Params::GetDType(absl::string_view key) const {
  auto v = Get(key);
  if (!v.ok()) return v.status();
  return (*v)->AsDType(What(key));
}

absl::StatusOr<const ClosedJaxpr*> Params::GetJaxpr(
    absl::string_view key) const {
  auto v = Get(key);
  if (!v.ok()) return v.status();
  if ((*v)->kind() != ParamValue::Kind::kJaxpr || (*v)->jaxpr() == nullptr) {
    return TypeError(What(key), "a jaxpr", **v);
  }
  return (*v)->jaxpr().get();
}

absl::StatusOr<std::vector<const ClosedJaxpr*>> Params::GetJaxprs(
    absl::string_view key) const {
  auto v = Get(key);
  if (!v.ok()) return v.status();
  const ParamValue& p = **v;
  std::vector<const ClosedJaxpr*> out;
  if (p.kind() == ParamValue::Kind::kJaxpr && p.jaxpr() != nullptr) {
    out.push_back(p.jaxpr().get());
    return out;
  }
  if (p.kind() != ParamValue::Kind::kJaxprTuple &&
      p.kind() != ParamValue::Kind::kTuple) {
    return TypeError(What(key), "a tuple of jaxprs", p);
  }
  for (const ParamValue& item : p.items()) {
    if (item.kind() != ParamValue::Kind::kJaxpr || item.jaxpr() == nullptr) {
      return TypeError(What(key), "a tuple of jaxprs", p);
    }
    out.push_back(item.jaxpr().get());
  }
  return out;
}

absl::StatusOr<const ParamValue*> Params::GetCall(
    absl::string_view key, absl::string_view callee) const {
  auto v = Get(key);
  if (!v.ok()) return v.status();
  if ((*v)->kind() != ParamValue::Kind::kCall ||
      (!callee.empty() && (*v)->text() != callee)) {
    return TypeError(
        What(key),
        callee.empty() ? std::string("a call") : absl::StrCat(callee, "(...)"),
        **v);
  }
  return *v;
}

}  // namespace jax2onnx::jaxpr
