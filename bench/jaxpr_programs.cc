#include "bench/jaxpr_programs.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/var_names.h"

namespace jax2onnx::bench {
namespace {

constexpr int kBatch = 8;
constexpr int kWidth = 16;

// Emits equations in JAX's printed layout and tracks the constvars. Nested
// jaxprs are written into their own body (BeginBody/EndBody) with names
// from the same sequence.
class Writer {
 public:
  // A constvar of the given shape. Values cycle through 13 patterns unless
  // `distinct` (then every constant differs from every other).
  std::string Const(std::vector<int64_t> shape, bool distinct = false) {
    const std::string name = Fresh();
    std::vector<std::string> dims;
    for (int64_t d : shape) dims.push_back(absl::StrCat(d));
    constvars_.push_back(
        absl::StrCat(name, ":f32[", absl::StrJoin(dims, ","), "]"));
    jaxpr::Array a(jaxpr::DType::kF32, shape);
    const double k = static_cast<double>(consts_.size());
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      a.SetFromDouble(
          i, distinct
                 ? 1.0 + 1e-4 * k + 1e-6 * static_cast<double>(i)
                 : 0.01 * static_cast<double>((i * 7 + consts_.size()) % 13) -
                       0.06);
    }
    consts_.push_back(std::move(a));
    return name;
  }
  std::string Input(const std::string& type) {
    const std::string name = Fresh();
    invars_.push_back(absl::StrCat(name, ":", type));
    return name;
  }
  std::string Fresh() { return jaxpr::JaxVarName(next_++); }
  // `type` like "f32[8,16]"; the equation is "prim[params] operands".
  std::string Eqn(const std::string& type, const std::string& primitive,
                  const std::string& params, const std::string& operands) {
    const std::string name = Fresh();
    EqnTo(absl::StrCat(name, ":", type), primitive, params, operands);
    return name;
  }
  // An equation with the given left-hand side (several outputs).
  void EqnTo(const std::string& lhs, const std::string& primitive,
             const std::string& params, const std::string& operands) {
    absl::StrAppend(&body_, "    ", lhs, " = ", primitive,
                    params.empty() ? "" : "[", params,
                    params.empty() ? "" : "]", " ", operands, "\n");
    ++num_eqns_;
    primitives_.insert(primitive);
  }
  // Starts a nested body; returns the enclosing one for EndBody.
  std::string BeginBody() { return std::exchange(body_, ""); }
  // `{ lambda ; INVARS. let BODY in (RESULTS,) }` of the nested body.
  std::string EndBody(std::string enclosing, const std::string& invars,
                      const std::string& results) {
    std::string inner = std::exchange(body_, std::move(enclosing));
    return absl::StrCat("{ lambda ; ", invars, ". let\n", inner, "  in (",
                        results, ",) }");
  }
  Generated Finish(const std::vector<std::string>& results) {
    Generated g;
    g.text = absl::StrCat("{ lambda ", absl::StrJoin(constvars_, " "), "; ",
                          absl::StrJoin(invars_, " "), ". let\n", body_,
                          "  in (", absl::StrJoin(results, ", "), ",) }\n");
    g.num_eqns = num_eqns_;
    g.consts = std::move(consts_);
    g.primitives = std::move(primitives_);
    return g;
  }
  int num_eqns() const { return num_eqns_; }

 private:
  int64_t next_ = 0;
  std::vector<std::string> constvars_, invars_;
  std::string body_;
  int num_eqns_ = 0;
  std::vector<jaxpr::Array> consts_;
  std::set<std::string> primitives_;
};

const std::string kMatrix = absl::StrCat("f32[", kBatch, ",", kWidth, "]");
const std::string kRow = absl::StrCat("f32[1,", kWidth, "]");
const std::string kColumn = absl::StrCat("f32[", kBatch, ",1]");
const std::string kVector = absl::StrCat("f32[", kBatch, "]");
const std::string kScores = absl::StrCat("f32[", kBatch, ",", kBatch, "]");
constexpr char kScalar[] = "f32[]";
constexpr char kMatmul[] =
    "dimension_numbers=(([1], [0]), ([], [])) preferred_element_type=float32";

std::string Dense(Writer& w, const std::string& x, bool bias) {
  std::string h = w.Eqn(kMatrix, "dot_general", kMatmul,
                        absl::StrCat(x, " ", w.Const({kWidth, kWidth})));
  if (!bias) return h;
  const std::string b = w.Const({kWidth});
  const std::string row =
      w.Eqn(kRow, "broadcast_in_dim",
            absl::StrCat("broadcast_dimensions=(1,) shape=(1, ", kWidth,
                         ") sharding=None"),
            b);
  return w.Eqn(kMatrix, "add", "", absl::StrCat(h, " ", row));
}

std::string BroadcastColumn(Writer& w, const std::string& v) {
  return w.Eqn(kColumn, "broadcast_in_dim",
               absl::StrCat("broadcast_dimensions=(0,) shape=(", kBatch,
                            ", 1) sharding=None"),
               v);
}

std::string Literal(double x) { return absl::StrCat(x, ":f32[]"); }

// mlp_deep with a running residual sum: x += tanh(x W + b), five equations
// per layer; the residual adds form one chain through the whole program.
Generated ResidualMlp(int target_eqns) {
  Writer w;
  std::string x = w.Input(kMatrix);
  for (int layer = 0; layer * 5 < target_eqns; ++layer) {
    std::string h = Dense(w, x, /*bias=*/true);
    h = w.Eqn(kMatrix, "tanh", "", h);
    x = w.Eqn(kMatrix, "add", "", absl::StrCat(x, " ", h));
  }
  return w.Finish({x});
}

// Shared subexpressions: each step computes x*0.5 twice (CSE merges them),
// adds the two, takes sin and adds the value of two steps before (every
// value feeds two later steps).
Generated SharedSubexpressions(int target_eqns) {
  Writer w;
  std::string x = w.Input(kVector);
  std::string before = x;
  while (w.num_eqns() < target_eqns) {
    const std::string p = w.Eqn(kVector, "mul", "", x + " " + Literal(0.5));
    const std::string q = w.Eqn(kVector, "mul", "", x + " " + Literal(0.5));
    const std::string r = w.Eqn(kVector, "add", "", p + " " + q);
    const std::string s = w.Eqn(kVector, "sin", "", r);
    std::string next = w.Eqn(kVector, "add", "", s + " " + before);
    before = std::exchange(x, std::move(next));
  }
  return w.Finish({x});
}

// One input used by half of the equations: acc += a * k for k = 1, 2, ...
Generated FanOut(int target_eqns) {
  Writer w;
  const std::string a = w.Input(kVector);
  std::string acc = a;
  for (int k = 1; w.num_eqns() < target_eqns; ++k) {
    const std::string t = w.Eqn(kVector, "mul", "", a + " " + Literal(k));
    acc = w.Eqn(kVector, "add", "", acc + " " + t);
  }
  return w.Finish({acc});
}

// One output per equation (a Python loop collecting results).
Generated ManyOutputs(int target_eqns) {
  Writer w;
  const std::string a = w.Input("f32[4]");
  std::vector<std::string> outs;
  for (int k = 1; k <= target_eqns; ++k) {
    outs.push_back(w.Eqn("f32[4]", "mul", "", a + " " + Literal(k)));
  }
  return w.Finish(outs);
}

// pjit calls nested `depth` deep, two equations per level (sin, then the
// call of the next level); `target_eqns / 2` levels in chains of at most
// 100 so the nesting depth stays that of a real program while the number
// of calls grows with the size.
Generated NestedCalls(int target_eqns) {
  constexpr int kDepth = 100;
  Writer w;
  std::string x = w.Input(kVector);
  while (w.num_eqns() < target_eqns) {
    const int depth =
        std::min(kDepth, std::max(1, (target_eqns - w.num_eqns()) / 2));
    // Innermost level first: each level's jaxpr wraps the previous one.
    std::string callee;
    for (int level = 0; level < depth; ++level) {
      std::string enclosing = w.BeginBody();
      const std::string in = w.Fresh();
      std::string y = w.Eqn(kVector, "sin", "", in);
      if (!callee.empty()) {
        y = w.Eqn(kVector, "pjit",
                  absl::StrCat("name=level", level, " jaxpr=", callee), y);
      }
      callee = w.EndBody(std::move(enclosing), in + ":" + kVector, y);
    }
    x = w.Eqn(kVector, "pjit", "name=top jaxpr=" + callee, x);
  }
  return w.Finish({x});
}

// cond nested 40 deep (the parser allows 256 levels of brackets; a cond
// level takes three: `[`, `(`, `{`) (the second branch of each holds the next
// level), repeated; two equations per level.
Generated NestedCond(int target_eqns) {
  constexpr int kDepth = 40;
  Writer w;
  const std::string p = w.Input("i32[]");
  std::string x = w.Input(kVector);
  while (w.num_eqns() < target_eqns) {
    const int depth =
        std::min(kDepth, std::max(1, (target_eqns - w.num_eqns()) / 2));
    std::string inner_branch;
    for (int level = 0; level < depth; ++level) {
      // The branch that stops: neg.
      std::string enclosing = w.BeginBody();
      std::string q = w.Fresh(), in = w.Fresh();
      std::string y = w.Eqn(kVector, "neg", "", in);
      const std::string stop =
          w.EndBody(std::move(enclosing),
                    absl::StrCat(q, ":i32[] ", in, ":", kVector), y);
      if (inner_branch.empty()) {
        inner_branch = stop;
        continue;
      }
      // The branch that goes one level deeper.
      enclosing = w.BeginBody();
      q = w.Fresh();
      in = w.Fresh();
      y = w.Eqn(kVector, "cos", "", in);
      y = w.Eqn(kVector, "cond",
                absl::StrCat("branches=(\n", stop, "\n", inner_branch, "\n)"),
                absl::StrCat(q, " ", q, " ", y));
      inner_branch = w.EndBody(std::move(enclosing),
                               absl::StrCat(q, ":i32[] ", in, ":", kVector), y);
    }
    std::string enclosing = w.BeginBody();
    const std::string q = w.Fresh(), in = w.Fresh();
    const std::string stop = w.EndBody(
        std::move(enclosing), absl::StrCat(q, ":i32[] ", in, ":", kVector),
        w.Eqn(kVector, "neg", "", in));
    x = w.Eqn(kVector, "cond",
              absl::StrCat("branches=(\n", stop, "\n", inner_branch, "\n)"),
              absl::StrCat(p, " ", p, " ", x));
  }
  return w.Finish({x});
}

// A chain of elementwise ops (sin, mul by 0.5, add of the loop-invariant
// input) inside one loop body.
std::string LoopBodyChain(Writer& w, std::string x, const std::string& a,
                          int n) {
  for (int i = 0; i < n; ++i) {
    switch (i % 3) {
      case 0:
        x = w.Eqn(kVector, "sin", "", x);
        break;
      case 1:
        x = w.Eqn(kVector, "mul", "", x + " " + Literal(0.5));
        break;
      default:
        x = w.Eqn(kVector, "add", "", x + " " + a);
    }
  }
  return x;
}

// One scan whose body is the whole program (a carry and a const).
Generated LongScanBody(int target_eqns) {
  Writer w;
  const std::string a = w.Input(kVector);
  const std::string init = w.Input(kVector);
  std::string enclosing = w.BeginBody();
  const std::string c = w.Fresh(), carry = w.Fresh();
  const std::string y = LoopBodyChain(w, carry, c, target_eqns - 1);
  const std::string body =
      w.EndBody(std::move(enclosing),
                absl::StrCat(c, ":", kVector, " ", carry, ":", kVector), y);
  const std::string out =
      w.Eqn(kVector, "scan",
            absl::StrCat("jaxpr=", body,
                         " length=4 num_carry=1 num_consts=1 reverse=False "
                         "unroll=1"),
            a + " " + init);
  return w.Finish({out});
}

// One while loop (three iterations) whose body is the whole program.
Generated LongWhileBody(int target_eqns) {
  Writer w;
  const std::string a = w.Input(kVector);
  const std::string init = w.Input(kVector);
  std::string enclosing = w.BeginBody();
  const std::string c = w.Fresh(), i = w.Fresh(), carry = w.Fresh();
  const std::string next_i = w.Eqn("i32[]", "add", "", i + " 1:i32[]");
  const std::string y = LoopBodyChain(w, carry, c, target_eqns - 3);
  const std::string body = w.EndBody(
      std::move(enclosing),
      absl::StrCat(c, ":", kVector, " ", i, ":i32[] ", carry, ":", kVector),
      next_i + ", " + y);
  enclosing = w.BeginBody();
  const std::string ci = w.Fresh(), cx = w.Fresh();
  const std::string keep_going = w.Eqn("bool[]", "lt", "", ci + " 3:i32[]");
  const std::string cond =
      w.EndBody(std::move(enclosing),
                absl::StrCat(ci, ":i32[] ", cx, ":", kVector), keep_going);
  const std::string done_i = w.Fresh(), out = w.Fresh();
  w.EqnTo(absl::StrCat(done_i, ":i32[] ", out, ":", kVector), "while",
          absl::StrCat("body_jaxpr=", body, " body_nconsts=1 cond_jaxpr=", cond,
                       " cond_nconsts=0"),
          absl::StrCat(a, " 0:i32[] ", init));
  return w.Finish({out});
}

// x = x * c_k with a distinct f32[4] constvar c_k per equation.
Generated ManyConstants(int target_eqns) {
  Writer w;
  std::string x = w.Input("f32[4]");
  while (w.num_eqns() < target_eqns) {
    x = w.Eqn("f32[4]", "mul", "", x + " " + w.Const({4}, /*distinct=*/true));
  }
  return w.Finish({x});
}

// The unrolled sum of every element of a vector: slice, squeeze and add per
// element (what `sum(x[i] for i in range(n))` prints).
Generated SlicesSum(int target_eqns) {
  Writer w;
  const int n = std::max(1, target_eqns / 3);
  const std::string a = w.Input(absl::StrCat("f32[", n, "]"));
  std::string acc;
  for (int i = 0; i < n; ++i) {
    const std::string s =
        w.Eqn("f32[1]", "slice",
              absl::StrCat("limit_indices=(", i + 1, ",) start_indices=(", i,
                           ",) strides=None"),
              a);
    const std::string e = w.Eqn(kScalar, "squeeze", "dimensions=(0,)", s);
    acc = acc.empty() ? e : w.Eqn(kScalar, "add", "", acc + " " + e);
  }
  return w.Finish({acc});
}

Generated DeepAddChainShape(int target_eqns) {
  return DeepAddChain(target_eqns - 2);
}
Generated AddDiamondsShape(int target_eqns) {
  return AddDiamonds(target_eqns - 2);
}
Generated NewtonShape(int target_eqns) {
  return NewtonReciprocal(target_eqns / 3);
}

}  // namespace

std::string ParseMix(int num_eqns) {
  std::string text = "{ lambda ; a:f32[8,16] b:f32[8,16]. let\n";
  int64_t next = 2;
  std::string prev = "a";
  for (int i = 0; i < num_eqns; ++i) {
    const std::string out = jaxpr::JaxVarName(next++);
    switch (i % 5) {
      case 0:
        absl::StrAppend(&text, "    ", out, ":f32[8,16] = add ", prev, " b\n");
        break;
      case 1:
        absl::StrAppend(&text, "    ", out, ":f32[8,16] = mul ", prev,
                        " 2.0:f32[]\n");
        break;
      case 2:
        absl::StrAppend(&text, "    ", out,
                        ":f32[8,16] = reduce_precision[exponent_bits=8 "
                        "mantissa_bits=7] ",
                        prev, "\n");
        break;
      case 3:
        absl::StrAppend(&text, "    ", out,
                        ":f32[8,16] = transpose[permutation=(0, 1)] ", prev,
                        "\n");
        break;
      default:
        if (i % 100 == 4) {
          absl::StrAppend(&text, "    ", out,
                          ":f32[8,16] = jit[\n      name=inner\n      "
                          "jaxpr={ lambda ; a:f32[8,16]. let b:f32[8,16] = "
                          "tanh a in (b,) }\n    ] ",
                          prev, "\n");
        } else {
          absl::StrAppend(&text, "    ", out, ":f32[8,16] = tanh ", prev, "\n");
        }
        break;
    }
    prev = out;
  }
  absl::StrAppend(&text, "  in (", prev, ",) }\n");
  return text;
}

Generated DeepMlp(int target_eqns) {
  Writer w;
  std::string x = w.Input(kMatrix);
  for (int layer = 0; layer * 4 < target_eqns; ++layer) {
    x = Dense(w, x, /*bias=*/true);
    x = w.Eqn(kMatrix, layer % 2 ? "logistic" : "tanh", "", x);
  }
  return w.Finish({x});
}

Generated TransformerStack(int target_eqns) {
  Writer w;
  std::string x = w.Input(kMatrix);
  const std::string reduce_row = "axes=(1,) out_sharding=None";
  for (int block = 0; block * 27 < target_eqns; ++block) {
    const std::string q = Dense(w, x, false);
    const std::string k = Dense(w, x, false);
    const std::string v = Dense(w, x, false);
    std::string s = w.Eqn(kScores, "dot_general",
                          "dimension_numbers=(([1], [1]), ([], [])) "
                          "preferred_element_type=float32",
                          absl::StrCat(q, " ", k));
    s = w.Eqn(kScores, "mul", "", absl::StrCat(s, " 0.25:f32[]"));
    const std::string m = w.Eqn(kVector, "reduce_max", reduce_row, s);
    s = w.Eqn(kScores, "sub", "", absl::StrCat(s, " ", BroadcastColumn(w, m)));
    s = w.Eqn(kScores, "exp", "", s);
    const std::string z = w.Eqn(kVector, "reduce_sum", reduce_row, s);
    s = w.Eqn(kScores, "div", "", absl::StrCat(s, " ", BroadcastColumn(w, z)));
    std::string a =
        w.Eqn(kMatrix, "dot_general", kMatmul, absl::StrCat(s, " ", v));
    x = w.Eqn(kMatrix, "add", "", absl::StrCat(x, " ", a));
    std::string mean = w.Eqn(kVector, "reduce_sum", reduce_row, x);
    mean =
        w.Eqn(kVector, "div", "", absl::StrCat(mean, " ", kWidth, ".0:f32[]"));
    x = w.Eqn(kMatrix, "sub", "",
              absl::StrCat(x, " ", BroadcastColumn(w, mean)));
    std::string h = Dense(w, x, true);
    const std::string g = w.Eqn(kMatrix, "logistic", "", h);
    h = w.Eqn(kMatrix, "mul", "", absl::StrCat(h, " ", g));
    h = Dense(w, h, false);
    x = w.Eqn(kMatrix, "add", "", absl::StrCat(x, " ", h));
    const std::string flat =
        w.Eqn(absl::StrCat("f32[", kBatch * kWidth, "]"), "reshape",
              absl::StrCat("dimensions=None new_sizes=(", kBatch * kWidth,
                           ",) sharding=None"),
              x);
    x = w.Eqn(kMatrix, "reshape",
              absl::StrCat("dimensions=None new_sizes=(", kBatch, ", ", kWidth,
                           ") sharding=None"),
              flat);
  }
  return w.Finish({x});
}

Generated DeepAddChain(int depth) {
  Writer w;
  const std::string a = w.Input(kScalar);
  const std::string b = w.Input(kScalar);
  std::string s = a;
  for (int i = 0; i < depth; ++i) {
    s = w.Eqn(kScalar, "add", "", s + " " + (i == 0 ? b : a));
  }
  const std::string d = w.Eqn(kScalar, "div", "", s + " " + b);
  return w.Finish({w.Eqn(kScalar, "mul", "", d + " " + a)});
}

Generated AddDiamonds(int n) {
  Writer w;
  const std::string a = w.Input(kScalar);
  std::string v = a;
  for (int i = 0; i < n; ++i) v = w.Eqn(kScalar, "add", "", v + " " + v);
  const std::string d = w.Eqn(kScalar, "div", "", v + " " + a);
  return w.Finish({w.Eqn(kScalar, "mul", "", d + " " + a)});
}

Generated NewtonReciprocal(int n) {
  Writer w;
  const std::string a = w.Input(kScalar);
  std::string x = w.Input(kScalar);
  for (int i = 0; i < n; ++i) {
    const std::string ax = w.Eqn(kScalar, "mul", "", a + " " + x);
    const std::string e = w.Eqn(kScalar, "sub", "", Literal(2.0) + " " + ax);
    x = w.Eqn(kScalar, "mul", "", x + " " + e);
  }
  const std::string d = w.Eqn(kScalar, "div", "", a + " " + x);
  return w.Finish({w.Eqn(kScalar, "mul", "", d + " " + a)});
}

const std::vector<ProgramShape>& ComplexityShapes() {
  static const std::vector<ProgramShape>* const kShapes =
      new std::vector<ProgramShape>{
          {"mlp", "dot_general + bias + tanh/logistic layers", &DeepMlp},
          {"transformer", "attention blocks (27 equations each)",
           &TransformerStack},
          {"residual_mlp", "mlp layers with a running residual sum",
           &ResidualMlp},
          {"add_chain", "one scalar add chain, then div and mul",
           &DeepAddChainShape},
          {"add_diamonds", "v = add v v, repeated", &AddDiamondsShape},
          {"newton", "unrolled Newton reciprocal x = x*(2-a*x)", &NewtonShape},
          {"shared_subexpr", "duplicated x*0.5, values used twice",
           &SharedSubexpressions},
          {"fan_out", "one input used by half the equations", &FanOut},
          {"many_outputs", "one output per equation", &ManyOutputs},
          {"nested_pjit", "pjit calls nested 100 deep, repeated", &NestedCalls},
          {"nested_cond", "cond nested 40 deep, repeated", &NestedCond},
          {"scan_body", "one scan with the whole chain as its body",
           &LongScanBody},
          {"while_body", "one while with the whole chain as its body",
           &LongWhileBody},
          {"many_constants", "a distinct f32[4] constvar per equation",
           &ManyConstants},
          {"slices_sum", "slice + squeeze + add per element of a vector",
           &SlicesSum},
      };
  return *kShapes;
}

const ProgramShape* FindShape(const std::string& name) {
  for (const ProgramShape& s : ComplexityShapes()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

}  // namespace jax2onnx::bench
