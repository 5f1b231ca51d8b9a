// Prints jaxprs in current JAX style (width-80 layout, typed literals,
// sorted params as stored). print(parse(x)) is a fixed point after one
// round: parse(print(parse(x))) is structurally equal to parse(x).
#ifndef JAX2ONNX_JAXPR_TEXT_PRINTER_H_
#define JAX2ONNX_JAXPR_TEXT_PRINTER_H_

#include <string>

#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// Shared `let NAME = ... in` definitions followed by the main jaxpr; header
// lines are not printed.
std::string PrintJaxprFile(const JaxprFile& file);
std::string PrintJaxpr(const ClosedJaxpr& jaxpr);
std::string PrintAtom(const Atom& atom);
std::string PrintEqn(const Eqn& eqn);

// Structural equality (names, avals, literals, params, nested jaxprs);
// on mismatch `diff` (if non-null) describes the first difference.
bool StructurallyEqual(const JaxprFile& a, const JaxprFile& b,
                       std::string* diff = nullptr);
bool StructurallyEqual(const ClosedJaxpr& a, const ClosedJaxpr& b,
                       std::string* diff = nullptr);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_TEXT_PRINTER_H_
