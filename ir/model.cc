// ir::Function and ir::Model: opset imports and the model-local function
// table.
#include "ir/ir.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace jax2onnx::ir {

// ---------------------------------------------------------------- Function

Function::Function(std::string domain, std::string name)
    : domain_(std::move(domain)),
      name_(name),
      body_(std::make_unique<Graph>(std::move(name))) {}

// ---------------------------------------------------------------- Model

Model::Model() : graph_(std::make_unique<Graph>()) {}
Model::Model(std::unique_ptr<Graph> graph) : graph_(std::move(graph)) {
  CHECK(graph_ != nullptr);
}

std::optional<int64_t> Model::OpsetVersion(absl::string_view domain) const {
  for (const OpsetImport& o : opset_imports_) {
    if (o.domain == domain) return o.version;
  }
  return std::nullopt;
}

void Model::SetOpsetVersion(absl::string_view domain, int64_t version) {
  for (OpsetImport& o : opset_imports_) {
    if (o.domain == domain) {
      o.version = version;
      return;
    }
  }
  opset_imports_.push_back(OpsetImport{std::string(domain), version});
}

absl::StatusOr<Function*> Model::AddFunction(
    std::unique_ptr<Function> function) {
  auto key = std::make_pair(function->domain(), function->name());
  if (function_index_.contains(key)) {
    return absl::AlreadyExistsError(absl::StrCat("model already has function '",
                                                 function->domain(),
                                                 "::", function->name(), "'"));
  }
  function_index_.emplace(std::move(key), functions_.size());
  functions_.push_back(std::move(function));
  all_graphs_version_ = ~uint64_t{0};
  return functions_.back().get();
}

Function* Model::FindFunction(absl::string_view domain,
                              absl::string_view name) const {
  auto it = function_index_.find(
      std::make_pair(std::string(domain), std::string(name)));
  return it == function_index_.end() ? nullptr : functions_[it->second].get();
}

bool Model::RemoveFunction(absl::string_view domain, absl::string_view name) {
  auto it = function_index_.find(
      std::make_pair(std::string(domain), std::string(name)));
  if (it == function_index_.end()) return false;
  functions_.erase(functions_.begin() + it->second);
  all_graphs_version_ = ~uint64_t{0};
  function_index_.clear();
  for (size_t i = 0; i < functions_.size(); ++i) {
    function_index_.emplace(
        std::make_pair(functions_[i]->domain(), functions_[i]->name()), i);
  }
  return true;
}

std::vector<Function*> Model::functions() const {
  std::vector<Function*> out;
  for (const auto& f : functions_) out.push_back(f.get());
  return out;
}

}  // namespace jax2onnx::ir
