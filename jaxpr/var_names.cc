#include "jaxpr/var_names.h"

namespace jax2onnx::jaxpr {

std::string JaxVarName(int64_t n) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('a' + n % 26));
    n /= 26;
  } while (n > 0);
  return s;
}

}  // namespace jax2onnx::jaxpr
