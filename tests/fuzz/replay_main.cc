// Runs a libFuzzer target's entry point on files, outside libFuzzer: built
// with every compiler (no clang or sanitizers needed), it replays fuzz
// findings and seeds in the regular build and reports each input's time.
//
//   convert_fuzz_replay FILE...
//
// Exits non-zero if a file cannot be read; a finding that still crashes or
// aborts does so here too (the targets abort on a wrong model).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", argv[i]);
      status = 1;
      continue;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    const auto start = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                           bytes.size());
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    std::printf("%s: %.1f ms\n", argv[i], ms);
  }
  return status;
}
