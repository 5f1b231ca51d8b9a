// Tests of jax2onnx::WriteModel (api/write_model.cc) without ONNX Runtime:
// the external-data decision on injected sizes, the sidecar layout, and that
// every failure reports the OS reason and leaves nothing behind (existing
// files untouched).
#include "api/write_model.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/serde.h"
#include "jax2onnx/jax2onnx.h"
#include "tests/write/write_test_util.h"

namespace jax2onnx::write_test {
namespace {

using api::ChooseExternalTensors;
using api::kExternalEntryBytes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(ChooseExternalTensorsTest, AutoTakesTensorsOverTheThreshold) {
  // 2 MiB > 1 MiB goes; 1 MiB exactly and 100 bytes stay; model is small.
  EXPECT_THAT(ChooseExternalTensors({2 * kMiB, kMiB, 100}, 3 * kMiB + 500,
                                    ExternalData::kAuto, kMiB),
              ElementsAre(true, false, false));
}

TEST(ChooseExternalTensorsTest, AutoTakesLargestFirstUntilUnderTheLimit) {
  // Threshold above every tensor: only the 2 GiB rule acts. Inline model
  // 1.5 + 1 + 0.6 GiB + 1000 bytes; moving the 1.5 GiB tensor out leaves
  // 1.6 GiB + 1000 + 96, under 2 GiB - 1, so the others stay.
  const uint64_t big = 3 * kGiB / 2, mid = kGiB, small = 3 * kGiB / 5;
  EXPECT_THAT(ChooseExternalTensors({mid, big, small}, big + mid + small + 1000,
                                    ExternalData::kAuto, 4 * kGiB),
              ElementsAre(false, true, false));
}

TEST(ChooseExternalTensorsTest, InjectedLimitNeedsSeveralAndBreaksTiesByOrder) {
  // limit 10000, model 15000: each 4000-byte tensor saves 4000 - 96 = 3904.
  // One leaves 11096 > 10000, two leave 7192: the first two of the equal
  // ones. The 50-byte one is under kMinExternalBytes.
  EXPECT_THAT(ChooseExternalTensors({4000, 4000, 4000, 50}, 15000,
                                    ExternalData::kAuto, 1 << 20, 10000),
              ElementsAre(true, true, false, false));
  // The planning charge per external tensor is the documented constant.
  EXPECT_EQ(kExternalEntryBytes, 96u);
}

TEST(ChooseExternalTensorsTest, NeverKeepsAllInlineEvenOverTheLimit) {
  EXPECT_THAT(
      ChooseExternalTensors({3 * kGiB}, 3 * kGiB + 10, ExternalData::kNever, 0),
      ElementsAre(false));
}

TEST(ChooseExternalTensorsTest, AlwaysTakesEveryTensorOfAtLeast1KiB) {
  EXPECT_THAT(ChooseExternalTensors({0, 1023, 1024, 8 * kMiB}, 100,
                                    ExternalData::kAlways, kGiB),
              ElementsAre(false, false, true, true));
}

TEST(ChooseExternalTensorsTest, ThresholdZeroTakesEveryTensorOfAtLeast1KiB) {
  EXPECT_THAT(
      ChooseExternalTensors({0, 8, 1024, 5000}, 100, ExternalData::kAuto, 0),
      ElementsAre(false, false, true, true));
}

TEST(ChooseExternalTensorsTest, TinyTensorsStayInlineEvenOverTheLimit) {
  // Shape inference needs them inline; the model then stays too large and
  // the writer reports it.
  EXPECT_THAT(
      ChooseExternalTensors({1000, 1000}, 5000, ExternalData::kAuto, 0, 1000),
      ElementsAre(false, false));
}

TEST(WriteModelTest, InlineWriteIsTheDeterministicSerialization) {
  const fs::path dir = TestDir();
  const onnx::ModelProto model = AddWeightModel(8);
  const std::string out = (dir / "m.onnx").string();
  ASSERT_TRUE(WriteModel(model, out).ok());
  EXPECT_EQ(ReadFile(out), ir::SerializeDeterministic(model));
  EXPECT_THAT(ListDir(dir), ElementsAre("m.onnx"));
}

TEST(WriteModelTest, ExternalDataIsAlignedAndReferencedByTheModel) {
  const fs::path dir = TestDir();
  onnx::ModelProto model = AddWeightModel(1000);  // 4000 bytes
  *model.mutable_graph()->add_initializer() =
      FloatTensor("v", std::vector<float>(300, 1.5f));  // 1200 bytes
  // Under 1 KiB: stays inline even with threshold 0.
  *model.mutable_graph()->add_initializer() = FloatTensor("s", {1, 2, 3});
  WriteOptions options;
  options.external_data_threshold = 0;
  const std::string out = (dir / "m.onnx").string();
  ASSERT_TRUE(WriteModel(model, out, options).ok());
  EXPECT_THAT(ListDir(dir), ElementsAre("m.onnx", "m.onnx.data"));
  // The const overload leaves the caller's model as it was.
  EXPECT_EQ(model.graph().initializer(0).raw_data().size(), 4000u);

  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(ReadFile(out)));
  const std::string sidecar = ReadFile(dir / "m.onnx.data");
  // w at 0 (4000 bytes), v at the next multiple of 4096.
  EXPECT_EQ(sidecar.size(), 4096u + 1200u);
  EXPECT_EQ(back.graph().initializer(2).raw_data().size(), 12u);
  EXPECT_EQ(back.graph().initializer(2).external_data_size(), 0);
  const uint64_t expected_offsets[] = {0, 4096};
  for (int i = 0; i < 2; ++i) {
    const onnx::TensorProto& t = back.graph().initializer(i);
    EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL);
    EXPECT_FALSE(t.has_raw_data());
    ASSERT_EQ(t.external_data_size(), 3);
    EXPECT_EQ(t.external_data(0).key(), "location");
    EXPECT_EQ(t.external_data(0).value(), "m.onnx.data");
    EXPECT_EQ(t.external_data(1).key(), "offset");
    EXPECT_EQ(std::stoull(t.external_data(1).value()), expected_offsets[i]);
    EXPECT_EQ(t.external_data(2).key(), "length");
    const std::string& original = model.graph().initializer(i).raw_data();
    EXPECT_EQ(std::stoull(t.external_data(2).value()), original.size());
    EXPECT_EQ(sidecar.substr(expected_offsets[i], original.size()), original);
  }
  // The padding is zeros.
  EXPECT_EQ(sidecar.substr(4000, 96), std::string(96, '\0'));
}

TEST(WriteModelTest, RvalueOverloadWritesTheSameFiles) {
  const fs::path dir = TestDir();
  WriteOptions options;
  options.external_data = ExternalData::kAlways;
  options.external_data_name = "w.bin";
  ASSERT_TRUE(
      WriteModel(AddWeightModel(1000), (dir / "a.onnx").string(), options)
          .ok());
  const std::string first_model = ReadFile(dir / "a.onnx");
  const std::string first_data = ReadFile(dir / "w.bin");
  ASSERT_TRUE(fs::remove(dir / "a.onnx") && fs::remove(dir / "w.bin"));
  onnx::ModelProto model = AddWeightModel(1000);
  ASSERT_TRUE(
      WriteModel(std::move(model), (dir / "a.onnx").string(), options).ok());
  EXPECT_EQ(ReadFile(dir / "a.onnx"), first_model);
  EXPECT_EQ(ReadFile(dir / "w.bin"), first_data);
}

TEST(WriteModelTest, NeverWritesNoSidecar) {
  const fs::path dir = TestDir();
  WriteOptions options;
  options.external_data = ExternalData::kNever;
  options.external_data_threshold = 0;
  ASSERT_TRUE(
      WriteModel(AddWeightModel(1000), (dir / "m.onnx").string(), options)
          .ok());
  EXPECT_THAT(ListDir(dir), ElementsAre("m.onnx"));
}

TEST(WriteModelTest, TypedFieldTensorsMoveAsLittleEndianRawBytes) {
  const fs::path dir = TestDir();
  onnx::ModelProto model = AddWeightModel(300);
  onnx::TensorProto* t = model.mutable_graph()->mutable_initializer(0);
  t->clear_raw_data();
  std::vector<float> expected(300);
  for (int i = 0; i < 300; ++i) {
    expected[i] = i * -0.25f;
    t->add_float_data(expected[i]);
  }
  WriteOptions options;
  options.external_data = ExternalData::kAlways;
  ASSERT_TRUE(WriteModel(model, (dir / "m.onnx").string(), options).ok());
  EXPECT_EQ(ReadFile(dir / "m.onnx.data"),
            std::string(reinterpret_cast<const char*>(expected.data()), 1200));
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(ReadFile(dir / "m.onnx")));
  EXPECT_EQ(back.graph().initializer(0).float_data_size(), 0);
}

TEST(WriteModelTest, UsersTmpFileNextToTheOutputIsUntouched) {
  const fs::path dir = TestDir();
  WriteFile(dir / "m.onnx.tmp", "user data");
  ASSERT_TRUE(WriteModel(AddWeightModel(4), (dir / "m.onnx").string()).ok());
  EXPECT_EQ(ReadFile(dir / "m.onnx.tmp"), "user data");
  EXPECT_THAT(ListDir(dir), ElementsAre("m.onnx", "m.onnx.tmp"));
}

TEST(WriteModelTest, OutputNameOf255CharactersWorks) {
  const fs::path dir = TestDir();
  const std::string name = std::string(250, 'n') + ".onnx";
  ASSERT_EQ(name.size(), 255u);
  const absl::Status s = WriteModel(AddWeightModel(4), (dir / name).string());
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(ListDir(dir), ElementsAre(name));
}

TEST(WriteModelTest, ConcurrentWritersOfOneOutputAllSucceed) {
  const fs::path dir = TestDir();
  const std::string out = (dir / "m.onnx").string();
  const onnx::ModelProto model = AddWeightModel(2000);
  WriteOptions options;
  options.external_data_threshold = 0;
  std::vector<absl::Status> results(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      results[i] = WriteModel(model, out, i % 2 ? options : WriteOptions());
    });
  }
  for (auto& t : threads) t.join();
  for (const absl::Status& s : results) EXPECT_TRUE(s.ok()) << s;
  onnx::ModelProto back;
  EXPECT_TRUE(back.ParseFromString(ReadFile(out)));
  // No temporaries left; the sidecar of the external-data writers stays.
  EXPECT_THAT(ListDir(dir), ElementsAre("m.onnx", "m.onnx.data"));
}

TEST(WriteModelTest, MissingDirectoryReportsTheOsReason) {
  const fs::path dir = TestDir();
  const std::string missing = (dir / "no" / "such").string();
  const absl::Status s = WriteModel(AddWeightModel(4), missing + "/m.onnx");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), absl::StrCat("cannot create temporary in '", missing,
                                      "': No such file or directory"));
}

TEST(WriteModelTest, UnwritableDirectoryReportsPermissionDenied) {
  const fs::path dir = TestDir();
  fs::create_directory(dir / "ro");
  fs::permissions(dir / "ro",
                  fs::perms::owner_read | fs::perms::owner_exec |
                      fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec);
  const std::string out = (dir / "ro" / "m.onnx").string();
  // Root ignores directory permissions: write as `nobody` in a child.
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      _exit(2);
    }
    const absl::Status s = WriteModel(AddWeightModel(4), out);
    _exit(s.message() == absl::StrCat("cannot create temporary in '",
                                      (dir / "ro").string(),
                                      "': Permission denied")
              ? 0
              : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  fs::permissions(dir / "ro", fs::perms::owner_all);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(fs::is_empty(dir / "ro"));
}

TEST(WriteModelTest, DeviceOutputIsRefused) {
  const absl::Status s = WriteModel(AddWeightModel(4), "/dev/full");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("'/dev/full': it exists and is not a "
                                     "regular file"));
}

TEST(WriteModelTest, DirectoryOutputIsRefused) {
  const fs::path dir = TestDir();
  fs::create_directory(dir / "m.onnx");
  const absl::Status s =
      WriteModel(AddWeightModel(4), (dir / "m.onnx").string());
  EXPECT_THAT(s.message(), HasSubstr("it is a directory"));
  EXPECT_THAT(ListDir(dir), ElementsAre("m.onnx"));
  EXPECT_TRUE(fs::is_empty(dir / "m.onnx"));
}

TEST(WriteModelTest, OutputThatIsAnInputIsRefusedByInode) {
  const fs::path dir = TestDir();
  WriteFile(dir / "b.npz", "weights");
  fs::create_hard_link(dir / "b.npz", dir / "link.onnx");
  WriteOptions options;
  options.protected_inputs = {(dir / "b.jaxpr").string(),
                              (dir / "b.npz").string()};
  const absl::Status s =
      WriteModel(AddWeightModel(4), (dir / "link.onnx").string(), options);
  EXPECT_THAT(s.message(), HasSubstr("is the input"));
  EXPECT_EQ(ReadFile(dir / "b.npz"), "weights");
  // The sidecar may not be an input either.
  options.external_data = ExternalData::kAlways;
  options.external_data_name = "b.npz";
  const absl::Status s2 =
      WriteModel(AddWeightModel(1000), (dir / "m.onnx").string(), options);
  EXPECT_THAT(s2.message(), HasSubstr("sidecar"));
  EXPECT_THAT(s2.message(), HasSubstr("is the input"));
  EXPECT_EQ(ReadFile(dir / "b.npz"), "weights");
  EXPECT_THAT(ListDir(dir), ElementsAre("b.npz", "link.onnx"));
}

TEST(WriteModelTest, SidecarNameMustBeAPlainFileName) {
  const fs::path dir = TestDir();
  WriteOptions options;
  for (const char* name : {"sub/x.data", "..", "m.onnx"}) {
    options.external_data_name = name;
    const absl::Status s =
        WriteModel(AddWeightModel(4), (dir / "m.onnx").string(), options);
    EXPECT_THAT(s.message(), HasSubstr("invalid external data name")) << name;
  }
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(WriteModelTest, OverTheLimitInlineFailsNamingTheLimitAndTheFlag) {
  const fs::path dir = TestDir();
  WriteFile(dir / "m.onnx", "previous model");
  const onnx::ModelProto model = AddWeightModel(1000);  // ~4 KB
  WriteOptions options;
  options.external_data = ExternalData::kNever;
  const absl::Status s =
      api::WriteModelWithLimit(model, (dir / "m.onnx").string(), options, 3000);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("over protobuf's 2 GiB limit"));
  EXPECT_THAT(s.message(), HasSubstr("--external_data=auto"));
  EXPECT_THAT(ListDir(dir), ElementsAre("m.onnx"));
  EXPECT_EQ(ReadFile(dir / "m.onnx"), "previous model");
}

TEST(WriteModelTest, OverTheLimitAutoMovesTheWeightToTheSidecar) {
  const fs::path dir = TestDir();
  // The 4000-byte weight is under the 1 MiB threshold: only the limit moves
  // it out.
  const absl::Status s = api::WriteModelWithLimit(
      AddWeightModel(1000), (dir / "m.onnx").string(), WriteOptions(), 3000);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(ListDir(dir), ElementsAre("m.onnx", "m.onnx.data"));
  EXPECT_LT(fs::file_size(dir / "m.onnx"), 3000u);
}

TEST(WriteModelTest, OverTheLimitEvenWithExternalDataFails) {
  const fs::path dir = TestDir();
  // Only a tiny tensor (which stays inline) and a 300-byte limit.
  const absl::Status s = api::WriteModelWithLimit(
      AddWeightModel(100), (dir / "m.onnx").string(), WriteOptions(), 300);
  EXPECT_THAT(s.message(), HasSubstr("even with every tensor of 1 KiB or "
                                     "more in the sidecar, over protobuf's "
                                     "2 GiB limit"));
  EXPECT_TRUE(fs::is_empty(dir));
}

// Runs `write` in a child process whose files may not grow past `limit`
// bytes (RLIMIT_FSIZE; SIGXFSZ ignored so write() fails with EFBIG), and
// returns the child's exit code: 0 when WriteModel failed with EFBIG's text.
template <typename Fn>
int ExitCodeUnderFileSizeLimit(rlim_t limit, Fn write) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    const absl::Status s = write();
    _exit(!s.ok() && absl::StrContains(s.message(), "File too large") ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(WriteModelTest, SidecarThatCannotBeWrittenLeavesNothing) {
  const fs::path dir = TestDir();
  WriteFile(dir / "m.onnx", "previous model");
  WriteFile(dir / "m.onnx.data", "previous data");
  const onnx::ModelProto model = AddWeightModel(64 * 1024);  // 256 KiB
  WriteOptions options;
  options.external_data_threshold = 0;
  EXPECT_EQ(ExitCodeUnderFileSizeLimit(
                64 * 1024,
                [&] {
                  return WriteModel(model, (dir / "m.onnx").string(), options);
                }),
            0);
  EXPECT_THAT(ListDir(dir), ElementsAre("m.onnx", "m.onnx.data"));
  EXPECT_EQ(ReadFile(dir / "m.onnx"), "previous model");
  EXPECT_EQ(ReadFile(dir / "m.onnx.data"), "previous data");
}

TEST(WriteModelTest, InlineModelThatCannotBeWrittenLeavesNothing) {
  const fs::path dir = TestDir();
  WriteFile(dir / "m.onnx", "previous model");
  const onnx::ModelProto model = AddWeightModel(64 * 1024);
  EXPECT_EQ(ExitCodeUnderFileSizeLimit(
                64 * 1024,
                [&] {
                  WriteOptions options;
                  options.external_data = ExternalData::kNever;
                  return WriteModel(model, (dir / "m.onnx").string(), options);
                }),
            0);
  EXPECT_THAT(ListDir(dir), ElementsAre("m.onnx"));
  EXPECT_EQ(ReadFile(dir / "m.onnx"), "previous model");
}

}  // namespace
}  // namespace jax2onnx::write_test
