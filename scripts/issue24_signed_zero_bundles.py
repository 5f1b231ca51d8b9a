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
