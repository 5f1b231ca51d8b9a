// Round-trips every ONNX backend test model shipped by Debian's
// libonnx-testdata through FromProto -> ToProto and compares the result with
// the original byte for byte (deterministic serialization, no normalization;
// MessageDifferencer only explains a mismatch). Every imported model must
// also pass the verifier (untyped subgraph inputs allowed: two expanded
// Range tests have them).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ir/serde.h"
#include "ir/verifier.h"

namespace jax2onnx::ir {
namespace {

constexpr char kTestDataDir[] = "/usr/share/libonnx-testdata/data";

std::vector<std::string> FindModels() {
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(kTestDataDir, ec)) return out;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(kTestDataDir, ec)) {
    if (e.is_regular_file() && e.path().filename() == "model.onnx") {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SerdeRoundTripTest, EveryLibonnxTestdataModelRoundTripsExactly) {
  std::vector<std::string> models = FindModels();
  if (models.empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  int exact = 0, verified = 0;
  std::vector<std::string> failures, verify_failures;
  for (const std::string& path : models) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    onnx::ModelProto original;
    if (!original.ParseFromString(buf.str())) {
      failures.push_back(path + ": not a ModelProto");
      continue;
    }
    absl::StatusOr<Model> model = FromProto(original);
    if (!model.ok()) {
      failures.push_back(path +
                         ": import: " + std::string(model.status().message()));
      continue;
    }
    if (Verify(*model).ok()) ++verified;
    if (absl::Status s =
            Verify(*model, VerifyOptions{.require_io_types = false});
        !s.ok()) {
      verify_failures.push_back(path + ": " + std::string(s.message()));
    }
    onnx::ModelProto back = ToProto(*model);
    if (SerializeDeterministic(original) == SerializeDeterministic(back)) {
      ++exact;
      continue;
    }
    std::string diff;
    google::protobuf::util::MessageDifferencer differ;
    differ.ReportDifferencesToString(&diff);
    differ.Compare(original, back);
    failures.push_back(path + ": differs:\n" + diff.substr(0, 600));
  }
  std::cout << "round trip: " << exact << " of " << models.size()
            << " models exact; " << verified
            << " pass the verifier with typed graph I/O required\n";
  for (const std::string& f : failures) ADD_FAILURE() << f;
  for (const std::string& f : verify_failures) ADD_FAILURE() << f;
  EXPECT_EQ(exact, static_cast<int>(models.size()));
}

}  // namespace
}  // namespace jax2onnx::ir
