// An npz in np.savez's layout (entries stored without alignment padding, so
// the weights' data is not aligned to the element size; borrowed from the
// map all the same, typed access reading an aligned copy) converts to
// exactly the bytes the aligned npz `WriteNpzFile` writes converts to:
// inline and with a sidecar.
#include <zlib.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/npy.h"
#include "tests/cli_fixture.h"
#include "tests/write/write_test_util.h"

namespace jax2onnx::write_test {
namespace {

constexpr int kN = 64 * 1024;  // f32: 256 KiB per weight
const std::string kJaxpr =
    absl::StrCat("{ lambda a:f32[", kN, "] d:f32[", kN, "]; b:f32[", kN,
                 "]. let\n    c:f32[", kN, "] = add a b\n    e:f32[", kN,
                 "] = mul c d\n  in (e,) }\n");

std::string LittleEndian(uint64_t v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  return out;
}

// The zip numpy.lib.npyio._savez writes through zipfile's
// `open(name, 'w', force_zip64=True)` on a seekable file: each local header
// (APPNOTE 4.3.7) with sizes 0xFFFFFFFF and a zip64 extra field (4.5.3, 20
// bytes) holding them, the .npy bytes right after it (no padding), then a
// central directory (4.3.12) with the plain 32-bit sizes and the end record.
// `data_offsets` receives where each entry's .npy bytes start in the file.
std::string SavezLayoutZip(
    const std::vector<std::pair<std::string, std::string>>& entries,
    std::vector<uint64_t>* data_offsets) {
  std::string zip, directory;
  for (const auto& [name, npy] : entries) {
    const uint32_t crc = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(npy.data()), npy.size()));
    const uint64_t offset = zip.size();
    zip += LittleEndian(0x04034b50, 4) + LittleEndian(45, 2) +
           LittleEndian(0, 2) + LittleEndian(0, 2) + LittleEndian(0, 2) +
           LittleEndian(0x21, 2) + LittleEndian(crc, 4) +
           LittleEndian(0xffffffff, 4) + LittleEndian(0xffffffff, 4) +
           LittleEndian(name.size(), 2) + LittleEndian(20, 2) + name +
           LittleEndian(1, 2) + LittleEndian(16, 2) +
           LittleEndian(npy.size(), 8) + LittleEndian(npy.size(), 8);
    data_offsets->push_back(zip.size());
    zip += npy;
    directory += LittleEndian(0x02014b50, 4) + LittleEndian(45, 2) +
                 LittleEndian(45, 2) + LittleEndian(0, 2) + LittleEndian(0, 2) +
                 LittleEndian(0, 2) + LittleEndian(0x21, 2) +
                 LittleEndian(crc, 4) + LittleEndian(npy.size(), 4) +
                 LittleEndian(npy.size(), 4) + LittleEndian(name.size(), 2) +
                 LittleEndian(0, 2) + LittleEndian(0, 2) + LittleEndian(0, 2) +
                 LittleEndian(0, 2) + LittleEndian(0, 4) +
                 LittleEndian(offset, 4) + name;
  }
  const uint64_t directory_offset = zip.size();
  zip += directory;
  zip += LittleEndian(0x06054b50, 4) + LittleEndian(0, 2) + LittleEndian(0, 2) +
         LittleEndian(entries.size(), 2) + LittleEndian(entries.size(), 2) +
         LittleEndian(directory.size(), 4) + LittleEndian(directory_offset, 4) +
         LittleEndian(0, 2);
  return zip;
}

class NpzLayoutConvertTest : public testing_util::CliFixture {
 protected:
  NpzLayoutConvertTest() : CliFixture("npz_layout_convert_test_") {}
};

TEST_F(NpzLayoutConvertTest, SavezLayoutConvertsToTheAlignedNpzsBytes) {
  jaxpr::NamedArrays weights;
  for (int k = 0; k < 2; ++k) {
    jaxpr::Array w(jaxpr::DType::kF32, {kN});
    for (int i = 0; i < kN; ++i) w.SetFromDouble(i, (i % 977) * 0.25 - k);
    weights.emplace_back(absl::StrCat("const_", k), std::move(w));
  }
  fs::create_directories(dir_ / "aligned");
  fs::create_directories(dir_ / "savez");
  for (const char* sub : {"aligned", "savez"}) {
    WriteFile(dir_ / sub / "b.jaxpr", kJaxpr);
  }
  ASSERT_TRUE(
      jaxpr::WriteNpzFile(P("aligned/b.npz"), weights, /*compress=*/false)
          .ok());
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& [name, array] : weights) {
    entries.emplace_back(name + ".npy", jaxpr::SerializeNpy(array));
  }
  std::vector<uint64_t> npy_offsets;
  WriteFile(dir_ / "savez" / "b.npz", SavezLayoutZip(entries, &npy_offsets));
  // Each weight's data (after the .npy header) is misaligned in the file,
  // hence in any mapping of it.
  for (size_t k = 0; k < entries.size(); ++k) {
    const std::string& npy = entries[k].second;
    const uint64_t header = npy.size() - kN * 4u;
    EXPECT_NE((npy_offsets[k] + header) % 4, 0u) << k;
  }

  // Both are borrowed from the map (no copy) and read the same values,
  // typed access at addresses aligned for it.
  for (const char* sub : {"aligned", "savez"}) {
    auto read = jaxpr::ReadNpzFile(P(absl::StrCat(sub, "/b.npz")));
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_EQ(read->size(), 2u);
    for (int k = 0; k < 2; ++k) {
      const jaxpr::Array& got = (*read)[k].second;
      EXPECT_TRUE(got.is_borrowed()) << sub << " " << k;
      EXPECT_TRUE(got == weights[k].second) << sub << " " << k;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(got.data()) % 4, 0u)
          << sub << " " << k;
    }
  }

  for (const std::string mode : {"never", "always"}) {
    for (const char* sub : {"aligned", "savez"}) {
      const std::string out = P(absl::StrCat(sub, "/m.onnx"));
      const testing_util::ShellResult r = testing_util::RunShell(
          absl::StrCat(binary_, " convert ", P(absl::StrCat(sub, "/b.jaxpr")),
                       " -o ", out, " --external_data=", mode, " 2>&1"));
      ASSERT_EQ(r.exit_code, 0) << r.output;
    }
    EXPECT_EQ(ListDir(dir_ / "aligned"), ListDir(dir_ / "savez")) << mode;
    for (const char* file : {"m.onnx", "m.onnx.data"}) {
      const fs::path a = dir_ / "aligned" / file, s = dir_ / "savez" / file;
      EXPECT_EQ(fs::exists(a),
                mode == "always" || file == std::string("m.onnx"));
      if (!fs::exists(a)) continue;
      const std::string want = ReadFile(a);
      if ((mode == "never") == (file == std::string("m.onnx"))) {
        EXPECT_GE(want.size(), 2u * kN * 4u) << mode << " " << file;
      }
      EXPECT_TRUE(want == ReadFile(s)) << mode << " " << file;
      fs::remove(a);
      fs::remove(s);
    }
  }
}

}  // namespace
}  // namespace jax2onnx::write_test
