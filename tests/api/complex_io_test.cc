// The complex I/O convention on both pipelines: c64/c128 graph inputs,
// outputs and initializers are f32/f64 tensors with a trailing axis of 2
// (symbolic dims kept), complex npz constants keep their bytes, an fft model
// has a DFT node, and primitives without a complex lowering are refused with
// the primitive named.
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "onnx/onnx_pb.h"
#include "tests/ort_accepts.h"

namespace jax2onnx {
namespace {

using ::testing::HasSubstr;

class ComplexIoTest : public ::testing::TestWithParam<bool> {
 protected:
  absl::StatusOr<onnx::ModelProto> Convert(
      const std::string& text, const std::vector<NamedArray>& arrays = {},
      int opset = 23) {
    ConvertOptions options;
    options.use_onnx_ir = GetParam();
    options.read_environment = false;
    options.opset = opset;
    absl::StatusOr<onnx::ModelProto> model =
        ToOnnxFromText(text, arrays, options);
    // Whatever converts must be a model ORT accepts (tests/ort_accepts.h).
    if (model.ok()) EXPECT_ORT_ACCEPTS(*model);
    return model;
  }
};

std::string Dims(const onnx::ValueInfoProto& v) {
  std::string out;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    if (!out.empty()) out += ",";
    out += d.has_dim_param() ? d.dim_param() : std::to_string(d.dim_value());
  }
  return out;
}

TEST_P(ComplexIoTest, GraphInputsAndOutputsArePairsOfParts) {
  auto model = Convert(
      "{ lambda ; a:c64[B,3] b:c128[]. let c:c64[B,3] = neg a "
      "d:f32[B,3] = real c e:c128[] = conj b in (c, d, e) }");
  ASSERT_TRUE(model.ok()) << model.status();
  const onnx::GraphProto& g = model->graph();
  EXPECT_EQ(g.input(0).type().tensor_type().elem_type(),
            onnx::TensorProto::FLOAT);
  EXPECT_EQ(Dims(g.input(0)), "B,3,2");
  EXPECT_EQ(g.input(1).type().tensor_type().elem_type(),
            onnx::TensorProto::DOUBLE);
  EXPECT_EQ(Dims(g.input(1)), "2");
  EXPECT_EQ(Dims(g.output(0)), "B,3,2");
  EXPECT_EQ(Dims(g.output(1)), "B,3");
  EXPECT_EQ(g.output(2).type().tensor_type().elem_type(),
            onnx::TensorProto::DOUBLE);
  EXPECT_EQ(Dims(g.output(2)), "2");
}

TEST_P(ComplexIoTest, ComplexConstantIsAnInitializerOfPairs) {
  // (1+2i, 3+4i) as interleaved float32: 1, 2, 3, 4.
  const float parts[4] = {1, 2, 3, 4};
  NamedArray c{"const_0",
               "c64",
               {2},
               std::string(reinterpret_cast<const char*>(parts), 16)};
  auto model = Convert(
      "{ lambda a:c64[2]; b:c64[2]. let c:c64[2] = add a b in (c,) }", {c});
  ASSERT_TRUE(model.ok()) << model.status();
  bool found = false;
  for (const onnx::TensorProto& t : model->graph().initializer()) {
    if (t.data_type() == onnx::TensorProto::FLOAT && t.dims_size() == 2 &&
        t.dims(0) == 2 && t.dims(1) == 2) {
      found = true;
      ASSERT_EQ(t.raw_data().size(), 16u);
      float v[4];
      std::memcpy(v, t.raw_data().data(), 16);
      EXPECT_EQ(v[0], 1);  // (1+2i, 3+4i) as 1, 2, 3, 4
      EXPECT_EQ(v[3], 4);
    }
  }
  EXPECT_TRUE(found);
}

TEST_P(ComplexIoTest, FftIsOneDftPerAxis) {
  for (int opset : {17, 23}) {
    auto model = Convert(
        "{ lambda ; a:c64[2,4,6]. let b:c64[2,4,6] = fft[fft_lengths=(4, 6) "
        "fft_type=FftType.FFT] a in (b,) }",
        {}, opset);
    ASSERT_TRUE(model.ok()) << model.status();
    int dft = 0;
    for (const onnx::NodeProto& n : model->graph().node()) {
      if (n.op_type() == "DFT") {
        ++dft;
        // opset 17 takes the axis as an attribute, opset 20+ as an input.
        EXPECT_EQ(n.input_size(), opset >= 20 ? 3 : 2);
      }
    }
    EXPECT_EQ(dft, 2) << "opset " << opset;
  }
}

TEST_P(ComplexIoTest, UnsupportedPrimitiveOnComplexIsRefusedByName) {
  auto model = Convert(
      "{ lambda ; a:c64[3]. let b:i32[] = argmax[axes=(0,) "
      "index_dtype=int32] a in (b,) }");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              HasSubstr("'argmax' on complex values is not supported"));
  // JAX cannot run it either: the refusal says why there is nothing to match.
  EXPECT_THAT(model.status().message(),
              HasSubstr("JAX itself cannot run it"));
}

// Complex cholesky / triangular_solve / lu / qr / eigh / svd keep the real
// recipes' shape: one ONNX Loop, and a graph whose size does not depend on n
// (numerics: testdata/complex/{cholesky,triangular_solve,lu,qr,eigh,svd}*).
TEST_P(ComplexIoTest, ComplexFactorizationsAreLoopsIndependentOfN) {
  auto count = [&](const std::string& prim, int n) -> std::pair<int, int> {
    const std::string t =
        "c128[" + std::to_string(n) + "," + std::to_string(n) + "]";
    std::string text;
    if (prim == "cholesky") {
      text = "{ lambda ; a:" + t + ". let b:" + t + " = cholesky a in (b,) }";
    } else if (prim == "lu") {
      const std::string v = "i32[" + std::to_string(n) + "]";
      text = "{ lambda ; a:" + t + ". let b:" + t + " c:" + v + " d:" + v +
             " = lu a in (b, c, d) }";
    } else if (prim == "svd") {
      const std::string s = "f64[" + std::to_string(n) + "]";
      text = "{ lambda ; a:" + t + ". let b:" + s + " c:" + t + " d:" + t +
             " = svd[algorithm=None compute_uv=True full_matrices=False "
             "subset_by_index=None] a in (b, c, d) }";
    } else if (prim == "eigh") {
      const std::string w = "f64[" + std::to_string(n) + "]";
      text = "{ lambda ; a:" + t + ". let b:" + t + " c:" + w +
             " = eigh[algorithm=None lower=True sort_eigenvalues=True "
             "subset_by_index=None] a in (b, c) }";
    } else if (prim == "qr") {
      text = "{ lambda ; a:" + t + ". let b:" + t + " c:" + t +
             " = qr[full_matrices=False pivoting=False use_magma=None] a in "
             "(b, c) }";
    } else {
      text = "{ lambda ; a:" + t + " b:" + t + ". let c:" + t +
             " = triangular_solve[conjugate_a=True left_side=False "
             "lower=True transpose_a=True unit_diagonal=False] a b in (c,) }";
    }
    auto model = Convert(text);
    EXPECT_TRUE(model.ok()) << prim << ": " << model.status();
    if (!model.ok()) return {-1, -1};
    int loops = 0;
    for (const onnx::NodeProto& node : model->graph().node()) {
      if (node.op_type() == "Loop") ++loops;
    }
    return {loops, model->graph().node_size()};
  };
  for (const char* prim :
       {"cholesky", "triangular_solve", "lu", "qr", "eigh", "svd"}) {
    const auto small = count(prim, 3), large = count(prim, 17);
    // svd: the Jacobi Loop and the Loop that fills the U columns of zero
    // singular values (no steps for a full-rank input).
    EXPECT_EQ(small.first, std::string(prim) == "svd" ? 2 : 1) << prim;
    EXPECT_EQ(small, large) << prim;
  }
}

// Inside shard_map complex values are emulated part by part: sums and data
// movement are exact (testdata/complex/shard_map_fft), an order is refused.
TEST_P(ComplexIoTest, ShardMapPmaxOfComplexIsRefused) {
  auto model = Convert(R"({ lambda ; a:c64[4]. let
    b:c64[4] = shard_map[
      auto=frozenset()
      check_rep=True
      in_names=({0: ('z',)},)
      jaxpr={ lambda ; c:c64[2]. let
          d:c64[2] = pmax[axes=('z',) axis_index_groups=None] c
        in (d,) }
      mesh=Mesh('z': 2)
      out_names=({0: ('z',)},)
      rewrite=True
    ] a
  in (b,) })");
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(),
              HasSubstr("'pmax' of complex values is not supported"));
}

INSTANTIATE_TEST_SUITE_P(BothPipelines, ComplexIoTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Ir" : "Legacy";
                         });

}  // namespace
}  // namespace jax2onnx
