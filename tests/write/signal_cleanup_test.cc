// Issue 24: SIGINT/SIGTERM/SIGHUP/SIGQUIT during the write of a large model
// left a hidden `.j2o-XXXX.tmp` of hundreds of MB beside the output. The
// handlers of jaxpr/io/output_guard.h remove every registered temporary and
// then die of the signal (exit status 128 + sig in a shell).
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/write_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/npy.h"
#include "jaxpr/io/output_guard.h"
#include "tests/cli_fixture.h"
#include "tests/write/write_test_util.h"

namespace jax2onnx::write_test {
namespace {

std::vector<std::string> Temporaries(const fs::path& dir) {
  std::vector<std::string> found;
  for (const std::string& name : ListDir(dir)) {
    if (absl::StartsWith(name, ".j2o-") || absl::StrContains(name, ".tmp-")) {
      found.push_back(name);
    }
  }
  return found;
}

// A child that holds an ExclusiveTempFile (the model writer's temporary)
// and an npz temporary registered the same way is killed by each signal:
// it must die of that signal with both temporaries gone.
TEST(SignalCleanupTest, EachSignalRemovesTheTemporariesAndKillsWithIt) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    const fs::path dir = TestDir();
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(ready[0]);
      jaxpr::InstallSignalCleanup();
      auto file = api::ExclusiveTempFile::Create(dir.string());
      if (!file.ok()) ::_exit(3);
      const std::string data(1 << 20, 'x');
      if (!file->Write(data.data(), data.size()).ok()) ::_exit(4);
      const std::string other = (dir / "out.npz.tmp-1-0").string();
      WriteFile(other, "partial");
      jaxpr::RegisterCleanupPath(other);
      (void)!::write(ready[1], "r", 1);
      for (;;) ::pause();
    }
    ::close(ready[1]);
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1) << "child did not get ready";
    ::close(ready[0]);
    EXPECT_EQ(Temporaries(dir).size(), 2u);  // both exist before the signal
    ASSERT_EQ(::kill(pid, sig), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "signal " << sig;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_THAT(Temporaries(dir), ::testing::IsEmpty()) << "signal " << sig;
  }
}

TEST(SignalCleanupTest, ForgottenPathsAreLeftAlone) {
  const fs::path dir = TestDir();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    jaxpr::InstallSignalCleanup();
    const std::string kept = (dir / "kept").string();
    WriteFile(kept, "committed");
    jaxpr::RegisterCleanupPath(kept);
    jaxpr::ForgetCleanupPath(kept);  // as after the rename
    ::raise(SIGTERM);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  EXPECT_EQ(ReadFile(dir / "kept"), "committed");
}

// The CLI end to end: SIGINT while `convert` writes a 128 MiB weight to its
// sidecar; the process dies of SIGINT and no `.j2o-*.tmp` (nor a sidecar
// without its model) remains.
class SignalCliTest : public testing_util::CliFixture {
 protected:
  SignalCliTest() : CliFixture("signal_cli_test_") {}
};

TEST_F(SignalCliTest, InterruptedConvertLeavesNoTemporary) {
  constexpr int64_t kN = 32 << 20;  // f32: 128 MiB
  WriteFile(dir_ / "b.jaxpr",
            absl::StrCat("{ lambda a:f32[", kN, "]; b:f32[", kN,
                         "]. let\n    c:f32[", kN, "] = add a b\n  in (c,) }\n"));
  {
    jaxpr::Array weights(jaxpr::DType::kF32, {kN});
    ASSERT_TRUE(jaxpr::WriteNpzFile(P("b.npz"), {{"const_0", weights}},
                                    /*compress=*/false)
                    .ok());
  }
  bool caught = false;
  for (int attempt = 0; attempt < 3 && !caught; ++attempt) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::execl(binary_.c_str(), binary_.c_str(), "convert", P("b.jaxpr").c_str(),
              "-o", P("m.onnx").c_str(), "--external_data=always",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Signal as soon as a temporary shows up.
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int status = 0;
    pid_t done = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (!Temporaries(dir_).empty()) {
        ASSERT_EQ(::kill(pid, SIGINT), 0);
        caught = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (done != pid) ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    if (!caught) {
      fs::remove(dir_ / "m.onnx");
      fs::remove(dir_ / "m.onnx.data");
      continue;
    }
    // Either the signal came first (the usual case: it dies of SIGINT) or
    // the write had just finished; never a temporary left behind.
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(WTERMSIG(status), SIGINT);
      EXPECT_FALSE(fs::exists(dir_ / "m.onnx.data") &&
                   !fs::exists(dir_ / "m.onnx"))
          << "a sidecar without its model";
    }
    EXPECT_THAT(Temporaries(dir_), ::testing::IsEmpty());
  }
  if (!caught) GTEST_SKIP() << "convert finished before a temporary was seen";
}

}  // namespace
}  // namespace jax2onnx::write_test
