// lax.fft in the reference interpreter: FFT, IFFT, RFFT and IRFFT over the
// trailing len(fft_lengths) axes, by the defining sum (a direct O(n^2) DFT
// per line, in complex<double>, rounded once to the result dtype):
//   FFT   X[k] = sum_j x[j] exp(-2 pi i jk/n)
//   IFFT  x[j] = 1/n sum_k X[k] exp(+2 pi i jk/n)
//   RFFT  the FFT of a real operand along the last axis, first n/2+1 terms,
//         then FFT along the other axes;
//   IRFFT IFFT along all but the last axis, then along the last axis the
//         real part of the IFFT of the Hermitian extension
//         X[n-k] = conj(X[k]) (so Im X[0] and Im X[n/2] do not matter),
// which is numpy's (and JAX's) normalisation. Twiddles use jk mod n so the
// angle is exact before the one cos/sin, and quarter turns are exact.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "jaxpr/array.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::jaxpr {
namespace {

using Complex = std::complex<double>;
using Result = absl::StatusOr<std::vector<Array>>;

enum class FftType { kFft, kIfft, kRfft, kIrfft };

absl::StatusOr<FftType> FftTypeOf(const Params& params) {
  const ParamValue* p = params.Find("fft_type");
  if (p == nullptr) return absl::InvalidArgumentError("fft: no fft_type");
  std::string name;
  if (p->kind() == ParamValue::Kind::kInt) {
    static const char* kNames[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    if (p->int_value() < 0 || p->int_value() > 3) {
      return absl::InvalidArgumentError("fft: unknown fft_type");
    }
    name = kNames[p->int_value()];
  } else {
    name = p->text();
    if (auto dot = name.rfind('.'); dot != std::string::npos) {
      name = name.substr(dot + 1);
    }
  }
  if (name == "FFT") return FftType::kFft;
  if (name == "IFFT") return FftType::kIfft;
  if (name == "RFFT") return FftType::kRfft;
  if (name == "IRFFT") return FftType::kIrfft;
  return absl::InvalidArgumentError(
      absl::StrCat("fft: unknown fft_type '", p->ToString(), "'"));
}

// A dense row-major complex<double> tensor.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<Complex> data;
};

// 1-D DFT of every line along `axis`, reading `in_len` inputs (zero-padded
// or truncated to n) and writing `out_len` outputs of the length-n
// transform.
Tensor DftAlong(const Tensor& x, int axis, int64_t n, int64_t out_len,
                bool inverse) {
  int64_t outer = 1, inner = 1;
  for (int a = 0; a < axis; ++a) outer *= x.shape[a];
  for (size_t a = axis + 1; a < x.shape.size(); ++a) inner *= x.shape[a];
  const int64_t in_len = x.shape[axis];
  Tensor y;
  y.shape = x.shape;
  y.shape[axis] = out_len;
  y.data.assign(outer * out_len * inner, Complex());
  const double sign = inverse ? 1.0 : -1.0;
  std::vector<Complex> twiddle(n);
  for (int64_t m = 0; m < n; ++m) {
    if ((4 * m) % n == 0) {
      // Quarter turns are exact: 1, -i, -1, i (forward).
      static const double kCos[] = {1, 0, -1, 0};
      static const double kSin[] = {0, 1, 0, -1};
      const int64_t quarter = 4 * m / n;
      twiddle[m] = Complex(kCos[quarter], sign * kSin[quarter]);
      continue;
    }
    const double angle =
        sign * 2.0 * M_PI * static_cast<double>(m) / static_cast<double>(n);
    twiddle[m] = Complex(std::cos(angle), std::sin(angle));
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < out_len; ++k) {
        Complex acc;
        for (int64_t j = 0; j < std::min(in_len, n); ++j) {
          acc += x.data[(o * in_len + j) * inner + i] * twiddle[(j * k) % n];
        }
        if (inverse) acc /= static_cast<double>(n);
        y.data[(o * out_len + k) * inner + i] = acc;
      }
    }
  }
  return y;
}

Result FftKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 1) {
    return absl::InvalidArgumentError("fft takes exactly one operand");
  }
  J2O_ASSIGN_OR_RETURN(FftType type, FftTypeOf(ctx.params()));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> lengths,
                       ctx.params().GetIntList("fft_lengths"));
  const Array& a = in[0];
  const int rank = static_cast<int>(a.shape().size());
  const int k = static_cast<int>(lengths.size());
  if (k < 1 || k > rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("fft: ", k, " fft_lengths for a rank-", rank, " operand"));
  }
  const bool real_in = type == FftType::kRfft;
  if (real_in != !IsComplex(a.dtype()) ||
      (real_in && a.dtype() != DType::kF32 && a.dtype() != DType::kF64)) {
    return absl::InvalidArgumentError(
        absl::StrCat("fft: operand dtype ", ShortName(a.dtype()),
                     " does not fit the fft_type"));
  }
  Tensor x;
  x.shape = a.shape();
  x.data.resize(a.num_elements());
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    switch (a.dtype()) {
      case DType::kF32:
        x.data[i] = a.typed_data<float>()[i];
        break;
      case DType::kF64:
        x.data[i] = a.typed_data<double>()[i];
        break;
      case DType::kC64:
        x.data[i] = Complex(a.typed_data<float>()[2 * i],
                            a.typed_data<float>()[2 * i + 1]);
        break;
      default:
        x.data[i] = Complex(a.typed_data<double>()[2 * i],
                            a.typed_data<double>()[2 * i + 1]);
    }
  }
  const int first = rank - k;
  switch (type) {
    case FftType::kFft:
    case FftType::kIfft:
      for (int j = 0; j < k; ++j) {
        x = DftAlong(x, first + j, lengths[j], lengths[j],
                     type == FftType::kIfft);
      }
      break;
    case FftType::kRfft:
      x = DftAlong(x, rank - 1, lengths[k - 1], lengths[k - 1] / 2 + 1, false);
      for (int j = 0; j + 1 < k; ++j) {
        x = DftAlong(x, first + j, lengths[j], lengths[j], false);
      }
      break;
    case FftType::kIrfft: {
      for (int j = 0; j + 1 < k; ++j) {
        x = DftAlong(x, first + j, lengths[j], lengths[j], true);
      }
      const int64_t n = lengths[k - 1];
      const int64_t m = x.shape[rank - 1];
      if (m != n / 2 + 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("fft: IRFFT of length ", n, " needs ", n / 2 + 1,
                         " elements on the last axis, got ", m));
      }
      // Hermitian extension along the last axis.
      Tensor full;
      full.shape = x.shape;
      full.shape[rank - 1] = n;
      const int64_t lines = static_cast<int64_t>(x.data.size()) / m;
      full.data.resize(lines * n);
      for (int64_t l = 0; l < lines; ++l) {
        for (int64_t q = 0; q < n; ++q) {
          full.data[l * n + q] =
              q < m ? x.data[l * m + q] : std::conj(x.data[l * m + (n - q)]);
        }
      }
      x = DftAlong(full, rank - 1, n, n, true);
      for (Complex& c : x.data) c = Complex(c.real(), 0.0);
      break;
    }
  }
  const DType out_dtype = ctx.OutputDType(0);
  Array out(out_dtype, x.shape);
  for (size_t i = 0; i < x.data.size(); ++i) {
    switch (out_dtype) {
      case DType::kF32:
        out.typed_data<float>()[i] = static_cast<float>(x.data[i].real());
        break;
      case DType::kF64:
        out.typed_data<double>()[i] = x.data[i].real();
        break;
      case DType::kC64:
        out.typed_data<float>()[2 * i] = static_cast<float>(x.data[i].real());
        out.typed_data<float>()[2 * i + 1] =
            static_cast<float>(x.data[i].imag());
        break;
      case DType::kC128:
        out.typed_data<double>()[2 * i] = x.data[i].real();
        out.typed_data<double>()[2 * i + 1] = x.data[i].imag();
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(
            "fft: result dtype ", ShortName(out_dtype), " is not supported"));
    }
  }
  return std::vector<Array>{std::move(out)};
}

}  // namespace

void RegisterFftKernels() { RegisterEvalKernel("fft", &FftKernel); }

}  // namespace jax2onnx::jaxpr
