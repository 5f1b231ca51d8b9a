// Tests of .npy/.npz reading and writing: round trips for every dtype and
// shape kind, hand-built files (Fortran order, big-endian, v2/v3 headers),
// byte-compatibility with files numpy wrote, and errors on corrupt input.
#include "jaxpr/io/npy.h"

#include <zip.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jax2onnx::jaxpr {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A fresh empty folder per test.
class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat(
               "npy_test_",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  fs::path dir_;
};

// Deterministic contents valid for the dtype (bools 0/1, floats from bytes
// that may be NaN payloads too: Array equality is bytewise).
Array Pattern(DType dtype, std::vector<int64_t> shape, int seed) {
  Array a(dtype, std::move(shape));
  for (size_t i = 0; i < a.num_bytes(); ++i) {
    a.data()[i] = dtype == DType::kBool
                      ? static_cast<uint8_t>((i + seed) % 3 == 0)
                      : static_cast<uint8_t>(i * 37 + seed * 11 + 5);
  }
  return a;
}

const std::vector<DType>& AllDTypes() {
  static const std::vector<DType> dtypes = {
      DType::kBool, DType::kI8,  DType::kI16, DType::kI32, DType::kI64,
      DType::kU8,   DType::kU16, DType::kU32, DType::kU64, DType::kF16,
      DType::kBF16, DType::kF32, DType::kF64, DType::kC64, DType::kC128};
  return dtypes;
}

const std::vector<std::vector<int64_t>>& ShapeKinds() {
  static const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {3}, {2, 3}, {2, 0, 3}, {1, 2, 1, 2}};
  return shapes;
}

// Builds a .npy from a header dict: magic, version, little-endian length,
// the dict padded with spaces + '\n' to a multiple of 64 bytes, then data.
std::string MakeNpy(const std::string& dict, const std::string& data,
                    int major = 1) {
  const size_t len_bytes = major == 1 ? 2 : 4;
  std::string header = dict;
  const size_t prefix = 8 + len_bytes;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  for (size_t i = 0; i < len_bytes; ++i) {
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  }
  return out + header + data;
}

std::string Int32sLE(const std::vector<int32_t>& values) {
  std::string out;
  for (int32_t v : values) {
    const uint32_t u = static_cast<uint32_t>(v);
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>(u >> (8 * b)));
  }
  return out;
}

TEST_F(NpyTest, NpzRoundTripsEveryDTypeAndShapeStoredAndDeflated) {
  for (bool compress : {false, true}) {
    NamedArrays arrays;
    int seed = 0;
    for (DType dtype : AllDTypes()) {
      for (const auto& shape : ShapeKinds()) {
        arrays.emplace_back(absl::StrCat(NumpyName(dtype), "_", seed),
                            Pattern(dtype, shape, seed));
        ++seed;
      }
    }
    const std::string path = Path(compress ? "deflated.npz" : "stored.npz");
    ASSERT_TRUE(WriteNpzFile(path, arrays, compress).ok());
    auto read = ReadNpzFile(path);
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_EQ(read->size(), arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      EXPECT_EQ((*read)[i].first, arrays[i].first);
      EXPECT_EQ((*read)[i].second, arrays[i].second)
          << arrays[i].first << " " << arrays[i].second.TypeString();
    }
  }
}

TEST_F(NpyTest, DeflateShrinksCompressibleData) {
  // 4000 zero bytes deflate to far less; stored keeps them all.
  NamedArrays arrays = {{"zeros", Array(DType::kF32, {1000})}};
  ASSERT_TRUE(WriteNpzFile(Path("s.npz"), arrays, false).ok());
  ASSERT_TRUE(WriteNpzFile(Path("d.npz"), arrays, true).ok());
  EXPECT_GT(fs::file_size(Path("s.npz")), 4000u);
  EXPECT_LT(fs::file_size(Path("d.npz")), 1000u);
  auto read = ReadNpzFile(Path("d.npz"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)[0].second, arrays[0].second);
}

TEST_F(NpyTest, NpyFileRoundTripsAndLeavesNoTempFiles) {
  const Array a = Pattern(DType::kF64, {4, 5}, 3);
  ASSERT_TRUE(WriteNpyFile(Path("a.npy"), a).ok());
  ASSERT_TRUE(WriteNpzFile(Path("a.npz"), {{"x", a}}).ok());
  // Overwriting an existing file goes through rename as well.
  ASSERT_TRUE(WriteNpzFile(Path("a.npz"), {{"x", a}, {"y", a}}).ok());
  auto read = ReadNpyFile(Path("a.npy"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, a);
  auto npz = ReadNpzFile(Path("a.npz"));
  ASSERT_TRUE(npz.ok()) << npz.status();
  EXPECT_EQ(npz->size(), 2u);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("a.npy", "a.npz"));
}

TEST_F(NpyTest, EmptyNpzRoundTrips) {
  ASSERT_TRUE(WriteNpzFile(Path("e.npz"), {}).ok());
  auto read = ReadNpzFile(Path("e.npz"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->empty());
}

TEST_F(NpyTest, SerializedHeaderIsNumpyLayout) {
  // numpy writes exactly this dict for a float32 (2, 3) array and pads
  // prefix + dict + '\n' to a multiple of 64: 10 + 59 + 1 = 70 rounds up
  // to 128, so 58 spaces follow the dict, then '\n', then 6*4 data bytes.
  const std::string bytes = SerializeNpy(Array(DType::kF32, {2, 3}));
  const std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ASSERT_EQ(dict.size(), 59u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(bytes.substr(10 + 59, 58), std::string(58, ' '));
  // 1-d shapes keep Python's trailing comma, scalars are ().
  EXPECT_THAT(SerializeNpy(Array(DType::kI8, {5})),
              HasSubstr("'descr': '|i1', 'fortran_order': False, "
                        "'shape': (5,), }"));
  EXPECT_THAT(SerializeNpy(Array(DType::kBool, {})),
              HasSubstr("'descr': '|b1', 'fortran_order': False, "
                        "'shape': (), }"));
}

TEST_F(NpyTest, ReserializingNumpyWrittenVectorsIsByteIdentical) {
  // The vectors' npz entries are stored (uncompressed) .npy files written
  // by numpy: parsing and re-serializing each must reproduce its bytes,
  // which pins our header spelling and padding to numpy's.
  const fs::path vectors = fs::path(JAX2ONNX_VECTORS_DIR);
  ASSERT_TRUE(fs::is_directory(vectors))
      << vectors << " (checked in) is missing";
  int checked = 0;
  for (const char* group : {"abs", "gather", "and", "sort", "cumsum"}) {
    for (const auto& entry : fs::directory_iterator(vectors / group)) {
      if (entry.path().extension() != ".npz") continue;
      int error = 0;
      zip_t* z = zip_open(entry.path().c_str(), ZIP_RDONLY, &error);
      ASSERT_NE(z, nullptr) << entry.path();
      for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
        zip_stat_t st;
        ASSERT_EQ(zip_stat_index(z, i, 0, &st), 0);
        std::string raw(st.size, '\0');
        zip_file_t* f = zip_fopen_index(z, i, 0);
        ASSERT_NE(f, nullptr);
        ASSERT_EQ(zip_fread(f, raw.data(), st.size),
                  static_cast<zip_int64_t>(st.size));
        zip_fclose(f);
        auto array = ParseNpy(raw, st.name);
        ASSERT_TRUE(array.ok()) << array.status();
        EXPECT_TRUE(SerializeNpy(*array) == raw)
            << entry.path() << " " << st.name;
        ++checked;
      }
      zip_discard(z);
    }
  }
  EXPECT_GT(checked, 20);
}

TEST_F(NpyTest, FortranOrderIsTransposedToCOrder) {
  // The C-order array a[i][j] = 10*i + j with shape (2, 3) is
  //   [[0, 1, 2], [10, 11, 12]].
  // Fortran order stores column by column (first index fastest):
  //   a[0][0], a[1][0], a[0][1], a[1][1], a[0][2], a[1][2]
  //   = 0, 10, 1, 11, 2, 12.
  const std::string npy =
      MakeNpy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
              Int32sLE({0, 10, 1, 11, 2, 12}));
  auto a = ParseNpy(npy);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->shape(), (std::vector<int64_t>{2, 3}));
  const int32_t* v = a->typed_data<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(v, v + 6),
            (std::vector<int32_t>{0, 1, 2, 10, 11, 12}));
}

TEST_F(NpyTest, FortranOrderRank3) {
  // Shape (2, 3, 4), a[i][j][k] = 100*i + 10*j + k. Fortran offset of
  // (i, j, k) is i + 2*j + 6*k, so the file holds value(i,j,k) at that
  // position; reading must give value(i,j,k) at C offset 12*i + 4*j + k.
  std::vector<int32_t> fortran(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        fortran[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
  auto a = ParseNpy(
      MakeNpy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }",
              Int32sLE(fortran)));
  ASSERT_TRUE(a.ok()) << a.status();
  const int32_t* v = a->typed_data<int32_t>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(v[12 * i + 4 * j + k], 100 * i + 10 * j + k);
}

TEST_F(NpyTest, BigEndianAndNativeDescriptors) {
  // 258 = 0x00000102; big-endian bytes 00 00 01 02.
  auto i = ParseNpy(
      MakeNpy("{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }",
              std::string("\x00\x00\x01\x02", 4)));
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(i->GetAsInt64(0), 258);
  // 1.0f = 0x3f800000, -2.0f = 0xc0000000; a complex64 swaps each part.
  auto c = ParseNpy(
      MakeNpy("{'descr': '>c8', 'fortran_order': False, 'shape': (), }",
              std::string("\x3f\x80\x00\x00\xc0\x00\x00\x00", 8)));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->typed_data<float>()[0], 1.0f);
  EXPECT_EQ(c->typed_data<float>()[1], -2.0f);
  // '=' is native order (little-endian on supported hosts), '|' single byte.
  auto n = ParseNpy(
      MakeNpy("{'descr': '=u2', 'fortran_order': False, 'shape': (1,), }",
              std::string("\x01\x02", 2)));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->GetAsInt64(0), 0x0201);
  auto b = ParseNpy(
      MakeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
              std::string("\x01\x00\x01", 3)));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->dtype(), DType::kBool);
  EXPECT_EQ(b->GetAsInt64(2), 1);
}

TEST_F(NpyTest, Version2And3HeadersAndKeyOrder) {
  for (int major : {2, 3}) {
    // Keys in a different order and double quotes are still a valid dict.
    auto a = ParseNpy(MakeNpy(
        "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<i4\"}",
        Int32sLE({7, -8}), major));
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->GetAsInt64(1), -8);
  }
}

TEST_F(NpyTest, ScalarsAndZeroSizeArrays) {
  auto s = ParseNpy(
      MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (), }",
              Int32sLE({42})));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(s->GetAsInt64(0), 42);
  auto z = ParseNpy(MakeNpy(
      "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 0), }", ""));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->shape(), (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(z->num_bytes(), 0u);
}

TEST_F(NpyTest, CorruptNpyGivesInvalidArgumentNamingTheSource) {
  const std::string ok =
      MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
              Int32sLE({1, 2}));
  struct Case {
    std::string bytes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"NOTNUMPY" + ok.substr(8), "bad magic"},
      {ok.substr(0, ok.size() - 1), "truncated data"},
      {ok.substr(0, 40), "truncated header"},
      {ok + "x", "data size mismatch"},
      {MakeNpy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
               std::string(8, '\0')),
       "object arrays"},
      {MakeNpy("{'descr': '<U5', 'fortran_order': False, 'shape': (1,), }",
               std::string(20, '\0')),
       "unsupported descr '<U5'"},
      {MakeNpy("{'descr': [('a', '<i4')], 'fortran_order': False, "
               "'shape': (1,), }",
               Int32sLE({1})),
       "structured"},
      {MakeNpy("{'descr': '<i4', 'fortran_order': False}", Int32sLE({1})),
       "bad header"},
      {MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (-1,), }",
               Int32sLE({1})),
       "bad header"},
      {MakeNpy("not a dict", ""), "bad header"},
      {MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': "
               "(4294967296, 4294967296, 4294967296), }",
               Int32sLE({1})),
       "truncated data"},
      {std::string("\x93NUMPY\x09\x00\x10\x00", 10) + std::string(16, ' '),
       "version 9"},
  };
  for (const Case& c : cases) {
    auto a = ParseNpy(c.bytes, "my.npz:input_3");
    ASSERT_FALSE(a.ok()) << c.message;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(a.status().message(), HasSubstr("my.npz:input_3"));
    EXPECT_THAT(a.status().message(), HasSubstr(c.message));
  }
}

TEST_F(NpyTest, EveryTruncationAndRandomCorruptionFailsCleanly) {
  const std::string ok = SerializeNpy(Pattern(DType::kF32, {3, 4}, 1));
  for (size_t n = 0; n < ok.size(); ++n) {
    EXPECT_FALSE(ParseNpy(ok.substr(0, n)).ok()) << n;
  }
  // Random byte flips in the header must give a value or an error, never a
  // crash (run under ASan in the sanitizer build).
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = ok;
    const int flips = 1 + trial % 4;
    for (int f = 0; f < flips; ++f) {
      bad[rng() % 128] = static_cast<char>(rng() & 0xff);
    }
    (void)ParseNpy(bad);
  }
}

TEST_F(NpyTest, CorruptNpzFilesNameFileAndEntry) {
  // Not a zip at all.
  {
    std::ofstream(Path("junk.npz")) << "this is not a zip archive";
    auto r = ReadNpzFile(Path("junk.npz"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("junk.npz"));
  }
  // A zip whose entry is not a .npy.
  {
    ASSERT_TRUE(WriteNpzFile(Path("good.npz"),
                             {{"input_0", Pattern(DType::kI32, {8}, 2)}})
                    .ok());
    std::ifstream in(Path("good.npz"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    const size_t magic = bytes.find("\x93NUMPY");
    ASSERT_NE(magic, std::string::npos);
    std::string bad = bytes;
    bad[magic + 1] = 'X';  // corrupts the npy magic, and the zip CRC
    std::ofstream(Path("bad.npz"), std::ios::binary) << bad;
    auto r = ReadNpzFile(Path("bad.npz"));
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("bad.npz"));
    EXPECT_THAT(r.status().message(), HasSubstr("input_0.npy"));
    // Truncated archive.
    std::ofstream(Path("cut.npz"), std::ios::binary)
        << bytes.substr(0, bytes.size() / 2);
    EXPECT_FALSE(ReadNpzFile(Path("cut.npz")).ok());
  }
  // Missing file.
  EXPECT_EQ(ReadNpzFile(Path("missing.npz")).status().code(),
            absl::StatusCode::kNotFound);
}

// ReadNpzFile inflates or copies each entry straight into its array: entries
// in Fortran order, big-endian, bool bytes other than 0/1, and data larger
// than the 64 KiB first chunk read the same as ParseNpy on the entry's bytes
// (stored and deflated).
TEST_F(NpyTest, NpzEntriesReadInPlaceMatchParseNpy) {
  std::vector<int32_t> large(40000);  // 160 KB of data past the header
  for (size_t i = 0; i < large.size(); ++i)
    large[i] = static_cast<int32_t>(i * 7919);
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"fortran.npy",
       MakeNpy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
               Int32sLE({0, 10, 1, 11, 2, 12}))},
      {"big_endian.npy",
       MakeNpy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
               std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8))},
      {"bools.npy",
       MakeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
               std::string("\x00\x07\x01", 3))},
      {"large.npy",
       MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (40000,), }",
               Int32sLE(large))},
  };
  for (bool deflate : {false, true}) {
    const std::string path = Path(deflate ? "deflated.npz" : "stored.npz");
    int error = 0;
    zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    ASSERT_NE(z, nullptr);
    for (const auto& [name, bytes] : entries) {
      zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
      const zip_int64_t index =
          zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8);
      ASSERT_GE(index, 0);
      ASSERT_EQ(zip_set_file_compression(
                    z, index, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0),
                0);
    }
    ASSERT_EQ(zip_close(z), 0);
    auto read = ReadNpzFile(path);
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_EQ(read->size(), entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      auto expected = ParseNpy(entries[i].second);
      ASSERT_TRUE(expected.ok()) << expected.status();
      EXPECT_EQ((*read)[i].first + ".npy", entries[i].first);
      EXPECT_TRUE((*read)[i].second == *expected)
          << entries[i].first << (deflate ? " deflated" : " stored");
    }
    // Independent of ParseNpy: the Fortran entry in C order, the big-endian
    // one swapped, bools canonical.
    const int32_t* f = (*read)[0].second.typed_data<int32_t>();
    EXPECT_EQ(std::vector<int32_t>(f, f + 6),
              (std::vector<int32_t>{0, 1, 2, 10, 11, 12}));
    EXPECT_EQ((*read)[1].second.GetAsInt64(0), 0x0102);
    EXPECT_EQ((*read)[1].second.GetAsInt64(1), -2);
    EXPECT_EQ((*read)[2].second.bytes(), (std::vector<uint8_t>{0, 1, 1}));
    EXPECT_EQ((*read)[3].second.GetAsInt64(39999), 39999 * 7919);
  }
}

// A zip entry whose header claims ~3.5 GiB (and whose npy header a
// matching shape) but which holds a few bytes: stored, it cannot hold more
// than its compressed size; deflated, it cannot expand beyond 1032:1. Both
// are refused from the sizes alone, before the 3.5 GiB array is allocated.
TEST_F(NpyTest, NpzEntryClaimingMoreThanItsDataCanHoldIsRefusedUpFront) {
  constexpr uint32_t kClaimedElements = 0xE0000000u;
  const std::string npy = MakeNpy(
      "{'descr': '|u1', 'fortran_order': False, 'shape': (3758096384,), }",
      std::string(16, '\x01'));
  const uint32_t claimed =
      kClaimedElements + static_cast<uint32_t>(npy.size() - 16);
  for (bool deflate : {false, true}) {
    const std::string path = Path(deflate ? "bomb_deflated.npz" : "bomb.npz");
    int error = 0;
    zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    ASSERT_NE(z, nullptr);
    zip_source_t* src = zip_source_buffer(z, npy.data(), npy.size(), 0);
    const zip_int64_t index = zip_file_add(z, "x.npy", src, ZIP_FL_ENC_UTF_8);
    ASSERT_GE(index, 0);
    ASSERT_EQ(zip_set_file_compression(
                  z, index, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0),
              0);
    ASSERT_EQ(zip_close(z), 0);
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in),
                   std::istreambuf_iterator<char>());
    }
    // The uncompressed-size fields: local header +22, central directory +24
    // (APPNOTE.TXT 4.3.7 and 4.3.12), little-endian.
    auto patch = [&](size_t at) {
      for (int b = 0; b < 4; ++b) {
        bytes[at + b] = static_cast<char>((claimed >> (8 * b)) & 0xff);
      }
    };
    ASSERT_EQ(bytes.compare(0, 4, "PK\x03\x04"), 0);
    patch(22);
    const size_t central = bytes.find("PK\x01\x02");
    ASSERT_NE(central, std::string::npos);
    patch(central + 24);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    auto r = ReadNpzFile(path);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("decompression bomb"))
        << r.status();
    EXPECT_THAT(r.status().message(), HasSubstr(std::to_string(claimed)));
  }
}

TEST_F(NpyTest, RandomlyCorruptedNpzNeverCrashes) {
  for (bool compress : {false, true}) {
    ASSERT_TRUE(WriteNpzFile(Path("base.npz"),
                             {{"input_0", Pattern(DType::kF32, {6, 7}, 1)},
                              {"expected_0", Pattern(DType::kI64, {5}, 2)}},
                             compress)
                    .ok());
    std::ifstream in(Path("base.npz"), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    std::mt19937 rng(compress ? 7 : 8);
    int failures = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::string bad = bytes;
      for (int f = 0; f < 1 + trial % 5; ++f) {
        bad[rng() % bad.size()] = static_cast<char>(rng() & 0xff);
      }
      std::ofstream(Path("bad.npz"), std::ios::binary | std::ios::trunc) << bad;
      auto r = ReadNpzFile(Path("bad.npz"));
      if (!r.ok()) {
        ++failures;
        EXPECT_THAT(r.status().message(), HasSubstr("bad.npz"));
      }
    }
    // Most flips hit checksummed data or structure and must be detected.
    EXPECT_GT(failures, 150);
  }
}

// WriteNpzFile aligns each stored entry's data to 64 bytes, so ReadNpzFile
// borrows those arrays from its memory map of the file instead of copying
// them (zero-copy weights); deflated entries and bools (canonicalized to
// 0/1) are owned copies. Values are the same either way.
TEST_F(NpyTest, StoredEntriesAreBorrowedFromTheMapDeflatedOnesAreOwned) {
  const NamedArrays arrays = {
      {"w", Pattern(DType::kF32, {33, 17}, 1)},
      {"bias_with_a_longer_name", Pattern(DType::kF64, {5}, 2)},
      {"i", Pattern(DType::kI64, {3, 2}, 3)},
      {"u", Pattern(DType::kU8, {7}, 4)},
      {"b", Pattern(DType::kBool, {4}, 5)},
      {"c", Pattern(DType::kC64, {2}, 6)}};
  for (bool compress : {false, true}) {
    ASSERT_TRUE(WriteNpzFile(Path("a.npz"), arrays, compress).ok());
    auto read = ReadNpzFile(Path("a.npz"));
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_EQ(read->size(), arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      const Array& got = (*read)[i].second;
      EXPECT_TRUE(got == arrays[i].second) << arrays[i].first;
      const bool borrowable = !compress && got.dtype() != DType::kBool;
      EXPECT_EQ(got.is_borrowed(), borrowable)
          << arrays[i].first << (compress ? " deflated" : " stored");
      if (got.is_borrowed()) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(got.data()) % 64, 0u)
            << arrays[i].first;
      }
    }
  }
}

// Writing into a borrowed array copies it first: the file and other arrays
// borrowing it keep the stored values.
TEST_F(NpyTest, WritingABorrowedArrayCopiesIt) {
  const Array original = Pattern(DType::kI32, {4}, 7);
  ASSERT_TRUE(WriteNpzFile(Path("a.npz"), {{"x", original}}).ok());
  auto read = ReadNpzFile(Path("a.npz"));
  ASSERT_TRUE(read.ok()) << read.status();
  const Array shared = (*read)[0].second;
  Array copy = shared;
  ASSERT_TRUE(copy.is_borrowed());
  copy.typed_data<int32_t>()[0] = 12345;
  EXPECT_FALSE(copy.is_borrowed());
  EXPECT_EQ(copy.GetAsInt64(0), 12345);
  EXPECT_TRUE(shared == original);
  auto again = ReadNpzFile(Path("a.npz"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)[0].second == original);
}

// A stored zip built byte by byte (APPNOTE 4.3.7/4.3.12/4.3.16) with the
// entry's data at `pad` bytes past a 64-byte boundary, as np.savez leaves
// entries wherever the previous ones end.
std::string HandMadeStoredZip(const std::string& name, const std::string& npy,
                              size_t pad, uint32_t crc) {
  auto le = [](uint64_t v, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
    return out;
  };
  // The npy header is 64-byte aligned; the data lands at 30 + name + extra.
  const size_t extra = (64 - (30 + name.size()) % 64) % 64 + pad;
  std::string local = le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(0, 2) +
                      le(0, 2) + le(0x21, 2) + le(crc, 4) + le(npy.size(), 4) +
                      le(npy.size(), 4) + le(name.size(), 2) + le(extra, 2) +
                      name + std::string(extra, '\0');
  std::string zip = local + npy;
  const size_t cd_offset = zip.size();
  std::string cd = le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) +
                   le(0, 2) + le(0, 2) + le(0x21, 2) + le(crc, 4) +
                   le(npy.size(), 4) + le(npy.size(), 4) + le(name.size(), 2) +
                   le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
                   le(0, 4) + name;
  zip += cd;
  zip += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(1, 2) + le(1, 2) +
         le(cd.size(), 4) + le(cd_offset, 4) + le(0, 2);
  return zip;
}

// Stored entries are borrowed from the map whether or not their data is
// aligned to the element size (np.savez leaves about half unaligned): the
// bytes are the map's own, typed reads go through an aligned copy made on
// first use, and a CRC that does not match the stored bytes is an error.
TEST_F(NpyTest, UnalignedStoredEntriesAreBorrowedAndCrcIsChecked) {
  const std::string npy =
      MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
              Int32sLE({7, -8, 9}));
  const uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(npy.data()), npy.size()));
  for (size_t pad : {0, 1, 2, 4}) {
    const std::string path = Path(absl::StrCat("pad", pad, ".npz"));
    std::ofstream(path, std::ios::binary)
        << HandMadeStoredZip("x.npy", npy, pad, crc);
    auto read = ReadNpzFile(path);
    ASSERT_TRUE(read.ok()) << read.status();
    const Array& x = (*read)[0].second;
    EXPECT_TRUE(x.is_borrowed()) << "pad " << pad;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(x.bytes().data()) % 4, pad % 4);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(x.typed_data<int32_t>()) % 4, 0u);
    EXPECT_EQ(x.typed_data<int32_t>()[1], -8);
    EXPECT_EQ(x.GetAsInt64(0), 7);
    EXPECT_EQ(x.GetAsInt64(1), -8);
    EXPECT_EQ(x.GetAsInt64(2), 9);
  }
  for (size_t pad : {0, 1}) {
    const std::string path = Path(absl::StrCat("bad_crc", pad, ".npz"));
    std::ofstream(path, std::ios::binary)
        << HandMadeStoredZip("x.npy", npy, pad, crc ^ 1);
    auto bad = ReadNpzFile(path);
    ASSERT_FALSE(bad.ok()) << "pad " << pad;
    EXPECT_THAT(bad.status().message(), HasSubstr(path));
    EXPECT_THAT(bad.status().message(), HasSubstr("CRC"));
  }
}

// The same for a large entry: the values at the chunk edges, the aligned
// copy shared by copies of the array, a write that makes the written copy
// its own and leaves the others alone, and a CRC mismatch.
TEST_F(NpyTest, LargeUnalignedStoredEntriesAreBorrowedAndCrcIsChecked) {
  constexpr int kCount = 20000;  // 80,000 bytes of int32
  std::vector<int32_t> values(kCount);
  for (int i = 0; i < kCount; ++i) values[i] = i * 7919 - 1000000;
  const std::string npy = MakeNpy(
      absl::StrCat("{'descr': '<i4', 'fortran_order': False, 'shape': (",
                   kCount, ",), }"),
      Int32sLE(values));
  const uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(npy.data()), npy.size()));
  for (size_t pad : {1, 2, 3}) {
    const std::string path = Path(absl::StrCat("big_pad", pad, ".npz"));
    std::ofstream(path, std::ios::binary)
        << HandMadeStoredZip("x.npy", npy, pad, crc);
    auto read = ReadNpzFile(path);
    ASSERT_TRUE(read.ok()) << read.status();
    Array x = (*read)[0].second;
    const Array& cx = x;  // read-only access keeps the bytes borrowed
    ASSERT_EQ(cx.num_elements(), kCount);
    EXPECT_TRUE(cx.is_borrowed());
    EXPECT_NE(reinterpret_cast<uintptr_t>(cx.bytes().data()) % 4, 0u);
    for (int i : {0, 1, 4095, 10000, kCount - 1}) {
      EXPECT_EQ(cx.GetAsInt64(i), values[i]) << "pad " << pad << " i " << i;
    }
    EXPECT_EQ(cx.typed_data<int32_t>(),
              std::as_const((*read)[0].second).typed_data<int32_t>());
    x.SetFromInt64(0, 5);
    EXPECT_FALSE(x.is_borrowed());
    EXPECT_EQ(x.GetAsInt64(0), 5);
    EXPECT_EQ(x.GetAsInt64(kCount - 1), values[kCount - 1]);
    EXPECT_EQ((*read)[0].second.GetAsInt64(0), values[0]);
    std::ofstream(path, std::ios::binary)
        << HandMadeStoredZip("x.npy", npy, pad, crc ^ 0x80000000u);
    auto bad = ReadNpzFile(path);
    ASSERT_FALSE(bad.ok()) << "pad " << pad;
    EXPECT_THAT(bad.status().message(), HasSubstr("CRC"));
  }
}

// A big-endian entry stored unaligned is copied out of the map and
// byte-swapped: the values are the ones written (hand-encoded below).
TEST_F(NpyTest, UnalignedBigEndianStoredEntryIsCopiedAndSwapped) {
  const std::string npy =
      MakeNpy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
              std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8));  // 258, -2
  const uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(npy.data()), npy.size()));
  std::ofstream(Path("be.npz"), std::ios::binary)
      << HandMadeStoredZip("x.npy", npy, 1, crc);
  auto read = ReadNpzFile(Path("be.npz"));
  ASSERT_TRUE(read.ok()) << read.status();
  const Array& x = (*read)[0].second;
  EXPECT_FALSE(x.is_borrowed());
  EXPECT_EQ(x.GetAsInt64(0), 258);
  EXPECT_EQ(x.GetAsInt64(1), -2);
}

TEST_F(NpyTest, WriteRejectsDuplicateNamesAndOpaqueDTypes) {
  const Array a = Pattern(DType::kI8, {2}, 0);
  EXPECT_FALSE(WriteNpzFile(Path("d.npz"), {{"x", a}, {"x", a}}).ok());
  EXPECT_FALSE(
      WriteNpzFile(Path("o.npz"), {{"x", Array(DType::kOther, {})}}).ok());
  EXPECT_FALSE(fs::exists(Path("d.npz")));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
