// int4/uint4 and int2/uint2 below their first ONNX opset
// (plugin/narrow_int_carrier.h), on hand-built models:
// - declared types become INT8/UINT8 and packed initializers are unpacked
//   one sign-extended value per byte;
// - a Cast to the type that is not fed by a wrap gets Mod-based wrapping;
// - at opset 17 the wraps' BitwiseAnd/BitwiseXor become Mod/Add forms;
// - at an opset that has the type nothing changes.
// End to end (ONNX Runtime against npz values from
// scripts/narrow_dtype_bundles.py): testdata/dtypes/narrow/*_opset17.
#include "plugin/narrow_int_carrier.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::plugin {
namespace {

using onnx::TensorProto;
using ::testing::ElementsAre;

constexpr int kUInt4 = 21;
constexpr int kInt4 = 22;
constexpr int kUInt2 = 25;

onnx::ModelProto ModelAt(int opset) {
  onnx::ModelProto m;
  m.add_opset_import()->set_version(opset);
  return m;
}

void AddTyped(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
              const std::string& name, int elem_type) {
  onnx::ValueInfoProto* v = list->Add();
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op,
                         std::vector<std::string> in, const std::string& out,
                         const std::string& name) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const std::string& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

void AddCast(onnx::GraphProto* g, const std::string& in, const std::string& out,
             int to, const std::string& name) {
  onnx::AttributeProto* a =
      AddNode(g, "Cast", {in}, out, name)->add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(to);
}

void AddInt32Constant(onnx::GraphProto* g, const std::string& out, int v) {
  onnx::AttributeProto* a =
      AddNode(g, "Constant", {}, out, out + "_node")->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(TensorProto::INT32);
  a->mutable_t()->add_int32_data(v);
}

std::vector<std::string> Ops(const onnx::GraphProto& g) {
  std::vector<std::string> ops;
  for (const onnx::NodeProto& n : g.node()) ops.push_back(n.op_type());
  return ops;
}

TEST(NarrowIntCarrier, FirstOpsets) {
  EXPECT_EQ(NarrowIntFirstOpset(kInt4), 21);
  EXPECT_EQ(NarrowIntFirstOpset(kUInt4), 21);
  EXPECT_EQ(NarrowIntFirstOpset(kUInt2), 25);
  EXPECT_EQ(NarrowIntFirstOpset(TensorProto::INT8), 0);
}

TEST(NarrowIntCarrier, InitializerUnpackedSignExtendedAndIoRetyped) {
  onnx::ModelProto m = ModelAt(20);
  onnx::GraphProto* g = m.mutable_graph();
  // int4 [-8, 7, -1, 3]: codes 0x8, 0x7, 0xF, 0x3, low nibble first:
  // bytes 0x78, 0x3F.
  TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(kInt4);
  w->add_dims(4);
  w->set_raw_data(std::string("\x78\x3F", 2));
  AddTyped(g->mutable_input(), "u", kUInt4);
  AddTyped(g->mutable_output(), "w", kInt4);
  AddTyped(g->mutable_output(), "u", kUInt4);
  ASSERT_TRUE(CarryNarrowIntsBelowTheirOpset(m).ok());
  EXPECT_EQ(g->initializer(0).data_type(), TensorProto::INT8);
  EXPECT_EQ(g->initializer(0).raw_data(), std::string("\xF8\x07\xFF\x03", 4));
  EXPECT_EQ(g->input(0).type().tensor_type().elem_type(), TensorProto::UINT8);
  EXPECT_EQ(g->output(0).type().tensor_type().elem_type(), TensorProto::INT8);
  EXPECT_EQ(g->output(1).type().tensor_type().elem_type(), TensorProto::UINT8);
}

TEST(NarrowIntCarrier, UnwrappedCastGetsModWrap) {
  onnx::ModelProto m = ModelAt(17);
  onnx::GraphProto* g = m.mutable_graph();
  AddTyped(g->mutable_input(), "x", TensorProto::INT32);
  AddCast(g, "x", "y", kInt4, "to_i4");
  AddTyped(g->mutable_output(), "y", kInt4);
  ASSERT_TRUE(CarryNarrowIntsBelowTheirOpset(m).ok());
  // Cast to i32, Mod 16, then x >= 8 ? x - 16 : x, then the Cast to INT8.
  EXPECT_THAT(Ops(*g),
              ElementsAre("Cast", "Constant", "Mod", "Constant", "Constant",
                          "GreaterOrEqual", "Sub", "Where", "Cast"));
  EXPECT_EQ(g->node(8).attribute(0).i(), TensorProto::INT8);
  EXPECT_EQ(g->node(8).input(0), g->node(7).output(0));
  EXPECT_EQ(g->output(0).type().tensor_type().elem_type(), TensorProto::INT8);
}

TEST(NarrowIntCarrier, Opset17WrapWithoutBitwiseOps) {
  // The widening's wrap of an i32 `x` to int4: ((x & 15) ^ 8) - 8.
  onnx::ModelProto m = ModelAt(17);
  onnx::GraphProto* g = m.mutable_graph();
  AddTyped(g->mutable_input(), "x", TensorProto::INT32);
  AddInt32Constant(g, "c15", 15);
  AddInt32Constant(g, "c8", 8);
  AddNode(g, "BitwiseAnd", {"x", "c15"}, "low", "add_wrap");
  AddNode(g, "BitwiseXor", {"low", "c8"}, "flip", "add_wrap_1");
  AddNode(g, "Sub", {"flip", "c8"}, "wrapped", "add_wrap_2");
  AddCast(g, "wrapped", "y", kInt4, "add_round_out");
  AddTyped(g->mutable_output(), "y", kInt4);
  ASSERT_TRUE(CarryNarrowIntsBelowTheirOpset(m).ok());
  // x & 15 = Mod(x, 16); r ^ 8 for r in [0, 16) = Mod(r + 8, 16). The Cast
  // is fed by the wrap already, so it only changes its target.
  EXPECT_THAT(Ops(*g), ElementsAre("Constant", "Constant", "Constant", "Mod",
                                   "Add", "Constant", "Mod", "Sub", "Cast"));
  EXPECT_EQ(g->node(3).output(0), "low");
  EXPECT_EQ(g->node(6).output(0), "flip");
  EXPECT_EQ(g->node(8).attribute(0).i(), TensorProto::INT8);
}

TEST(NarrowIntCarrier, NothingChangesWhereOnnxHasTheType) {
  onnx::ModelProto m = ModelAt(21);
  onnx::GraphProto* g = m.mutable_graph();
  AddTyped(g->mutable_input(), "x", TensorProto::INT32);
  AddCast(g, "x", "y", kInt4, "to_i4");
  AddTyped(g->mutable_output(), "y", kInt4);
  const std::string before = m.SerializeAsString();
  ASSERT_TRUE(CarryNarrowIntsBelowTheirOpset(m).ok());
  EXPECT_EQ(m.SerializeAsString(), before);
  // At 21..24 only int2/uint2 are carried.
  AddTyped(g->mutable_output(), "z", kUInt2);
  ASSERT_TRUE(CarryNarrowIntsBelowTheirOpset(m).ok());
  EXPECT_EQ(g->output(0).type().tensor_type().elem_type(), kInt4);
  EXPECT_EQ(g->output(1).type().tensor_type().elem_type(), TensorProto::UINT8);
}

}  // namespace
}  // namespace jax2onnx::plugin
