// The state discharge pass's rewriter (discharge.h), private to
// jaxpr/state. One Discharger rebuilds every jaxpr of a file, ref by ref:
//   discharge.cc               the walk: equations in order, run_state,
//                              nested bodies, equations that take no ref
//   discharge_access.cc        get/swap/addupdate/empty_ref on a ref's value
//                              (NDIndexer -> dynamic_slice/update_slice)
//   discharge_control_flow.cc  refs threaded through cond/while/scan and
//                              jit/pjit/closed_call/core_call bodies
#ifndef JAX2ONNX_JAXPR_STATE_DISCHARGER_H_
#define JAX2ONNX_JAXPR_STATE_DISCHARGER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr::discharge_internal {

// Calls `fn` on every jaxpr a param holds (nested tuples, lists, calls).
void ForEachNestedJaxpr(const ParamValue& value,
                        const std::function<void(ClosedJaxpr*)>& fn);

// True when `jaxpr` or a jaxpr nested in its params binds a state primitive
// (`seen` guards shared bodies).
bool JaxprUsesState(const ClosedJaxpr& jaxpr,
                    absl::flat_hash_set<const ClosedJaxpr*>& seen);

// `(a,)` or `(a, b)`: a shape as JAX prints it in params.
std::string DimsText(const std::vector<std::string>& dims);

// Call primitives whose body a ref may be passed to (ThreadCall).
inline bool IsRefCall(absl::string_view p) {
  return p == "jit" || p == "pjit" || p == "closed_call" || p == "core_call";
}

// An i32 scalar literal.
Atom IntLiteral(int64_t v);

class Discharger {
 public:
  explicit Discharger(std::string path) : path_(std::move(path)) {}

  absl::Status DischargeJaxpr(ClosedJaxpr* jaxpr, bool is_main);

 private:
  // One jaxpr being rebuilt.
  struct Rewrite {
    ClosedJaxpr* owner;
    absl::flat_hash_map<const Var*, Atom> subst;  // var -> its value now
    absl::flat_hash_map<const Var*, Atom> refs;   // ref -> current value
  };

  // How an NDIndexer selects from a ref's value.
  struct Slicing {
    bool trivial = true;
    std::vector<Atom> starts;
    std::vector<std::string> sizes;  // printed dims, points as 1
    std::vector<DimExpr> size_dims;
    std::vector<std::string> point_dims;
  };

  // A cond/while/scan being rewritten to carry ref values.
  struct Threading {
    Eqn out;                       // the rewritten equation
    std::vector<Atom> operands;    // its operands (mapped, then relaid)
    std::vector<Atom> ref_values;  // current values of the carried refs
    std::vector<const Var*> carried;
    std::vector<Aval> value_avals;  // the carried refs' value types
    bool extra_first = false;       // ref finals before the results
  };

  // discharge.cc: the walk.
  Atom Map(const Rewrite& rw, const Atom& a) const;
  absl::Status Error(const Eqn& eqn, absl::string_view message) const;
  std::string Fresh(absl::string_view hint);
  absl::StatusOr<Atom> Emit(Rewrite& rw, const Eqn& at, absl::string_view head,
                            std::vector<Atom> inputs, const Aval& aval);
  void Bind(Rewrite& rw, const Var* out, Atom value);
  absl::Status Process(Rewrite& rw, const std::vector<Eqn>& eqns,
                       bool fresh_outputs);
  absl::Status RunState(Rewrite& rw, const Eqn& eqn,
                        const std::vector<Atom>& mapped);
  absl::StatusOr<std::shared_ptr<ClosedJaxpr>> DischargeBody(
      const Eqn& at, const ClosedJaxpr& body,
      const std::vector<int>& ref_positions);
  absl::Status Plain(Rewrite& rw, const Eqn& eqn, std::vector<Atom> mapped,
                     bool fresh_outputs);

  // discharge_access.cc: reads and writes of a ref's value.
  absl::StatusOr<Atom> IndexAtom(Rewrite& rw, const Eqn& at, const Atom& a);
  absl::StatusOr<Slicing> Plan(Rewrite& rw, const Eqn& eqn,
                               const std::vector<Atom>& mapped, int first_index,
                               const Aval& value);
  absl::StatusOr<Atom> Slice(Rewrite& rw, const Eqn& eqn, const Atom& cur,
                             const Slicing& s, const Aval& value);
  absl::StatusOr<Atom> Read(Rewrite& rw, const Eqn& eqn, const Atom& cur,
                            const Slicing& s, const Aval& value,
                            const Aval& result);
  absl::StatusOr<Atom> Write(Rewrite& rw, const Eqn& eqn, const Atom& cur,
                             Atom update, const Slicing& s, const Aval& value);
  absl::StatusOr<Atom> Zeros(Rewrite& rw, const Eqn& eqn, const Aval& aval);
  absl::StatusOr<std::pair<const Var*, Atom>> RefOperand(const Rewrite& rw,
                                                         const Eqn& eqn);
  // get, swap, addupdate.
  absl::Status Access(Rewrite& rw, const Eqn& eqn,
                      const std::vector<Atom>& mapped);

  // discharge_control_flow.cc: refs threaded through cond/while/scan.
  absl::StatusOr<std::vector<int>> RefPositions(const Rewrite& rw,
                                                const Eqn& eqn, size_t begin,
                                                size_t end);
  absl::StatusOr<int64_t> IntParam(const Eqn& eqn, absl::string_view key);
  const ClosedJaxpr* JaxprParam(const Eqn& eqn, absl::string_view key);
  absl::Status Take(const Rewrite& rw, const Eqn& eqn,
                    const std::vector<int>& positions, size_t begin,
                    Threading& t);
  absl::Status ThreadCond(const Rewrite& rw, const Eqn& eqn, Threading& t);
  absl::Status ThreadWhile(const Rewrite& rw, const Eqn& eqn, Threading& t);
  absl::Status ThreadScan(const Rewrite& rw, const Eqn& eqn, Threading& t);
  absl::Status ThreadCall(const Rewrite& rw, const Eqn& eqn, Threading& t);
  absl::Status ControlFlow(Rewrite& rw, const Eqn& eqn,
                           std::vector<Atom> mapped, bool fresh_outputs);

  std::string path_;
  int counter_ = 0;
  absl::flat_hash_set<const ClosedJaxpr*> done_;
};

}  // namespace jax2onnx::jaxpr::discharge_internal

#endif  // JAX2ONNX_JAXPR_STATE_DISCHARGER_H_
