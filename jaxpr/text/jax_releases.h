// Which JAX releases could have printed a file: every print form whose
// first or last release docs/jax_versions.md records (read from JAX's source
// at the release tags) narrows the range. `jax2onnx parse` reports it.
//
// The evidence is one-sided where only one side is known: a form present in
// every covered release says nothing. A file whose forms no single release
// prints (a hand-edited mix) gets an empty range and the conflicting
// evidence.
#ifndef JAX2ONNX_JAXPR_TEXT_JAX_RELEASES_H_
#define JAX2ONNX_JAXPR_TEXT_JAX_RELEASES_H_

#include <string>
#include <vector>

#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// The releases covered, oldest first: "0.4.30" ... "0.11.0", then "main".
const std::vector<std::string>& KnownJaxReleases();

struct ReleaseEvidence {
  std::string form;    // "typed literal 2.0:f32[]", "pjit", ...
  std::string oldest;  // first release printing it ("" = unbounded)
  std::string newest;  // last release printing it ("" = unbounded)
};

struct ReleaseRange {
  bool consistent = true;  // some release satisfies every piece of evidence
  std::string oldest;      // KnownJaxReleases() bounds when unconstrained
  std::string newest;
  std::vector<ReleaseEvidence> evidence;  // one per distinct form
};

ReleaseRange JaxReleaseRange(const JaxprFile& file);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_TEXT_JAX_RELEASES_H_
