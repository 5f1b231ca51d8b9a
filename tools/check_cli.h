// What `check` adds to the CLI: --rtol/--atol (tolerances that replace the
// bundle header's) and the per-output object of --json.
#ifndef JAX2ONNX_TOOLS_CHECK_CLI_H_
#define JAX2ONNX_TOOLS_CHECK_CLI_H_

#include "api/bisect.h"
#include "api/output_compare.h"
#include "nlohmann/json.hpp"

namespace jax2onnx::cli {

// The --rtol/--atol given on the command line (unset when not given). False,
// with a message on stderr naming the flag, when one is negative or not
// finite.
bool ToleranceOverrideFromFlags(api::ToleranceOverride* tolerance);

// One output of `check --json`: index, ok, max_abs_error, max_rel_error,
// rtol, atol, tolerance_source, summary (and f64_error,
// sequential_f32_error where the noise bound was evaluated). JSON has no
// infinity: an infinite error is the string "inf"; one that could not be
// measured (dtype or shape differ) is null.
nlohmann::json OutputCheckJson(const api::OutputCheck& check);

// `check --bisect --json`: the first diverging equation (null when none)
// and every result compared or not observable.
nlohmann::json BisectJson(const api::BisectResult& bisect);

}  // namespace jax2onnx::cli

#endif  // JAX2ONNX_TOOLS_CHECK_CLI_H_
