#include "jaxpr/text/jax_releases.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jaxpr/prng.h"

namespace jax2onnx::jaxpr {
namespace {

int IndexOf(const std::string& release) {
  const std::vector<std::string>& all = KnownJaxReleases();
  auto it = std::find(all.begin(), all.end(), release);
  return it == all.end() ? -1 : static_cast<int>(it - all.begin());
}

class Collector {
 public:
  void Add(const std::string& form, const std::string& oldest,
           const std::string& newest) {
    if (!seen_.insert(form).second) return;
    evidence_.push_back({form, oldest, newest});
  }
  void Walk(const ClosedJaxpr& j) {
    if (!visited_.insert(&j).second) return;
    for (const Eqn& eqn : j.eqns) {
      Visit(eqn);
      for (const auto& [key, value] : eqn.params.entries()) WalkParam(value);
    }
    for (const Atom& a : j.outvars) Literal(a);
  }
  std::vector<ReleaseEvidence> evidence() && { return std::move(evidence_); }

 private:
  void WalkParam(const ParamValue& v) {
    if (v.kind() == ParamValue::Kind::kJaxpr && v.jaxpr()) Walk(*v.jaxpr());
    for (const ParamValue& item : v.items()) WalkParam(item);
  }
  void Literal(const Atom& a) {
    if (!a.is_literal()) return;
    if (a.literal->aval) {
      Add("typed literals (2.0:f32[])", "0.6.1", "");
    } else {
      Add("untyped literals (a bare 2.0)", "", "0.6.0");
    }
  }
  void Visit(const Eqn& eqn) {
    for (const Atom& a : eqn.inputs) Literal(a);
    const std::string& p = eqn.primitive;
    const Params& params = eqn.params;
    // Primitives that appear (or disappear) at a release.
    static const struct {
      const char* primitive;
      const char* oldest;
      const char* newest;
    } kPrimitives[] = {
        {"pjit", "", "0.6.2"},         {"jit", "0.7.0", ""},
        {"remat_opt", "0.4.32", ""},   {"square", "0.4.36", ""},
        {"split", "0.4.38", ""},       {"composite", "0.5.0", ""},
        {"ragged_dot", "", "0.5.3"},   {"ragged_dot_general", "0.6.0", ""},
        {"dce_sink", "0.7.0", ""},     {"debug_print", "0.7.2", ""},
        {"empty2", "0.7.2", ""},       {"xla_metadata_call", "0.8.0", ""},
        {"tile", "0.9.0", ""},         {"stack", "0.10.1", ""},
        {"unstack", "0.10.1", ""},     {"eval_jaxpr", "main", ""},
        {"threefry4x32", "0.10.2", ""}, {"philox2x32", "0.10.2", ""},
        {"philox4x32", "0.10.2", ""},  {"preduced", "0.8.1", ""},
        {"reduced_vary_cast_p", "0.8.1", ""},
        {"vary_unreduced_cast_p", "0.8.1", ""},
        {"unreduced_psum", "0.8.1", ""},  {"unreduced_pmax", "0.8.1", ""},
        {"unreduced_pmin", "0.8.1", ""},
    };
    for (const auto& k : kPrimitives) {
      if (p == k.primitive) Add(p, k.oldest, k.newest);
    }
    // The PRNG implementations JAX 0.10.2 added (key<fry4>, key<phx2>,
    // key<phx4>), wherever their keys are made.
    for (const Var* v : eqn.outputs) {
      const std::optional<KeyImpl> impl = KeyImplOf(v->aval);
      if (impl.has_value() && *impl != KeyImpl::kThreefry2x32) {
        Add(absl::StrCat("key<", KeyTag(*impl), "> keys"), "0.10.2", "");
      }
    }
    // Params that appear, disappear or hide at a release.
    if (p == "scan") {
      if (params.Has("ft_in")) {
        Add("scan[ft_in ft_out]", "0.11.0", "");
      } else if (params.Has("linear")) {
        Add("scan[linear ...]", "", "0.9.2");
      } else if (params.Has("num_consts")) {
        Add("scan[num_consts num_carry] without linear", "0.10.0", "0.10.2");
      }
    }
    if (p == "cond" && params.Has("linear")) {
      Add("cond[linear ...]", "", "0.4.30");
    }
    if (p == "rng_bit_generator") {
      if (params.Has("out_sharding")) {
        Add("rng_bit_generator[out_sharding ...]", "0.6.0", "");
      } else {
        Add("rng_bit_generator without out_sharding", "", "0.5.3");
      }
    }
    if (p == "top_k") {
      if (params.Has("axis")) {
        Add("top_k[axis k]", "0.8.1", "");
      } else {
        Add("top_k[k] without axis", "", "0.8.0");
      }
    }
    if (p == "reduce_sum") {
      if (params.Has("out_sharding")) {
        Add("reduce_sum[axes out_sharding]", "0.8.0", "");
      } else {
        Add("reduce_sum without out_sharding", "", "0.7.2");
      }
    }
    if (p == "iota") {
      if (params.Has("sharding")) {
        Add("iota[... sharding]", "0.4.35", "");
      } else {
        Add("iota without sharding", "", "0.4.34");
      }
    }
    if (p == "broadcast_in_dim") {
      if (!params.Has("shape")) {
        Add("bare broadcast_in_dim (no shape)", "0.9.1", "");
      } else if (params.Has("sharding")) {
        Add("broadcast_in_dim[... shape sharding]", "0.4.36", "0.9.0");
      } else {
        Add("broadcast_in_dim[... shape] without sharding", "", "0.4.35");
      }
    }
    if (p == "gather") {
      if (const ParamValue* dn = params.Find("dimension_numbers");
          dn != nullptr && dn->kind() == ParamValue::Kind::kCall) {
        if (dn->Field("operand_batching_dims") != nullptr) {
          Add("GatherDimensionNumbers(... operand_batching_dims)", "0.4.35",
              "");
        } else {
          Add("GatherDimensionNumbers without operand_batching_dims", "",
              "0.4.34");
        }
      }
    }
    if (p == "custom_jvp_call") {
      if (params.Has("name")) {
        Add("custom_jvp_call[name ...]", "0.6.2", "");
      } else {
        Add("custom_jvp_call without name", "", "0.6.1");
      }
    }
    // lax.mul gained `out_dtype` in 0.10.0 (jax commit 00003c2d) together
    // with the pp rule that hides it when None: only a non-None out_dtype
    // prints, and no earlier release has the param.
    if (p == "mul" && params.Has("out_dtype")) {
      Add("mul[out_dtype=...]", "0.10.0", "");
    }
    // qr binds `use_magma` from 0.5.1 (jax/_src/lax/linalg.py); 0.5.0 binds
    // only full_matrices and pivoting.
    if (p == "qr") {
      if (params.Has("use_magma")) {
        Add("qr[... use_magma]", "0.5.1", "");
      } else {
        Add("qr without use_magma", "", "0.5.0");
      }
    }
    // eig's params (jax/_src/lax/linalg.py eig_p.bind): the two compute_*
    // flags only up to 0.4.35, use_magma from 0.4.36 (jax ccb331707e),
    // implementation instead from 0.8.0 (97b001a9a9), enable_eigvec_derivs
    // as well from 0.10.1 (12dc6d3bfb).
    if (p == "eig") {
      if (params.Has("enable_eigvec_derivs")) {
        Add("eig[... enable_eigvec_derivs]", "0.10.1", "");
      } else if (params.Has("implementation")) {
        Add("eig[... implementation] without enable_eigvec_derivs", "0.8.0",
            "0.10.0");
      } else if (params.Has("use_magma")) {
        Add("eig[... use_magma]", "0.4.36", "0.7.2");
      } else {
        Add("eig[compute_left_eigenvectors compute_right_eigenvectors]", "",
            "0.4.35");
      }
    }
  }

  std::set<std::string> seen_;
  std::set<const ClosedJaxpr*> visited_;
  std::vector<ReleaseEvidence> evidence_;
};

}  // namespace

const std::vector<std::string>& KnownJaxReleases() {
  static const std::vector<std::string>* releases =
      new std::vector<std::string>{
          "0.4.30", "0.4.31", "0.4.32", "0.4.33", "0.4.34", "0.4.35",
          "0.4.36", "0.4.37", "0.4.38", "0.5.0",  "0.5.1",  "0.5.2",
          "0.5.3",  "0.6.0",  "0.6.1",  "0.6.2",  "0.7.0",  "0.7.1",
          "0.7.2",  "0.8.0",  "0.8.1",  "0.8.2",  "0.8.3",  "0.9.0",
          "0.9.1",  "0.9.2",  "0.10.0", "0.10.1", "0.10.2", "0.11.0",
          "main"};
  return *releases;
}

ReleaseRange JaxReleaseRange(const JaxprFile& file) {
  Collector c;
  if (!file.shared.empty()) {
    c.Add("hoisted `let NAME = { lambda ... } in` jaxprs", "0.10.2", "");
  }
  for (const auto& [name, j] : file.shared) {
    if (j) c.Walk(*j);
  }
  if (file.main) c.Walk(*file.main);
  ReleaseRange r;
  r.evidence = std::move(c).evidence();
  const int last = static_cast<int>(KnownJaxReleases().size()) - 1;
  int lo = 0, hi = last;
  for (const ReleaseEvidence& e : r.evidence) {
    if (!e.oldest.empty()) lo = std::max(lo, IndexOf(e.oldest));
    if (!e.newest.empty()) hi = std::min(hi, IndexOf(e.newest));
  }
  r.consistent = lo <= hi;
  if (r.consistent) {
    r.oldest = KnownJaxReleases()[lo];
    r.newest = KnownJaxReleases()[hi];
  }
  return r;
}

}  // namespace jax2onnx::jaxpr
