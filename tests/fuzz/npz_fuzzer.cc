// libFuzzer target for the .npy parser and the .npz (zip) reader: no crash,
// no hang, no leak, and no allocation beyond what the bytes can hold (a
// declared size or a decompression ratio that cannot be real is refused
// before allocating; libFuzzer's -rss_limit_mb and -malloc_limit_mb catch
// the rest). Every input is tried both ways: as .npy bytes and as a .npz
// file. Built and run by scripts/fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/strings/string_view.h"
#include "jaxpr/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jax2onnx::jaxpr;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)ParseNpy(bytes, "fuzz.npy");
  // libzip reads archives from files: one scratch file per process.
  static const std::string path =
      "/tmp/jax2onnx_npz_fuzz_" + std::to_string(getpid()) + ".npz";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  (void)ReadNpzFile(path);
  return 0;
}
