# Writes the npz of issue 24's integer reduction bundles (testdata/primitives/
# reduce_max and reduce_prod): inputs and expected_i computed with Python
# integers (wrapping by hand), independent of the interpreter. No numpy needed.
# Usage: python3 scripts/issue24_integer_bundles.py testdata/primitives
import struct, zipfile, functools, sys
FMT = {'i8': ('<i1', 'b', 8, True), 'u8': ('<u1', 'B', 8, False),
       'i32': ('<i4', 'i', 32, True), 'u32': ('<u4', 'I', 32, False),
       'i64': ('<i8', 'q', 64, True), 'u64': ('<u8', 'Q', 64, False)}
def wrap(v, t):
    _, _, bits, signed = FMT[t]
    v &= (1 << bits) - 1
    if signed and v >= 1 << (bits - 1): v -= 1 << bits
    return v
def npy(t, shape, vals):
    descr, fmt, _, _ = FMT[t]
    shp = '(' + ''.join('%d, ' % d for d in shape).rstrip(' ') + ')' if len(shape) != 1 else '(%d,)' % shape[0]
    if len(shape) == 0: shp = '()'
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shp)
    h += ' ' * (127 - 10 - len(h)) + '\n'
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + struct.pack('<%d%s' % (len(vals), fmt), *vals)
def write(path, entries):
    with zipfile.ZipFile(path, 'w') as z:
        for name, (t, shape, vals) in entries.items():
            z.writestr(name + '.npy', npy(t, shape, vals))
def rows(flat, n): return [flat[i:i + n] for i in range(0, len(flat), n)]
out = sys.argv[1]
# reduce_max/min over i64 rows that share their high 32 bits.
r = [[373684873, 3753148654, 4236361778, 846149957, 991589548, 1771061856],
     [1, 2, 3, 4, 5, 3000000000],
     [-5, 2, 3, 4, 5, -3000000000],
     [3000000000, 2, 3, 4, 5, 6],
     [-1, -2147483648, -2147483649, -4294967296, -4294967295, 0]]
flat = sum(r, [])
write(out + '/reduce_max/i64_shared_high_words.npz', {
    'input_0': ('i64', (5, 6), flat),
    'expected_0': ('i64', (5,), [max(x) for x in r]),
    'expected_1': ('i64', (5,), [min(x) for x in r]),
    'expected_2': ('i64', (), [max(flat)]),
    'expected_3': ('i64', (6,), [min(c) for c in zip(*r)])})
ru = [[v & 0xFFFFFFFF for v in x] for x in r]
write(out + '/reduce_max/u32_high_bit.npz', {
    'input_0': ('u32', (5, 6), sum(ru, [])),
    'expected_0': ('u32', (5,), [max(x) for x in ru]),
    'expected_1': ('u32', (5,), [min(x) for x in ru])})
# u64 values near 2^63: their ordered i64 keys (u64 + INT64_MIN) are small.
base = 1 << 63
r64 = [[base + v for v in (1, 2, 3, 4, 5, 3000000000)],
       [base - 1, base + 4236361778, base + 3753148654, 7, base + 2147483648, base]]
write(out + '/reduce_max/u64_near_two_pow_63.npz', {
    'input_0': ('u64', (2, 6), sum(r64, [])),
    'expected_0': ('u64', (2,), [max(x) for x in r64]),
    'expected_1': ('u64', (2,), [min(x) for x in r64])})
# reduce_prod wraps: products past the dtype's range.
p = [[65536, 65536, 3, 1, 1], [2147483647, 2147483647, 2147483647, -1, 2],
     [-2147483648, 3, 5, 7, 1], [100000, 100000, 100000, 7, 9], [1, 1, 1, 1, 1],
     [-3, -5, -7, -9, -11], [46341, 46341, 1, 1, 1]]
pf = sum(p, [])
write(out + '/reduce_prod/i32_wraps.npz', {
    'input_0': ('i32', (7, 5), pf),
    'expected_0': ('i32', (7,), [wrap(functools.reduce(lambda a, b: a * b, x), 'i32') for x in p]),
    'expected_1': ('i32', (5,), [wrap(functools.reduce(lambda a, b: a * b, c), 'i32') for c in zip(*p)]),
    'expected_2': ('i32', (), [wrap(functools.reduce(lambda a, b: a * b, pf), 'i32')])})
q = [[(1 << 40) + 1, (1 << 40) + 3, 5], [18446744073709551615, 18446744073709551615, 3],
     [1 << 32, 1 << 32, 1], [12345678901, 98765432109, 1357913579]]
write(out + '/reduce_prod/u64_wraps.npz', {
    'input_0': ('u64', (4, 3), sum(q, [])),
    'expected_0': ('u64', (4,), [wrap(functools.reduce(lambda a, b: a * b, x), 'u64') for x in q])})
s = [[127, 127, 127, -127, 125, 123, 121], [101, 103, 105, 107, 109, 111, 113]]
write(out + '/reduce_prod/sym_i8_wraps.npz', {
    'input_0': ('i8', (2, 7), sum(s, [])),
    'expected_0': ('i8', (2,), [wrap(functools.reduce(lambda a, b: a * b, x), 'i8') for x in s]),
    'expected_1': ('i8', (7,), [wrap(c[0] * c[1], 'i8') for c in zip(*s)])})
