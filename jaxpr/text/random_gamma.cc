#include "jaxpr/text/random_gamma.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_join.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/decomposition.h"
#include "jaxpr/var_names.h"

namespace jax2onnx::jaxpr {
namespace {

// What _uniform/_normal_real/_gamma_one need of the float dtype (numpy's
// finfo and the constants as the Python floats JAX converts).
struct FloatInfo {
  std::string t;          // f32
  std::string u;          // u32
  std::string numpy;      // float32
  int bits;               // finfo.bits
  int nmant;              // finfo.nmant
  std::string one_bits;   // np.array(1.0, dtype).view(uint)
  std::string lo;         // np.nextafter(-1., 0.) in the dtype
};

// Fresh JAX-style variable names (a, b, ..., z, ba, bb, ...), unique across
// the whole text.
class Namer {
 public:
  std::string Fresh() { return JaxVarName(next_++); }

 private:
  int next_ = 26;  // two letters: never a one-letter name
};

// Equation lines of one jaxpr body.
class Body {
 public:
  explicit Body(Namer& namer) : namer_(namer) {}
  std::string Eq(const std::string& type, const std::string& rhs) {
    std::string v = namer_.Fresh();
    absl::StrAppend(&text_, "  ", v, ":", type, " = ", rhs, "\n");
    return v;
  }
  // An equation with several binders (`types` one per result; "_" drops).
  std::vector<std::string> EqN(const std::vector<std::string>& types,
                               const std::string& rhs) {
    std::vector<std::string> vars, binders;
    for (const std::string& t : types) {
      vars.push_back(namer_.Fresh());
      binders.push_back(absl::StrCat(vars.back(), ":", t));
    }
    absl::StrAppend(&text_, "  ", absl::StrJoin(binders, " "), " = ", rhs,
                    "\n");
    return vars;
  }
  std::string Fresh() { return namer_.Fresh(); }
  const std::string& text() const { return text_; }
  Namer& namer() { return namer_; }

 private:
  Namer& namer_;
  std::string text_;
};

std::string Lit(const std::string& value, const std::string& type) {
  return absl::StrCat(value, ":", type, "[]");
}

// Key i of a key<fry>[n] array as a scalar key (the unpacking of _split).
std::string KeyAt(Body& b, const std::string& keys, int i) {
  std::string one =
      b.Eq("key<fry>[1]", absl::StrCat("slice[limit_indices=(", i + 1,
                                       ",) start_indices=(", i,
                                       ",) strides=None] ", keys));
  return b.Eq("key<fry>[]", absl::StrCat("squeeze[dimensions=(0,)] ", one));
}

// random.uniform(key, (), dtype, minval, maxval): _uniform.
std::string Uniform(Body& b, const FloatInfo& f, const std::string& key,
                    const std::string& minval, const std::string& maxval) {
  const std::string T = f.t + "[]";
  const std::string U = f.u + "[]";
  std::string bits = b.Eq(U, absl::StrCat("random_bits[bit_width=", f.bits,
                                          " shape=()] ", key));
  std::string shifted =
      b.Eq(U, absl::StrCat("shift_right_logical ", bits, " ",
                           Lit(absl::StrCat(f.bits - f.nmant), f.u)));
  std::string ored = b.Eq(U, absl::StrCat("or ", shifted, " ",
                                          Lit(f.one_bits, f.u)));
  std::string floats = b.Eq(
      T, absl::StrCat("bitcast_convert_type[new_dtype=", f.numpy, "] ", ored));
  std::string minus1 =
      b.Eq(T, absl::StrCat("sub ", floats, " ", Lit("1.0", f.t)));
  std::string lo = Lit(minval, f.t);
  std::string range =
      b.Eq(T, absl::StrCat("sub ", Lit(maxval, f.t), " ", lo));
  std::string scaled = b.Eq(T, absl::StrCat("mul ", minus1, " ", range));
  std::string shifted_f = b.Eq(T, absl::StrCat("add ", scaled, " ", lo));
  return b.Eq(T, absl::StrCat("max ", lo, " ", shifted_f));
}

// random.normal(key, (), dtype): _normal_real.
std::string Normal(Body& b, const FloatInfo& f, const std::string& key) {
  std::string u = Uniform(b, f, key, f.lo, "1.0");
  std::string e = b.Eq(f.t + "[]", absl::StrCat("erf_inv ", u));
  return b.Eq(f.t + "[]",
              absl::StrCat("mul ", Lit("1.4142135623730951", f.t), " ", e));
}

// _gamma_one(key, alpha, log_space) as a jaxpr `{ lambda ; k a. let ... }`.
std::string GammaOne(Namer& namer, const FloatInfo& f, bool log_space) {
  const std::string T = f.t + "[]";
  const std::string K = "key<fry>[]";
  const std::string third = Lit("0.3333333333333333", f.t);
  Body b(namer);
  const std::string key = b.Fresh();
  const std::string alpha = b.Fresh();
  std::string boost_mask =
      b.Eq("bool[]", absl::StrCat("ge ", alpha, " ", Lit("1.0", f.t)));
  std::string alpha_p1 =
      b.Eq(T, absl::StrCat("add ", alpha, " ", Lit("1.0", f.t)));
  std::string boosted = b.Eq(
      T, absl::StrCat("select_n ", boost_mask, " ", alpha_p1, " ", alpha));
  std::string d = b.Eq(T, absl::StrCat("sub ", boosted, " ", third));
  std::string sqrt_d = b.Eq(T, absl::StrCat("sqrt ", d));
  std::string c = b.Eq(T, absl::StrCat("div ", third, " ", sqrt_d));
  std::string split = b.Eq("key<fry>[2]",
                           absl::StrCat("random_split[shape=(2,)] ", key));
  std::string loop_key = KeyAt(b, split, 0);
  std::string subkey = KeyAt(b, split, 1);

  // _cond_fn(d; key, X, V, U).
  Body cond(namer);
  const std::string cd = cond.Fresh(), ck = cond.Fresh(), cx = cond.Fresh(),
                    cv = cond.Fresh(), cu = cond.Fresh();
  std::string cond_text;
  {
    std::string xx = cond.Eq(T, absl::StrCat("mul ", cx, " ", cx));
    std::string sq =
        cond.Eq(T, absl::StrCat("mul ", Lit("0.0331", f.t), " ", xx));
    std::string t1 =
        cond.Eq(T, absl::StrCat("sub ", Lit("1.0", f.t), " ", sq));
    std::string c1 = cond.Eq("bool[]", absl::StrCat("ge ", cu, " ", t1));
    std::string log_u = cond.Eq(T, absl::StrCat("log ", cu));
    std::string half_x =
        cond.Eq(T, absl::StrCat("mul ", cx, " ", Lit("0.5", f.t)));
    std::string one_m_v =
        cond.Eq(T, absl::StrCat("sub ", Lit("1.0", f.t), " ", cv));
    std::string log_v = cond.Eq(T, absl::StrCat("log ", cv));
    std::string sum = cond.Eq(T, absl::StrCat("add ", one_m_v, " ", log_v));
    std::string d_sum = cond.Eq(T, absl::StrCat("mul ", cd, " ", sum));
    std::string rhs = cond.Eq(T, absl::StrCat("add ", half_x, " ", d_sum));
    std::string c2 = cond.Eq("bool[]", absl::StrCat("ge ", log_u, " ", rhs));
    std::string both = cond.Eq("bool[]", absl::StrCat("and ", c1, " ", c2));
    cond_text = absl::StrCat("{ lambda ; ", cd, ":", T, " ", ck, ":", K, " ",
                             cx, ":", T, " ", cv, ":", T, " ", cu, ":", T,
                             ". let\n", cond.text(), "  in (", both, ",) }");
  }

  // _next_kxv(c; key, x, v) and its condition v <= 0.
  Body inner(namer);
  const std::string ic = inner.Fresh(), ik = inner.Fresh(),
                    ix = inner.Fresh(), iv = inner.Fresh();
  std::string inner_text;
  {
    std::string s = inner.Eq("key<fry>[2]",
                             absl::StrCat("random_split[shape=(2,)] ", ik));
    std::string next = KeyAt(inner, s, 0);
    std::string sub = KeyAt(inner, s, 1);
    std::string x = Normal(inner, f, sub);
    std::string xc = inner.Eq(T, absl::StrCat("mul ", x, " ", ic));
    std::string v = inner.Eq(T, absl::StrCat("add ", Lit("1.0", f.t), " ", xc));
    inner_text = absl::StrCat("{ lambda ; ", ic, ":", T, " ", ik, ":", K, " ",
                              ix, ":", T, " ", iv, ":", T, ". let\n",
                              inner.text(), "  in (", next, ", ", x, ", ", v,
                              ") }");
  }
  Body inner_cond(namer);
  const std::string jk = inner_cond.Fresh(), jx = inner_cond.Fresh(),
                    jv = inner_cond.Fresh();
  std::string le =
      inner_cond.Eq("bool[]", absl::StrCat("le ", jv, " ", Lit("0.0", f.t)));
  const std::string inner_cond_text =
      absl::StrCat("{ lambda ; ", jk, ":", K, " ", jx, ":", T, " ", jv, ":", T,
                   ". let\n", inner_cond.text(), "  in (", le, ",) }");

  // _body_fn(c; key, X, V, U).
  Body outer(namer);
  const std::string oc = outer.Fresh(), ok = outer.Fresh(),
                    ox = outer.Fresh(), ov = outer.Fresh(),
                    ou = outer.Fresh();
  std::string outer_text;
  {
    std::string s = outer.Eq("key<fry>[3]",
                             absl::StrCat("random_split[shape=(3,)] ", ok));
    std::string next = KeyAt(outer, s, 0);
    std::string x_key = KeyAt(outer, s, 1);
    std::string u_key = KeyAt(outer, s, 2);
    std::vector<std::string> kxv = outer.EqN(
        {K, T, T},
        absl::StrCat("while[body_jaxpr=", inner_text,
                     " body_nconsts=1 cond_jaxpr=", inner_cond_text,
                     " cond_nconsts=0] ", oc, " ", x_key, " ",
                     Lit("0.0", f.t), " ", Lit("-1.0", f.t)));
    std::string big_x =
        outer.Eq(T, absl::StrCat("mul ", kxv[1], " ", kxv[1]));
    std::string vv = outer.Eq(T, absl::StrCat("mul ", kxv[2], " ", kxv[2]));
    std::string big_v = outer.Eq(T, absl::StrCat("mul ", vv, " ", kxv[2]));
    std::string u = Uniform(outer, f, u_key, "0.0", "1.0");
    outer_text = absl::StrCat("{ lambda ; ", oc, ":", T, " ", ok, ":", K, " ",
                              ox, ":", T, " ", ov, ":", T, " ", ou, ":", T,
                              ". let\n", outer.text(), "  in (", next, ", ",
                              big_x, ", ", big_v, ", ", u, ") }");
  }
  std::vector<std::string> result = b.EqN(
      {K, T, T, T},
      absl::StrCat("while[body_jaxpr=", outer_text,
                   " body_nconsts=1 cond_jaxpr=", cond_text,
                   " cond_nconsts=1] ", d, " ", c, " ", loop_key, " ",
                   Lit("0.0", f.t), " ", Lit("1.0", f.t), " ",
                   Lit("2.0", f.t)));
  const std::string& big_v = result[2];
  std::string sample;
  std::string inv_alpha =
      b.Eq(T, absl::StrCat("div ", Lit("1.0", f.t), " ", alpha));
  if (log_space) {
    // -exponential(subkey) = log1p(-u).
    std::string u = Uniform(b, f, subkey, "0.0", "1.0");
    std::string neg_u = b.Eq(T, absl::StrCat("neg ", u));
    std::string l1p = b.Eq(T, absl::StrCat("log1p ", neg_u));
    std::string expo = b.Eq(T, absl::StrCat("neg ", l1p));
    std::string log_samples = b.Eq(T, absl::StrCat("neg ", expo));
    std::string is_zero = b.Eq(
        "bool[]", absl::StrCat("eq ", log_samples, " ", Lit("0.0", f.t)));
    std::string mask =
        b.Eq("bool[]", absl::StrCat("or ", boost_mask, " ", is_zero));
    std::string scaled =
        b.Eq(T, absl::StrCat("mul ", log_samples, " ", inv_alpha));
    std::string log_boost = b.Eq(T, absl::StrCat("select_n ", mask, " ",
                                                 scaled, " ",
                                                 Lit("0.0", f.t)));
    std::string log_d = b.Eq(T, absl::StrCat("log ", d));
    std::string log_v = b.Eq(T, absl::StrCat("log ", big_v));
    std::string sum = b.Eq(T, absl::StrCat("add ", log_d, " ", log_v));
    sample = b.Eq(T, absl::StrCat("add ", sum, " ", log_boost));
  } else {
    std::string u = Uniform(b, f, subkey, "0.0", "1.0");
    std::string samples =
        b.Eq(T, absl::StrCat("sub ", Lit("1.0", f.t), " ", u));
    std::string pw = b.Eq(T, absl::StrCat("pow ", samples, " ", inv_alpha));
    std::string boost = b.Eq(T, absl::StrCat("select_n ", boost_mask, " ", pw,
                                             " ", Lit("1.0", f.t)));
    std::string dv = b.Eq(T, absl::StrCat("mul ", d, " ", big_v));
    sample = b.Eq(T, absl::StrCat("mul ", dv, " ", boost));
  }
  return absl::StrCat("{ lambda ; ", key, ":", K, " ", alpha, ":", T,
                      ". let\n", b.text(), "  in (", sample, ",) }");
}

std::string Dims(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return absl::StrCat("(", dims[0], ",)");
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

}  // namespace

absl::StatusOr<std::string> RandomGammaJaxprText(const Aval& key,
                                                 const Aval& a,
                                                 bool log_space) {
  if (!IsSupportedKey(key)) {
    return absl::UnimplementedError(absl::StrCat(
        "random_gamma: keys of type ", key.ToString(),
        " are not supported (only key<fry>, key<fry4>, key<phx2>, "
        "key<phx4>)"));
  }
  FloatInfo f;
  if (a.dtype == DType::kF32) {
    f = {"f32", "u32", "float32", 32, 23, "1065353216",
         "-0.9999999403953552"};
  } else if (a.dtype == DType::kF64) {
    f = {"f64", "u64", "float64", 64, 52, "4607182418800017408",
         "-0.9999999999999999"};
  } else {
    return absl::UnimplementedError(
        absl::StrCat("random_gamma on ", a.ToString(),
                     ": only float32 and float64 are supported"));
  }
  std::vector<int64_t> key_dims, a_dims;
  for (const DimExpr& d : key.shape) {
    if (!d.is_constant()) {
      return absl::UnimplementedError(
          "random_gamma with symbolic shapes is not supported");
    }
    key_dims.push_back(d.constant_value());
  }
  for (const DimExpr& d : a.shape) {
    if (!d.is_constant()) {
      return absl::UnimplementedError(
          "random_gamma with symbolic shapes is not supported");
    }
    a_dims.push_back(d.constant_value());
  }
  if (key_dims.size() > a_dims.size() ||
      !std::equal(key_dims.begin(), key_dims.end(), a_dims.begin())) {
    return absl::InvalidArgumentError(
        absl::StrCat("random_gamma: the key shape of ", key.ToString(),
                     " is not a prefix of the shape of ", a.ToString()));
  }
  int64_t num_keys = 1, per_key = 1;
  for (size_t i = 0; i < a_dims.size(); ++i) {
    (i < key_dims.size() ? num_keys : per_key) *= a_dims[i];
  }
  const int64_t n = num_keys * per_key;
  Namer namer;
  const std::string body = GammaOne(namer, f, log_space);
  Body top(namer);
  const std::string k = top.Fresh(), alpha = top.Fresh();
  const std::string a_type = a.ToString();
  // keys.flatten(); vmap(_split, (0, None))(keys, per_key).flatten().
  std::string flat_keys =
      key_dims.size() == 1
          ? k
          : top.Eq(absl::StrCat("key<fry>[", num_keys, "]"),
                   absl::StrCat("reshape[dimensions=None new_sizes=(",
                                num_keys, ",) sharding=None] ", k));
  std::string split_keys;
  if (key_dims.empty()) {
    split_keys =
        top.Eq(absl::StrCat("key<fry>[", n, "]"),
               absl::StrCat("random_split[shape=(", per_key, ",)] ", k));
  } else {
    std::string grid = top.Eq(
        absl::StrCat("key<fry>[", num_keys, ",", per_key, "]"),
        absl::StrCat("random_split[shape=(", per_key, ",)] ", flat_keys));
    split_keys = top.Eq(absl::StrCat("key<fry>[", n, "]"),
                        absl::StrCat("reshape[dimensions=None new_sizes=(", n,
                                     ",) sharding=None] ", grid));
  }
  std::string alphas =
      a_dims.size() == 1
          ? alpha
          : top.Eq(absl::StrCat(f.t, "[", n, "]"),
                   absl::StrCat("reshape[dimensions=None new_sizes=(", n,
                                ",) sharding=None] ", alpha));
  std::vector<std::string> samples = top.EqN(
      {absl::StrCat(f.t, "[", n, "]")},
      absl::StrCat("scan[_split_transpose=False jaxpr=", body, " length=", n,
                   " linear=(False, False) num_carry=0 num_consts=0 "
                   "reverse=False unroll=1] ",
                   split_keys, " ", alphas));
  std::string out =
      a_dims.size() == 1
          ? samples[0]
          : top.Eq(a_type, absl::StrCat("reshape[dimensions=None new_sizes=",
                                        Dims(a_dims), " sharding=None] ",
                                        samples[0]));
  const std::string text =
      absl::StrCat("{ lambda ; ", k, ":", key.ToString(), " ", alpha, ":",
                   a_type, ". let\n", top.text(), "  in (", out, ",) }");
  // _gamma_impl and _gamma_one call random.split/uniform/normal, which are
  // the same primitives for every implementation: only the key type
  // differs.
  return absl::StrReplaceAll(text, {{"key<fry>", key.dtype_name}});
}

absl::StatusOr<const ClosedJaxpr*> RandomGammaDecomposition(const Eqn& eqn) {
  if (eqn.inputs.size() != 2 || eqn.inputs[0].is_literal() ||
      eqn.inputs[1].is_literal()) {
    return absl::InvalidArgumentError(
        "random_gamma expects two variable operands (key, a)");
  }
  bool log_space = false;
  if (const ParamValue* p = eqn.params.Find("log_space")) {
    log_space = p->ToString() == "True";
  }
  J2O_ASSIGN_OR_RETURN(
      std::string text,
      RandomGammaJaxprText(eqn.inputs[0].var->aval, eqn.inputs[1].var->aval,
                           log_space));
  return ParseDecompositionOnce(text, "<random_gamma decomposition>");
}

}  // namespace jax2onnx::jaxpr
