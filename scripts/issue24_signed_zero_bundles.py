# Writes the npz of issue 24's signed-zero bundles (testdata/primitives/*/
# signed_zero*.jaxpr): inputs and hand-derived expected values. Odd functions
# and round/sign keep the sign of a zero (f(-0) = -0, IEEE 754 and XLA);
# round(-0.4) = -0 (half away from zero keeps the sign); XLA's i1e negates only
# for x < 0 (i1e(-0) = +0, i1e(-inf) = -0). Each bundle also outputs 1/f(x),
# whose infinities show the sign of a zero result (check compares -0 == +0).
# No numpy needed. Usage: python3 scripts/issue24_signed_zero_bundles.py testdata/primitives
import struct, sys, zipfile
inf, nan = float('inf'), float('nan')
def npy(vals, t):
    descr, fmt = {'f32': ('<f4', 'f'), 'f64': ('<f8', 'd')}[t]
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(vals))
    h += ' ' * (117 - len(h)) + '\n'
    return (b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() +
            struct.pack('<%d%s' % (len(vals), fmt), *vals))
def recip(v):
    if v == 0: return -inf if str(v).startswith('-') else inf
    if v != v: return nan
    return 1.0 / v
def write(path, t, x, fx):
    with zipfile.ZipFile(path, 'w') as z:
        z.writestr('input_0.npy', npy(x, t))
        z.writestr('expected_0.npy', npy(fx, t))
        z.writestr('expected_1.npy', npy([recip(v) for v in fx], t))
out = sys.argv[1]
write(out + '/cbrt/signed_zero.npz', 'f32', [-0.0, 0.0, -8.0], [-0.0, 0.0, -2.0])
write(out + '/round/signed_zero.npz', 'f32', [-0.0, 0.0, -0.4, 0.4, -0.5, 2.5],
      [-0.0, 0.0, -0.0, 0.0, -1.0, 3.0])
write(out + '/sign/signed_zero.npz', 'f32', [-0.0, 0.0, -3.0, nan], [-0.0, 0.0, -1.0, nan])
write(out + '/expm1/signed_zero.npz', 'f32', [-0.0, 0.0], [-0.0, 0.0])
write(out + '/log1p/signed_zero.npz', 'f32', [-0.0, 0.0], [-0.0, 0.0])
for op in ('sinh', 'asinh', 'atanh', 'erf'):
    write(out + '/%s/signed_zero_f64.npz' % op, 'f64', [-0.0, 0.0], [-0.0, 0.0])
write(out + '/bessel_i1e/signed_zero.npz', 'f32', [-0.0, 0.0, -inf], [0.0, 0.0, -0.0])

# max/min against a literal zero of either sign (IEEE 754-2019 maximum and
# minimum, as XLA's CPU max/min: -0 < +0, NaN propagates), with literal first
# and second; 67 elements so that ONNX Runtime's vector body and scalar tail
# both see every case.
def ieee_max(a, b):
    if a != a or b != b: return nan
    if a == 0 and b == 0: return 0.0 if not (recip(a) < 0 and recip(b) < 0) else -0.0
    return max(a, b)
def ieee_min(a, b):
    if a != a or b != b: return nan
    if a == 0 and b == 0: return -0.0 if (recip(a) < 0 or recip(b) < 0) else 0.0
    return min(a, b)
def write_literal_zero(path, f):
    x = [-0.0, 0.0, nan, -1.0, 2.0] * 13 + [-0.0, 0.0]
    lit_pos = [f(v, 0.0) for v in x]
    lit_neg = [f(-0.0, v) for v in x]
    with zipfile.ZipFile(path, 'w') as z:
        z.writestr('input_0.npy', npy(x, 'f32'))
        z.writestr('expected_0.npy', npy(lit_pos, 'f32'))
        z.writestr('expected_1.npy', npy([recip(v) for v in lit_pos], 'f32'))
        z.writestr('expected_2.npy', npy(lit_neg, 'f32'))
        z.writestr('expected_3.npy', npy([recip(v) for v in lit_neg], 'f32'))
write_literal_zero(out + '/max/signed_zero_literal.npz', ieee_max)
write_literal_zero(out + '/min/signed_zero_literal.npz', ieee_min)
