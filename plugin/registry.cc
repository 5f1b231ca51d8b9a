#include "plugin/registry.h"

#include <algorithm>

namespace jax2onnx::plugin {
namespace {

int EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

Registry& Registry::Global() {
  static auto* registry = new Registry();
  return *registry;
}

void Registry::RegisterLegacy(absl::string_view primitive, LegacyLoweringFn fn,
                              LoweringInfo info) {
  PrimitiveEntry& e = entries_[std::string(primitive)];
  e.name = std::string(primitive);
  e.legacy = fn;
  e.legacy_info = std::move(info);
}

void Registry::RegisterIr(absl::string_view primitive, IrLoweringFn fn,
                          LoweringInfo info) {
  PrimitiveEntry& e = entries_[std::string(primitive)];
  e.name = std::string(primitive);
  e.ir = fn;
  e.ir_info = std::move(info);
}

const PrimitiveEntry* Registry::Find(absl::string_view primitive) const {
  auto it = entries_.find(primitive);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<const PrimitiveEntry*> Registry::Entries() const {
  std::vector<const PrimitiveEntry*> out;
  for (const auto& [name, entry] : entries_) out.push_back(&entry);
  return out;
}

std::vector<std::string> Registry::Nearest(absl::string_view name,
                                           int n) const {
  std::vector<std::pair<int, std::string>> scored;
  for (const auto& [key, entry] : entries_) {
    scored.emplace_back(EditDistance(name, key), key);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (const auto& [dist, key] : scored) {
    if (static_cast<int>(out.size()) >= n) break;
    // Only suggest names that are plausibly a misspelling.
    if (dist <= std::max<int>(2, static_cast<int>(name.size()) / 3)) {
      out.push_back(key);
    }
  }
  return out;
}

}  // namespace jax2onnx::plugin
