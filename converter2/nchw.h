// The channels-last <-> channels-first permutations behind --inputs_as_nchw /
// --outputs_as_nchw: the converter wraps graph inputs and outputs in them, and
// `check MODEL.onnx BUNDLE` undoes them to compare with the bundle.
#ifndef JAX2ONNX_CONVERTER2_NCHW_H_
#define JAX2ONNX_CONVERTER2_NCHW_H_

#include <cstdint>
#include <vector>

namespace jax2onnx::converter2 {

// NHWC... -> NCHW... for rank `r` (>= 3): {0, r-1, 1, ..., r-2}.
inline std::vector<int64_t> ToChannelsFirst(int r) {
  std::vector<int64_t> perm = {0, r - 1};
  for (int i = 1; i < r - 1; ++i) perm.push_back(i);
  return perm;
}

// NCHW... -> NHWC... for rank `r` (>= 3): {0, 2, ..., r-1, 1}.
inline std::vector<int64_t> ToChannelsLast(int r) {
  std::vector<int64_t> perm = {0};
  for (int i = 2; i < r; ++i) perm.push_back(i);
  perm.push_back(1);
  return perm;
}

}  // namespace jax2onnx::converter2

#endif  // JAX2ONNX_CONVERTER2_NCHW_H_
