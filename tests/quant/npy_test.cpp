// support/npy: byte-exact format, round trips for every dtype, and located errors.
#include "support/npy.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "support/diagnostic.hpp"

namespace tessel {
namespace {

std::vector<std::uint8_t> bytes_of(const std::string& header, std::vector<std::uint8_t> data) {
  // A version 1.0 preamble around `header` (not padded: the reader must not require padding).
  // Element by element: GCC 12's -Warray-bounds misfires on vector::insert here at -O2.
  std::vector<std::uint8_t> out;
  out.reserve(10 + header.size() + data.size());
  for (const int b : {0x93, int{'N'}, int{'U'}, int{'M'}, int{'P'}, int{'Y'}, 1, 0})
    out.push_back(static_cast<std::uint8_t>(b));
  out.push_back(static_cast<std::uint8_t>(header.size()));
  out.push_back(0);
  for (const char c : header) out.push_back(static_cast<std::uint8_t>(c));
  for (const std::uint8_t d : data) out.push_back(d);
  return out;
}

std::string error_of(const std::vector<std::uint8_t>& content) {
  try {
    (void)parse_npy(content, "x.npy");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Npy, SerialisesTheHeaderExactlyAsNumpy) {
  const std::vector<float> v = {1.0f, -2.5f};
  const auto bytes = serialize_npy(NpyArray::from_f32({2}, v));
  // np.save(np.array([1, -2.5], np.float32)) with NumPy 1.24: 136 bytes, header length 118.
  ASSERT_EQ(bytes.size(), 128u + 8u);
  const std::string header(bytes.begin() + 10, bytes.begin() + 128);
  EXPECT_EQ(header, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" +
                        std::string(60, ' ') + "\n");
  EXPECT_EQ(bytes[8], 118);  // header length, little-endian
  EXPECT_EQ(bytes[9], 0);
  EXPECT_EQ(bytes[128], 0x00);  // 1.0f = 0x3f800000, little-endian
  EXPECT_EQ(bytes[131], 0x3f);
}

TEST(Npy, RoundTripsEveryDtypeThroughAFile) {
  const auto dir = std::filesystem::temp_directory_path() / "tessel_npy_test";
  std::filesystem::create_directories(dir);
  const std::vector<std::int8_t> i8 = {-128, 0, 127, 5, -7, 1};
  const std::vector<std::int16_t> i16 = {-32768, 32767, 0};
  const std::vector<std::int32_t> i32 = {-2147483647 - 1, 2147483647};
  const std::vector<float> f32 = {0.25f, -1e30f, 3.0f, 0.0f};
  write_npy((dir / "a.npy").string(), NpyArray::from_i8({2, 3}, i8));
  write_npy((dir / "b.npy").string(), NpyArray::from_i16({3}, i16));
  write_npy((dir / "c.npy").string(), NpyArray::from_i32({1, 2}, i32));
  write_npy((dir / "d.npy").string(), NpyArray::from_f32({1, 2, 2, 1}, f32));
  const auto a = read_npy((dir / "a.npy").string());
  EXPECT_EQ(a.dtype, NpyDtype::i8);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a.values<std::int8_t>(), i8);
  EXPECT_EQ(read_npy((dir / "b.npy").string()).values<std::int16_t>(), i16);
  EXPECT_EQ(read_npy((dir / "c.npy").string()).values<std::int32_t>(), i32);
  const auto d = read_npy((dir / "d.npy").string());
  EXPECT_EQ(d.shape, (std::vector<std::int64_t>{1, 2, 2, 1}));
  EXPECT_EQ(d.values<float>(), f32);
  std::filesystem::remove_all(dir);
}

TEST(Npy, ReadsUnpaddedHeadersAndZeroDimensionalArrays) {
  const auto a = parse_npy(
      bytes_of("{'descr':'<i4','fortran_order':False,'shape':()}", {7, 0, 0, 0}), "x.npy");
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.values<std::int32_t>(), std::vector<std::int32_t>{7});
}

TEST(Npy, RejectsBadMagicWithTheFileName) {
  EXPECT_EQ(error_of({'P', 'K', 3, 4}),
            "x.npy: error: magic: not a .npy file (expected the magic string \\x93NUMPY; file has "
            "4 bytes)");
}

TEST(Npy, RejectsUnsupportedDtype) {
  EXPECT_EQ(error_of(bytes_of("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                              {0, 0, 0, 0, 0, 0, 0, 0})),
            "x.npy: error: header.descr: unsupported dtype '<f8' (expected float32 '<f4', int8 "
            "'|i1', int16 '<i2' or int32 '<i4')");
  EXPECT_NE(
      error_of(bytes_of("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0}))
          .find("unsupported dtype '>f4'"),
      std::string::npos);
}

TEST(Npy, RejectsFortranOrder) {
  EXPECT_EQ(
      error_of(bytes_of("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", {0, 0, 0, 0})),
      "x.npy: error: header.fortran_order: Fortran-order arrays are not supported");
}

TEST(Npy, RejectsDataShorterThanTheShape) {
  EXPECT_EQ(error_of(bytes_of("{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }",
                              {1, 0, 2, 0})),
            "x.npy: error: data: shape (2, 3) of int16 needs 12 data bytes but the file has 4 "
            "(from byte offset 69)");
}

TEST(Npy, RejectsTruncatedHeader) {
  auto content = bytes_of("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", {});
  content.resize(30);
  EXPECT_EQ(error_of(content),
            "x.npy: error: header: truncated: header says 57 bytes but the file has 20 after the "
            "preamble");
}

TEST(Npy, RejectsMissingAndUnknownHeaderKeys) {
  EXPECT_EQ(error_of(bytes_of("{'descr': '<f4', 'shape': (1,), }", {0, 0, 0, 0})),
            "x.npy: error: header.fortran_order: missing");
  EXPECT_EQ(error_of(bytes_of("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), "
                              "'colour': 'red'}",
                              {0, 0, 0, 0})),
            "x.npy: error: header.colour: unknown header key (expected descr, fortran_order, "
            "shape)");
}

TEST(Npy, MissingFileIsALocatedError) {
  try {
    (void)read_npy("/nonexistent/in.npy");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/in.npy: error: cannot open: No such file or directory");
  }
}

// Issue 41: (2^32, 2^32) float32 needs 2^66 bytes, which wrapped to 0 in 64 bits and matched an
// empty data section. The byte count is now checked against the 4 GiB limit.
TEST(Npy, AShapeWhoseByteCountWrapsIsRefused) {
  EXPECT_EQ(error_of(bytes_of("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (4294967296, 4294967296), }",
                              {})),
            "x.npy: error: header.shape: the shape needs more than 4294967296 data bytes, the "
            "limit for a .npy array");
  // A zero dimension makes any other dimension harmless: 0 bytes.
  EXPECT_EQ(error_of(bytes_of("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (0, 4294967296), }",
                              {})),
            "no error");
}

TEST(Npy, CheckFiniteNamesTheFirstNonFiniteElement) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {0, 1, 2, 3, 4, -inf, nan, 7};
  const NpyArray array = NpyArray::from_f32({2, 2, 2}, values);
  try {
    check_finite(array, "in.npy");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    // Flat index 5 of shape (2, 2, 2) is [1, 0, 1].
    EXPECT_STREQ(e.what(),
                 "in.npy: error: data[1, 0, 1]: value is -Inf (flat index 5); network inputs "
                 "and calibration data must be finite");
  }
  const std::vector<float> finite = {0, 1.5f, -3e38f};
  EXPECT_NO_THROW(check_finite(NpyArray::from_f32({3}, finite), "ok.npy"));
  const std::vector<std::int8_t> ints = {-128, 127};
  EXPECT_NO_THROW(check_finite(NpyArray::from_i8({2}, ints), "ints.npy"));
}

}  // namespace
}  // namespace tessel
