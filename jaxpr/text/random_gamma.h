// The jaxpr `random_gamma` stands for: JAX's Marsaglia-Tsang sampler
// (jax/_src/random/core.py `_gamma_impl` with `_gamma_one`), written out in
// the primitives it binds (random_split, random_bits, erf_inv, while, ...),
// so that the reference interpreter and both pipelines compute it exactly as
// they compute those primitives, in either threefry mode (random_split and
// random_bits follow the run's threefry_partitionable option).
//
// The keys are split per element as `_gamma_impl` does (each key of the key
// array into prod(a.shape[key.ndim:]) keys), and the elements run one after
// another in a `scan` (JAX's own impl, lax.map; its CPU lowering vmaps the
// same per-element computation, which gives the same values element by
// element). Keys of every converted implementation (key<fry>, key<fry4>,
// key<phx2>, key<phx4>: the sampler calls the same split and bits
// primitives for each) and f32/f64 `a` are supported.
#ifndef JAX2ONNX_JAXPR_TEXT_RANDOM_GAMMA_H_
#define JAX2ONNX_JAXPR_TEXT_RANDOM_GAMMA_H_

#include <string>

#include "absl/status/statusor.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// The jaxpr text of random_gamma[log_space] for operands of avals `key`
// (key<TAG>[KS]) and `a` (f32/f64[AS], KS a prefix of AS), or an error
// naming what is unsupported.
absl::StatusOr<std::string> RandomGammaJaxprText(const Aval& key, const Aval& a,
                                                 bool log_space);

// The parsed jaxpr of the equation's decomposition (cached for the life of
// the process; the pointer stays valid).
absl::StatusOr<const ClosedJaxpr*> RandomGammaDecomposition(const Eqn& eqn);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_TEXT_RANDOM_GAMMA_H_
