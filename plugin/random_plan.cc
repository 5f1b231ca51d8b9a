#include "plugin/random_plan.h"

#include <string>
#include <vector>

#include "plugin/bitcast_plan.h"
#include "plugin/rng_bit_generator_plan.h"

namespace jax2onnx::plugin {
namespace random {

std::vector<std::string> RandomPrimitives() {
  return {"random_seed",    "random_wrap", "random_unwrap",  "random_split",
          "random_fold_in", "random_bits", "threefry2x32",   "threefry4x32",
          "philox2x32",     "philox4x32",  "iota_2x32_shape"};
}

std::vector<std::string> RandomOnnxOps() {
  return {"Add",   "Mul",    "Div",       "Mod",      "BitwiseXor", "BitShift",
          "Cast",  "Gather", "Unsqueeze", "Concat",   "Range",      "Reshape",
          "Slice", "Where",  "Less",      "Identity", "Sub",        "Squeeze"};
}

std::string RandomNotes(const std::string& primitive) {
  if (primitive == "random_wrap" || primitive == "random_unwrap") {
    return "keys are their key data, u32[..., W] (W = 2, 4, 1, 2 for fry, "
           "fry4, phx2, phx4): Identity";
  }
  if (primitive == "iota_2x32_shape") {
    return "Range split into (hi, lo) words with Div/Mod 2^32";
  }
  if (primitive == "threefry4x32" || primitive == "philox2x32" ||
      primitive == "philox4x32") {
    return "the block function bit for bit in int64 words with explicit mod "
           "2^32 (Philox products in 16-bit halves; Xor: BitwiseXor, bit "
           "planes at opset 17)";
  }
  return "threefry2x32, threefry4x32, philox2x32 and philox4x32 keys "
         "(key<fry>, key<fry4>, key<phx2>, key<phx4>) bit for bit in int64 "
         "words with explicit mod 2^32 (Xor: BitwiseXor, bit planes at opset "
         "17); threefry2x32 counters per --threefry_partitionable (default "
         "true, JAX >= 0.5); rbg/unsafe_rbg keys refused; non-partitionable "
         "random_bits beyond 2^32 - 1 counters refused";
}

std::vector<std::string> RngBitGeneratorOnnxOps() {
  return {"Add",   "Mul",       "Div",     "Mod",     "BitwiseXor",
          "Cast",  "Gather",    "Range",   "Reshape", "Concat",
          "Slice", "Unsqueeze", "BitShift"};
}

std::string RngBitGeneratorNotes() {
  return "XLA's RngBitGenerator as the CPU backend expands it, bit for bit "
         "(RNG_DEFAULT = PHILOX: Philox-4x32-10 over the 128-bit counter "
         "(state counter, key); RNG_THREE_FRY: Threefry-2x32 with XLA's "
         "split-shape layout), new state included; u32[4] or u64[2] keys; "
         "int64 words with explicit mod 2^32, 16-bit split products; symbolic "
         "shapes and >= 2^32 values refused";
}

namespace rbg {
int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}
}  // namespace rbg

}  // namespace random

namespace bitcast {

std::vector<std::string> BitcastOnnxOps() {
  return {"BitShift",  "Cast",      "Gather", "Mul",     "Add",
          "Sub",       "Where",     "Neg",    "IsNaN",   "Abs",
          "Div",       "Less",      "Equal",  "Greater", "GreaterOrEqual",
          "ReduceSum", "Unsqueeze", "Concat", "Or",      "And",
          "BitCast"};
}

std::string BitcastNotes() {
  return "opset >= 26 and no f16/bf16 side: ONNX BitCast, exact for every bit "
         "pattern (NaN "
         "payloads included); below 26 no ONNX bitcast: integer fields cut "
         "with u64 BitShift, floats "
         "rebuilt as significand * exact power of two (and back by counting "
         "binades); exact for all finite values, +-0, +-inf, subnormals; "
         "NaN payloads not preserved (quiet NaN / canonical 0x7FC00000-style "
         "pattern); width changes as little-endian pieces on the last axis";
}

}  // namespace bitcast
}  // namespace jax2onnx::plugin
