#include "jaxpr/text/decomposition.h"

#include <map>
#include <memory>
#include <mutex>  // NOLINT

#include "jaxpr/status_macros.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::jaxpr {

absl::StatusOr<const ClosedJaxpr*> ParseDecompositionOnce(
    const std::string& text, absl::string_view origin) {
  static std::mutex* mu = new std::mutex;
  static auto* cache = new std::map<std::string, std::shared_ptr<ClosedJaxpr>>;
  std::lock_guard<std::mutex> lock(*mu);
  auto it = cache->find(text);
  if (it != cache->end()) return it->second.get();
  J2O_ASSIGN_OR_RETURN(JaxprFile file, ParseJaxprText(text, origin));
  const ClosedJaxpr* result = file.main.get();
  cache->emplace(text, file.main);
  return result;
}

}  // namespace jax2onnx::jaxpr
