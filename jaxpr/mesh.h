// Device meshes and collectives as JAX prints them: decoding shard_map's
// params (mesh, in_specs/in_names, out_specs/out_names, manual axes), the
// axis params of collectives (`axes=(0,)` positional under vmap, `axes=
// ('data',)` named under shard_map), and the device numbering used to emulate
// a mesh on one device. Shared by the reference interpreter and both
// converters; the semantics of each collective live in their own code.
#ifndef JAX2ONNX_JAXPR_MESH_H_
#define JAX2ONNX_JAXPR_MESH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

struct MeshAxis {
  std::string name;
  int64_t size = 0;
};

// Parses the CLI form `data=4,model=2`.
absl::StatusOr<std::vector<MeshAxis>> ParseMeshAxisSizes(
    absl::string_view text);

// Unrolling emulates every device; beyond this many it is refused.
inline constexpr int64_t kMaxEmulatedDevices = 64;

// The devices of the manual mesh axes, numbered row-major in mesh order
// (the last axis varies fastest), as JAX numbers a mesh's devices.
class DeviceGrid {
 public:
  DeviceGrid() = default;
  explicit DeviceGrid(std::vector<MeshAxis> axes);

  const std::vector<MeshAxis>& axes() const { return axes_; }
  int64_t num_devices() const { return num_devices_; }
  // Error naming the axis when it is not a manual axis of the mesh.
  absl::Status CheckAxes(const std::vector<std::string>& names,
                         absl::string_view what) const;
  // Product of the sizes of `names`.
  int64_t SizeAlong(const std::vector<std::string>& names) const;
  // The index of `device` along `names` taken together, the first name
  // major (JAX's axis_index of a tuple of axes).
  int64_t IndexAlong(int64_t device,
                     const std::vector<std::string>& names) const;
  // The device that agrees with `device` on every other axis and has index
  // `index` along `names`.
  int64_t Member(int64_t device, const std::vector<std::string>& names,
                 int64_t index) const;
  // The devices of `device`'s group along `names`, in index order.
  std::vector<int64_t> Group(int64_t device,
                             const std::vector<std::string>& names) const;

 private:
  int Position(const std::string& name) const;  // -1 when absent
  int CheckedPosition(const std::string& name) const;
  std::vector<int64_t> Coords(int64_t device) const;
  int64_t DeviceOf(const std::vector<int64_t>& coords) const;

  std::vector<MeshAxis> axes_;
  int64_t num_devices_ = 1;
};

// Per dim of an operand or result: the mesh axes splitting it, major first
// (P(('x', 'y'), None) -> {{"x", "y"}, {}}).
using DimAxes = std::vector<std::vector<std::string>>;

struct ShardMapParams {
  DeviceGrid grid;                 // manual axes only
  std::vector<DimAxes> in_specs;   // one per operand
  std::vector<DimAxes> out_specs;  // one per result
  const ClosedJaxpr* body = nullptr;
  // Every operand and result is replicated or every mesh axis has size 1:
  // the body runs once, on the whole values.
  bool trivially_replicated = false;
};
// Decodes a shard_map equation; errors say which param is unreadable and,
// for mesh sizes that are not printed, which axis needs `--mesh`.
// `axis_sizes` are the sizes the run was given for axes a printed mesh does
// not show (`--mesh`; the interpreter's, type checker's and converters'
// options); a size that contradicts a printed one is an error.
absl::StatusOr<ShardMapParams> DecodeShardMap(
    const Eqn& eqn, const std::vector<MeshAxis>& axis_sizes);

// Global <-> per-device shapes under a spec.
absl::StatusOr<std::vector<int64_t>> ShardShape(
    const std::vector<int64_t>& global, const DimAxes& spec,
    const DeviceGrid& grid, absl::string_view what);

// The positional (ints, vmap form) and named (mesh axes) axes a collective
// acts on, from its `axes` or `axis_name` param.
struct CollectiveAxes {
  std::vector<int64_t> positional;
  std::vector<std::string> named;
};
absl::StatusOr<CollectiveAxes> DecodeCollectiveAxes(const Eqn& eqn);

// Primitives whose meaning depends on the device they run on (psum, ...,
// axis_index), and a membership test.
const std::vector<std::string>& CollectivePrimitives();
bool IsCollectivePrimitive(absl::string_view primitive);
// The reduction an all-reduce collective computes: "add" for psum, psum2,
// psum_invariant and unreduced_psum, "max"/"min" for pmax/pmin and
// unreduced_pmax/unreduced_pmin (Unreduced -> Invariant: JAX lowers them
// to the same all-reduce, parallel.py _unreduced_psum_lowering); "" for
// every other primitive.
absl::string_view AllReduceOp(absl::string_view primitive);
// Sharding annotations and markers, identities on one device: device_put,
// sharding_constraint, reshard, mesh_cast, layout_constraint, name, pvary.
const std::vector<std::string>& ShardingMarkerPrimitives();
// True when `jaxpr` (or a jaxpr nested in its params) has a collective over
// a named axis or an axis_index.
bool UsesNamedAxes(const ClosedJaxpr& jaxpr);
// Error unless `axis_index_groups` is absent or None.
absl::Status CheckNoAxisIndexGroups(const Eqn& eqn);
// The call primitives whose body a mesh emulation steps into (pjit, jit,
// closed_call, ...) and the param holding the body, or nullptr.
const ClosedJaxpr* CallBody(const Eqn& eqn);

// Primitives that can never run as one ONNX graph (Pallas kernels, host
// callbacks, pmap/xmap programs) and the reason, shared by the interpreter
// and both converters so they refuse with the same words.
const std::vector<std::string>& RefusedPrimitives();
absl::Status RefusedPrimitiveError(absl::string_view primitive);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_MESH_H_
