// What the CLI tests share: the built `jax2onnx` binary, a fresh directory
// per test, and running a shell command with its exit code and stdout.
// Test areas that include it get JAX2ONNX_BINARY_DIR from tests/CMakeLists.
#ifndef JAX2ONNX_TESTS_CLI_FIXTURE_H_
#define JAX2ONNX_TESTS_CLI_FIXTURE_H_

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace jax2onnx::testing_util {

struct ShellResult {
  int exit_code = -1;  // -1: not started, or ended by a signal
  std::string output;  // what the command wrote on stdout
};

// Runs `command` with /bin/sh; redirect stderr inside it (`2>&1`) to see it.
inline ShellResult RunShell(const std::string& command) {
  ShellResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A CLI run's exit code with its stdout and stderr kept apart.
struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFileText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Base of the CLI test fixtures: SetUp skips the test when the binary is not
// built and gives it an empty directory TempDir()/PREFIX<test name>.
class CliFixture : public ::testing::Test {
 protected:
  explicit CliFixture(std::string dir_prefix)
      : dir_prefix_(std::move(dir_prefix)) {}

  void SetUp() override {
    binary_ = std::string(JAX2ONNX_BINARY_DIR) + "/bin/jax2onnx";
    if (!std::filesystem::exists(binary_)) {
      GTEST_SKIP() << binary_ << " is not built";
    }
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat(
               dir_prefix_,
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  std::string P(const std::string& rel) const { return (dir_ / rel).string(); }

  // Runs `prefix` + the binary + `args` with /bin/sh; stderr goes through a
  // file in the test's directory so it stays apart from stdout.
  CliResult RunBinary(const std::string& args, const std::string& prefix = "") {
    const std::filesystem::path err = dir_ / "stderr.txt";
    ShellResult shell =
        RunShell(absl::StrCat(prefix, binary_, " ", args, " 2>", err.string()));
    return {shell.exit_code, std::move(shell.output), ReadFileText(err)};
  }

  // `jax2onnx check ARGS`, its stderr kept in the test's err.txt (CheckErr).
  ShellResult RunCheck(const std::string& args) {
    return RunShell(absl::StrCat(binary_, " check ", args, " 2>", P("err.txt")));
  }
  std::string CheckErr() const { return ReadFileText(dir_ / "err.txt"); }
  // `check` could not run for want of ONNX Runtime: it failed naming it and
  // printed no result line (PASS/FAIL lines carry a bracketed summary).
  bool CheckFoundNoOrt(const ShellResult& r) const {
    return r.exit_code == 1 &&
           CheckErr().find("ONNX Runtime") != std::string::npos &&
           r.output.find("PASS") == std::string::npos &&
           r.output.find("FAIL") == std::string::npos &&
           r.output.find('[') == std::string::npos;
  }

  std::string binary_;
  std::filesystem::path dir_;

 private:
  std::string dir_prefix_;
};

}  // namespace jax2onnx::testing_util

#endif  // JAX2ONNX_TESTS_CLI_FIXTURE_H_
