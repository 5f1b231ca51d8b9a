// `jax2onnx parse FILE...` (summary or --json per file) and
// `jax2onnx print FILE` (canonical JAX-style text).
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gflags/gflags.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/text/jax_releases.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/text/printer.h"
#include "nlohmann/json.hpp"
#include "stablehlo/translate.h"
#include "tools/bundle_args.h"
#include "tools/cli_output.h"
#include "tools/commands.h"

DECLARE_bool(json);
DECLARE_string(input_format);  // cmd_convert.cc
DEFINE_string(to, "jaxpr", "print: the output language (jaxpr).");

namespace jax2onnx::cli {
namespace {

using jaxpr::Atom;
using jaxpr::ClosedJaxpr;
using jaxpr::Eqn;
using jaxpr::JaxprFile;
using jaxpr::ParamValue;
using jaxpr::ReleaseEvidence;
using jaxpr::ReleaseRange;
using jaxpr::JaxReleaseRange;
using jaxpr::Var;

// Equation counts and primitive histogram over a jaxpr and the jaxprs in
// its params. Shared jaxprs count once per reference (as they would run),
// memoized so that files with many references stay linear.
struct Stats {
  uint64_t total_eqns = 0;
  std::map<std::string, uint64_t> histogram;
};

class StatsCollector {
 public:
  const Stats& Of(const ClosedJaxpr* j) {
    auto it = memo_.find(j);
    if (it != memo_.end()) return it->second;
    Stats s;
    for (const Eqn& eqn : j->eqns) {
      s.total_eqns += 1;
      s.histogram[eqn.primitive] += 1;
      for (const auto& [key, value] : eqn.params.entries()) {
        AddValue(value, &s);
      }
    }
    return memo_[j] = std::move(s);
  }

 private:
  void AddValue(const ParamValue& v, Stats* s) {
    if (v.kind() == ParamValue::Kind::kJaxpr && v.jaxpr() != nullptr) {
      const Stats& inner = Of(v.jaxpr().get());
      s->total_eqns = Saturating(s->total_eqns, inner.total_eqns);
      for (const auto& [prim, n] : inner.histogram) {
        s->histogram[prim] = Saturating(s->histogram[prim], n);
      }
    } else if (v.kind() == ParamValue::Kind::kJaxprTuple ||
               v.kind() == ParamValue::Kind::kTuple) {
      for (const ParamValue& item : v.items()) AddValue(item, s);
    }
  }
  static uint64_t Saturating(uint64_t a, uint64_t b) {
    return a + b < a ? UINT64_MAX : a + b;
  }
  absl::flat_hash_map<const ClosedJaxpr*, Stats> memo_;
};

std::string AtomText(const Atom& a) { return jaxpr::PrintAtom(a); }

nlohmann::json VarsJson(const std::vector<Var*>& vars) {
  nlohmann::json out = nlohmann::json::array();
  for (const Var* v : vars) {
    out.push_back({{"name", v->name}, {"type", v->aval.ToString()}});
  }
  return out;
}

nlohmann::json OutvarsJson(const std::vector<Atom>& atoms) {
  nlohmann::json out = nlohmann::json::array();
  for (const Atom& a : atoms) {
    nlohmann::json item = {{"name", AtomText(a)}};
    if (a.is_literal()) {
      item["literal"] = true;
      if (a.literal->aval) item["type"] = a.literal->aval->ToString();
    } else if (a.var != nullptr) {
      item["type"] = a.var->aval.ToString();
    }
    out.push_back(item);
  }
  return out;
}

std::string VarsText(const std::vector<Var*>& vars) {
  std::vector<std::string> parts;
  for (const Var* v : vars) {
    parts.push_back(absl::StrCat(v->name, ":", v->aval.ToString()));
  }
  return parts.empty() ? "(none)" : absl::StrJoin(parts, " ");
}

std::string OutvarsText(const std::vector<Atom>& atoms) {
  std::vector<std::string> parts;
  for (const Atom& a : atoms) {
    if (!a.is_literal() && a.var != nullptr) {
      parts.push_back(absl::StrCat(a.var->name, ":", a.var->aval.ToString()));
    } else {
      parts.push_back(AtomText(a));
    }
  }
  return parts.empty() ? "(none)" : absl::StrJoin(parts, " ");
}

nlohmann::json ReleasesJson(const JaxprFile& file) {
  const ReleaseRange r = JaxReleaseRange(file);
  nlohmann::json evidence = nlohmann::json::array();
  for (const ReleaseEvidence& e : r.evidence) {
    nlohmann::json item = nlohmann::json::object();
    item["form"] = e.form;
    item["oldest"] =
        e.oldest.empty() ? nlohmann::json() : nlohmann::json(e.oldest);
    item["newest"] =
        e.newest.empty() ? nlohmann::json() : nlohmann::json(e.newest);
    evidence.push_back(std::move(item));
  }
  nlohmann::json out = nlohmann::json::object();
  out["consistent"] = r.consistent;
  out["oldest"] = r.consistent ? nlohmann::json(r.oldest) : nlohmann::json();
  out["newest"] = r.consistent ? nlohmann::json(r.newest) : nlohmann::json();
  out["evidence"] = std::move(evidence);
  return out;
}

std::string ReleasesText(const JaxprFile& file) {
  const ReleaseRange r = JaxReleaseRange(file);
  std::vector<std::string> forms;
  for (const ReleaseEvidence& e : r.evidence) forms.push_back(e.form);
  const std::string why =
      forms.empty() ? "no release-specific form"
                    : absl::StrCat("from: ", absl::StrJoin(forms, "; "));
  if (!r.consistent) {
    return absl::StrCat("no single release prints all of these forms (", why,
                        ")");
  }
  return absl::StrCat(r.oldest, " .. ", r.newest, " (", why, ")");
}

void PrintSummary(const std::string& path, const JaxprFile& file) {
  StatsCollector collector;
  const Stats& stats = collector.Of(file.main.get());
  const ClosedJaxpr& main = *file.main;
  std::printf("%s\n", path.c_str());
  std::printf("  equations: %zu top-level, %llu total (nested included)\n",
              main.eqns.size(),
              static_cast<unsigned long long>(stats.total_eqns));
  if (!file.shared.empty()) {
    std::vector<std::string> names;
    for (const auto& [name, j] : file.shared) names.push_back(name);
    std::printf("  shared jaxprs: %s\n", absl::StrJoin(names, " ").c_str());
  }
  std::printf("  constvars: %s\n", VarsText(main.constvars).c_str());
  std::printf("  invars: %s\n", VarsText(main.invars).c_str());
  std::printf("  outvars: %s\n", OutvarsText(main.outvars).c_str());
  if (file.num_elided_literals > 0) {
    std::printf("  elided literals: %d\n", file.num_elided_literals);
  }
  std::printf("  JAX releases: %s\n", ReleasesText(file).c_str());
  std::printf("  primitives:\n");
  for (const auto& [prim, n] : stats.histogram) {
    std::printf("    %-28s %llu\n", prim.c_str(),
                static_cast<unsigned long long>(n));
  }
}

nlohmann::json SummaryJson(const std::string& path, const JaxprFile& file) {
  StatsCollector collector;
  const Stats& stats = collector.Of(file.main.get());
  const ClosedJaxpr& main = *file.main;
  nlohmann::json histogram = nlohmann::json::object();
  for (const auto& [prim, n] : stats.histogram) histogram[prim] = n;
  nlohmann::json shared = nlohmann::json::array();
  for (const auto& [name, j] : file.shared) shared.push_back(name);
  nlohmann::json header = nlohmann::json::object();
  for (const auto& [k, v] : file.header) header[k] = v;
  return {{"file", path},
          {"ok", true},
          {"top_level_eqns", main.eqns.size()},
          {"total_eqns", stats.total_eqns},
          {"constvars", VarsJson(main.constvars)},
          {"invars", VarsJson(main.invars)},
          {"outvars", OutvarsJson(main.outvars)},
          {"shared", shared},
          {"elided_literals", file.num_elided_literals},
          {"header", header},
          {"jax_releases", ReleasesJson(file)},
          {"primitives", histogram}};
}

}  // namespace

int RunParse(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fprintf(stderr,
                 "jax2onnx parse: usage: jax2onnx parse [--json] FILE...\n");
    return kExitUsage;
  }
  if (!PathsExist(args, "parse")) return kExitUsage;
  int failures = 0;
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& path : args) {
    auto file = jaxpr::ParseJaxprFile(path);
    if (!file.ok()) {
      ++failures;
      std::fprintf(stderr, "%s\n",
                   std::string(file.status().message()).c_str());
      if (FLAGS_json) {
        all.push_back({{"file", path},
                       {"ok", false},
                       {"error", std::string(file.status().message())}});
      }
      continue;
    }
    if (FLAGS_json) {
      all.push_back(SummaryJson(path, *file));
    } else if (!Quiet()) {
      PrintSummary(path, *file);
    }
  }
  // One document for any number of files.
  if (FLAGS_json) std::printf("%s\n", all.dump().c_str());
  return failures == 0 ? kExitOk : kExitFailure;
}

int RunPrint(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::fprintf(stderr, "jax2onnx print: usage: jax2onnx print FILE\n");
    return kExitUsage;
  }
  if (FLAGS_to != "jaxpr") {
    std::fprintf(stderr, "jax2onnx print: --to=%s: only jaxpr is supported\n",
                 FLAGS_to.c_str());
    return kExitUsage;
  }
  if (!InputFileExists(args[0], "print")) return kExitUsage;
  const bool stablehlo =
      FLAGS_input_format == "stablehlo" ||
      (FLAGS_input_format == "auto" && stablehlo::IsStablehloPath(args[0]));
  if (stablehlo) {
    auto prog = stablehlo::LoadStablehloFile(args[0]);
    if (!prog.ok()) {
      std::fprintf(stderr, "%s\n",
                   std::string(prog.status().message()).c_str());
      return 1;
    }
    std::printf("%s\n", jaxpr::PrintJaxprFile(prog->file).c_str());
    return 0;
  }
  auto file = jaxpr::ParseJaxprFile(args[0]);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", std::string(file.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", jaxpr::PrintJaxprFile(*file).c_str());
  return 0;
}

}  // namespace jax2onnx::cli
