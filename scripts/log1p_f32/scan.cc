// Lists the f32 t in (-1, 0) whose log1p(t) lies within 2^-48 (relative) of
// an f32 rounding boundary, using long double log1pl (64-bit mantissa, error
// ~2^-63, far below the threshold). Output: one hex bit pattern per line,
// then a summary line on stderr. Build and run (about a minute):
//   g++ -O2 -o /tmp/scan scripts/log1p_f32/scan.cc && /tmp/scan > hard.txt
// then round them with scripts/log1p_f32/round.py < hard.txt.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

int main() {
  uint64_t n = 0, hard = 0;
  for (uint32_t b = 0x80000001u; b < 0xbf800000u; ++b) {
    float t;
    std::memcpy(&t, &b, sizeof t);
    const long double exact = log1pl(static_cast<long double>(t));
    const float nearest = static_cast<float>(exact);
    const float neighbour = exact > nearest
                                ? std::nextafter(nearest, INFINITY)
                                : std::nextafter(nearest, -INFINITY);
    const long double boundary =
        (static_cast<long double>(nearest) + neighbour) / 2;
    if (fabsl(exact - boundary) < 0x1p-48L * fabsl(exact)) {
      std::printf("%08x\n", b);
      ++hard;
    }
    ++n;
  }
  std::fprintf(stderr, "%llu arguments scanned, %llu within 2^-48\n",
               static_cast<unsigned long long>(n),
               static_cast<unsigned long long>(hard));
}
