#!/usr/bin/env python3
"""Writes the jaxpr JAX prints for a Flax ViT (google-research
vision_transformer models_vit.py: patch Conv, cls token, position
embeddings, pre-LN Encoder1DBlocks with nn.MultiHeadDotProductAttention
(jax.nn.softmax) and an MlpBlock with nn.gelu (tanh approximation), final
encoder_norm, head Dense), traced as
`jax.make_jaxpr(functools.partial(model.apply, params))(images)`, so the
parameters are constvars (random values come from `jax2onnx randomize`).

The printed forms follow JAX 0.9.x (typed literals, `jit`, `out_sharding` on
reductions, bare `broadcast_in_dim` shapes, `custom_jvp_call[name=...]`):
  - jnp.mean       -> reduce_sum + div by the count (jit inlined)
  - flax LayerNorm -> fast variance: mean(x), mean(square x), max(0, m2 - m^2),
                      expand_dims (broadcast_in_dim), x - mean,
                      rsqrt(var + eps) * scale, * , + bias
  - jax.nn.softmax -> custom_jvp_call[name=_softmax] over reduce_max,
                      max(initial=-inf, .), broadcast_in_dim, sub, exp,
                      reduce_sum, broadcast_in_dim, div
  - jax.nn.gelu    -> integer_pow[y=3], mul 0.044715, add, mul sqrt(2/pi),
                      tanh, add 1, mul 0.5, mul x
  - jnp.einsum     -> jit[name=_einsum] around dot_general (+ transpose)

Pure Python (no numpy): only text is written.

Also (--model blocks [--causal]) a stack of the same blocks on hidden
states (a GPT-2 block with the causal mask flax builds with iota/ge and
applies with jnp.where before the softmax), and (--model cnn) a small Flax
CNN (3x3 convs + relu, mean pool, Dense, jax.nn.log_softmax).

Usage: vit_jaxpr.py OUT.jaxpr [--model vit|blocks|cnn] [--layers 12]
         [--hidden 768] [--heads 12] [--mlp 3072] [--image 224] [--patch 16]
         [--classes 1000] [--batch 1] [--seq 128] [--causal] [--dtype f32]
"""
import argparse
import struct
import sys


def var_names():
  # JAX's naming sequence: a..z, ba..bz, ca.., ..., zz, baa, ...
  letters = "abcdefghijklmnopqrstuvwxyz"
  n = 0
  while True:
    k = n
    s = letters[k % 26]
    k //= 26
    while k:
      s = letters[k % 26] + s
      k //= 26
    yield s
    n += 1


class Printer:

  def __init__(self, dtype):
    self.dt = dtype
    self.names = var_names()
    self.lines = []

  def new(self):
    return next(self.names)

  def ty(self, shape, dt=None):
    return "%s[%s]" % (dt or self.dt, ",".join(str(d) for d in shape))

  def lit(self, value):
    return "%s:%s[]" % (value, self.dt)

  def eqn(self, indent, shape, prim, operands, params="", dt=None):
    out = self.new()
    head = "%s%s:%s = %s" % (" " * indent, out, self.ty(shape, dt), prim)
    if params:
      head += "[%s]" % params
    self.lines.append("%s %s" % (head, " ".join(operands)))
    return out


def f32_repr(x):
  """The text JAX prints for a float32 scalar literal (`.item()` repr)."""
  return repr(struct.unpack("<f", struct.pack("<f", x))[0])


def fmt_tuple(t):
  t = tuple(t)
  if len(t) == 1:
    return "(%d,)" % t[0]
  return "(" + ", ".join(str(x) for x in t) + ")"


def dims_except(rank, axis):
  return fmt_tuple([d for d in range(rank) if d != axis])


class Vit:

  def __init__(self, args):
    self.a = args
    self.p = Printer(args.dtype)
    self.consts = []  # (name, shape)

  def const(self, shape):
    name = self.p.new()
    self.consts.append((name, shape))
    return name

  # ---- layers ----
  def layer_norm(self, ind, x, shape, scale, bias):
    p, D, r = self.p, shape[-1], len(shape)
    red = shape[:-1]
    ax = "axes=(%d,) out_sharding=None" % (r - 1)
    s1 = p.eqn(ind, red, "reduce_sum", [x], ax)
    mu = p.eqn(ind, red, "div", [s1, p.lit("%.1f" % D)])
    sq = p.eqn(ind, shape, "square", [x])
    s2 = p.eqn(ind, red, "reduce_sum", [sq], ax)
    mu2 = p.eqn(ind, red, "div", [s2, p.lit("%.1f" % D)])
    musq = p.eqn(ind, red, "square", [mu])
    d = p.eqn(ind, red, "sub", [mu2, musq])
    var = p.eqn(ind, red, "max", [p.lit("0.0"), d])
    keep = shape[:-1] + [1]
    bd = "broadcast_dimensions=%s" % fmt_tuple(range(r - 1))
    mue = p.eqn(ind, keep, "broadcast_in_dim", [mu], bd)
    vare = p.eqn(ind, keep, "broadcast_in_dim", [var], bd)
    y = p.eqn(ind, shape, "sub", [x, mue])
    ve = p.eqn(ind, keep, "add", [vare, p.lit("9.999999974752427e-07")])
    rs = p.eqn(ind, keep, "rsqrt", [ve])
    fs = [1] * (r - 1) + [D]
    rsh = "dimensions=None new_sizes=%s sharding=None" % fmt_tuple(fs)
    sc = p.eqn(ind, fs, "reshape", [scale], rsh)
    m = p.eqn(ind, shape, "mul", [rs, sc])
    y = p.eqn(ind, shape, "mul", [y, m])
    bi = p.eqn(ind, fs, "reshape", [bias], rsh)
    return p.eqn(ind, shape, "add", [y, bi])

  def dense(self, ind, x, shape, kernel, bias, out_features):
    p, r = self.p, len(shape)
    out = shape[:-1] + [out_features]
    y = p.eqn(ind, out, "dot_general", [x, kernel],
              "dimension_numbers=(([%d], [0]), ([], [])) "
              "preferred_element_type=%s" % (r - 1, self.float_name()))
    fs = [1] * (r - 1) + [out_features]
    b = p.eqn(ind, fs, "reshape", [bias],
              "dimensions=None new_sizes=%s sharding=None" % fmt_tuple(fs))
    return p.eqn(ind, out, "add", [y, b])

  def float_name(self):
    return {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}[self.a.dtype]

  def gelu(self, ind, x, shape):
    p = self.p
    c = p.eqn(ind, shape, "integer_pow", [x], "y=3")
    c = p.eqn(ind, shape, "mul", [p.lit("0.044714998453855515"), c])
    c = p.eqn(ind, shape, "add", [x, c])
    c = p.eqn(ind, shape, "mul", [p.lit("0.7978845834732056"), c])
    c = p.eqn(ind, shape, "tanh", [c])
    c = p.eqn(ind, shape, "add", [p.lit("1.0"), c])
    c = p.eqn(ind, shape, "mul", [p.lit("0.5"), c])
    return p.eqn(ind, shape, "mul", [x, c])

  def einsum(self, ind, lhs, lhs_shape, rhs, rhs_shape, dn, out_shape,
             transpose=None, pre_shape=None):
    """jit[name=_einsum] wrapping dot_general (and a transpose)."""
    p = self.p
    out = p.new()
    a, b = p.new(), p.new()
    inner = []
    saved, p.lines = p.lines, inner
    res = p.eqn(ind + 6, pre_shape or out_shape, "dot_general", [a, b],
                "dimension_numbers=%s preferred_element_type=%s" %
                (dn, self.float_name()))
    if transpose:
      res = p.eqn(ind + 6, out_shape, "transpose", [res],
                  "permutation=%s" % fmt_tuple(transpose))
    p.lines = saved
    sp = " " * ind
    p.lines.append("%s%s:%s = jit[" % (sp, out, p.ty(out_shape)))
    p.lines.append("%s  name=_einsum" % sp)
    p.lines.append("%s  jaxpr={ lambda ; %s:%s %s:%s. let" %
                   (sp, a, p.ty(lhs_shape), b, p.ty(rhs_shape)))
    p.lines.extend(inner)
    p.lines.append("%s    in (%s,) }" % (sp, res))
    p.lines.append("%s] %s %s" % (sp, lhs, rhs))
    return out

  def softmax(self, ind, x, shape):
    p, r = self.p, len(shape)
    out = p.new()
    a, init = p.new(), p.new()
    inner = []
    saved, p.lines = p.lines, inner
    i2 = ind + 6
    red = shape[:-1]
    m = p.eqn(i2, red, "reduce_max", [a],
              "axes=(%d,) out_sharding=None" % (r - 1))
    c = p.eqn(i2, [], "convert_element_type", [init],
              "new_dtype=%s weak_type=False" % self.float_name())
    m = p.eqn(i2, red, "max", [c, m])
    keep = shape[:-1] + [1]
    bd = "broadcast_dimensions=%s" % fmt_tuple(range(r - 1))
    m = p.eqn(i2, keep, "broadcast_in_dim", [m], bd)
    d = p.eqn(i2, shape, "sub", [a, m])
    e = p.eqn(i2, shape, "exp", [d])
    s = p.eqn(i2, red, "reduce_sum", [e],
              "axes=(%d,) out_sharding=None" % (r - 1))
    s = p.eqn(i2, keep, "broadcast_in_dim", [s], bd)
    res = p.eqn(i2, shape, "div", [e, s])
    p.lines = saved
    sp = " " * ind
    p.lines.append("%s%s:%s = custom_jvp_call[" % (sp, out, p.ty(shape)))
    p.lines.append("%s  name=_softmax" % sp)
    p.lines.append("%s  call_jaxpr={ lambda ; %s:%s %s:%s. let" %
                   (sp, a, p.ty(shape), init, p.ty([])))
    p.lines.extend(inner)
    p.lines.append("%s    in (%s,) }" % (sp, res))
    p.lines.append("%s  jvp=_softmax_jvp" % sp)
    p.lines.append("%s  symbolic_zeros=False" % sp)
    p.lines.append("%s] %s %s" % (sp, x, p.lit("-inf")))
    return out

  def causal_where(self, ind, logits, shape):
    """flax dot_product_attention's jnp.where(mask, w, finfo.min) with the
    nn.make_causal_mask built in the traced function."""
    p = self.p
    L = shape[-1]
    r = p.eqn(ind, [L, L], "iota", [],
              "dimension=0 dtype=int32 shape=(%d, %d) sharding=None" % (L, L),
              dt="i32")
    c = p.eqn(ind, [L, L], "iota", [],
              "dimension=1 dtype=int32 shape=(%d, %d) sharding=None" % (L, L),
              dt="i32")
    m = p.eqn(ind, [L, L], "ge", [r, c], dt="bool")
    mb = p.eqn(ind, [1, 1, L, L], "broadcast_in_dim", [m],
               "broadcast_dimensions=(2, 3)", dt="bool")
    out = p.new()
    a, b, cc = p.new(), p.new(), p.new()
    d, e, f = p.new(), p.new(), p.new()
    sp = " " * ind
    full = ",".join(str(x) for x in shape)
    p.lines += [
        "%s%s:%s = jit[" % (sp, out, p.ty(shape)),
        "%s  name=_where" % sp,
        "%s  jaxpr={ lambda ; %s:bool[1,1,%d,%d] %s:%s %s:%s. let" %
        (sp, a, L, L, b, p.ty(shape), cc, p.ty([])),
        "%s      %s:bool[%s] = broadcast_in_dim[broadcast_dimensions=(0, 1, 2, 3)] %s"
        % (sp, d, full, a),
        "%s      %s:%s = broadcast_in_dim %s" % (sp, e, p.ty(shape), cc),
        "%s      %s:%s = select_n %s %s %s" % (sp, f, p.ty(shape), d, e, b),
        "%s    in (%s,) }" % (sp, f),
        "%s] %s %s %s" % (sp, mb, logits, p.lit("-3.4028234663852886e+38")),
    ]
    return out

  def attention(self, ind, x, shape, w):
    p, a = self.p, self.a
    B, L, D = shape
    H = a.heads
    hd = D // H
    qkv = []
    for k in ("q", "k", "v"):
      y = p.eqn(ind, [B, L, H, hd], "dot_general", [x, w[k + "_kernel"]],
                "dimension_numbers=(([2], [0]), ([], [])) "
                "preferred_element_type=%s" % self.float_name())
      b = p.eqn(ind, [1, 1, H, hd], "reshape", [w[k + "_bias"]],
                "dimensions=None new_sizes=(1, 1, %d, %d) sharding=None" %
                (H, hd))
      qkv.append(p.eqn(ind, [B, L, H, hd], "add", [y, b]))
    q, k, v = qkv
    q = p.eqn(ind, [B, L, H, hd], "div", [q, p.lit(f32_repr(hd**0.5))])
    logits = self.einsum(ind, q, [B, L, H, hd], k, [B, L, H, hd],
                         "(([3], [3]), ([0, 2], [0, 2]))", [B, H, L, L])
    if self.a.causal:
      logits = self.causal_where(ind, logits, [B, H, L, L])
    probs = self.softmax(ind, logits, [B, H, L, L])
    o = self.einsum(ind, probs, [B, H, L, L], v, [B, L, H, hd],
                    "(([3], [1]), ([0, 1], [0, 2]))", [B, L, H, hd],
                    transpose=(0, 2, 1, 3), pre_shape=[B, H, L, hd])
    y = p.eqn(ind, [B, L, D], "dot_general", [o, w["out_kernel"]],
              "dimension_numbers=(([2, 3], [0, 1]), ([], [])) "
              "preferred_element_type=%s" % self.float_name())
    b = p.eqn(ind, [1, 1, D], "reshape", [w["out_bias"]],
              "dimensions=None new_sizes=(1, 1, %d) sharding=None" % D)
    return p.eqn(ind, [B, L, D], "add", [y, b])

  def block_weights(self):
    a = self.a
    D, H = a.hidden, a.heads
    hd = D // H
    w = {}
    for k, s in (("ln1_bias", [D]), ("ln1_scale", [D]),
                 ("ln2_bias", [D]), ("ln2_scale", [D]),
                 ("mlp1_bias", [a.mlp]), ("mlp1_kernel", [D, a.mlp]),
                 ("mlp2_bias", [D]), ("mlp2_kernel", [a.mlp, D]),
                 ("k_bias", [H, hd]), ("k_kernel", [D, H, hd]),
                 ("out_bias", [D]), ("out_kernel", [H, hd, D]),
                 ("q_bias", [H, hd]), ("q_kernel", [D, H, hd]),
                 ("v_bias", [H, hd]), ("v_kernel", [D, H, hd])):
      w[k] = self.const(s)
    return w

  def block(self, ind, x, shape, w):
    a, p = self.a, self.p
    B, L, D = shape
    h = self.layer_norm(ind, x, shape, w["ln1_scale"], w["ln1_bias"])
    h = self.attention(ind, h, shape, w)
    x = p.eqn(ind, shape, "add", [h, x])
    h = self.layer_norm(ind, x, shape, w["ln2_scale"], w["ln2_bias"])
    h = self.dense(ind, h, shape, w["mlp1_kernel"], w["mlp1_bias"], a.mlp)
    h = self.gelu(ind, h, [B, L, a.mlp])
    h = self.dense(ind, h, [B, L, a.mlp], w["mlp2_kernel"], w["mlp2_bias"], D)
    return p.eqn(ind, shape, "add", [x, h])

  def build_blocks(self):
    """Transformer blocks only (a GPT-2 block stack with --causal): hidden
    states in, hidden states out."""
    a, p = self.a, self.p
    shape = [a.batch, a.seq, a.hidden]
    layers = [self.block_weights() for _ in range(a.layers)]
    x0 = p.new()
    x = x0
    for w in layers:
      x = self.block(4, x, shape, w)
    consts = " ".join("%s:%s" % (nm, p.ty(s)) for nm, s in self.consts)
    head = "{ lambda %s; %s:%s. let" % (consts, x0, p.ty(shape))
    return "\n".join([head] + p.lines + ["  in (%s,) }" % x]) + "\n"

  def conv(self, ind, x, shape, kernel, bias, cout, stride):
    """flax nn.Conv(cout, (3, 3), strides=stride, padding='SAME') + relu."""
    p = self.p
    B, Hh, Ww, C = shape
    oh = -(-Hh // stride)
    pad = max((oh - 1) * stride + 3 - Hh, 0)
    lo, hi = pad // 2, pad - pad // 2
    y = p.eqn(ind, [B, oh, oh, cout], "conv_general_dilated", [x, kernel],
              "batch_group_count=1 "
              "dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), "
              "rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2)) "
              "feature_group_count=1 lhs_dilation=(1, 1) out_sharding=None "
              "padding=((%d, %d), (%d, %d)) precision=None "
              "preferred_element_type=None rhs_dilation=(1, 1) "
              "window_strides=(%d, %d)" % (lo, hi, lo, hi, stride, stride))
    b = p.eqn(ind, [1, 1, 1, cout], "reshape", [bias],
              "dimensions=None new_sizes=(1, 1, 1, %d) sharding=None" % cout)
    y = p.eqn(ind, [B, oh, oh, cout], "add", [y, b])
    y = p.eqn(ind, [B, oh, oh, cout], "max", [y, p.lit("0.0")])
    return y, [B, oh, oh, cout]

  def build_cnn(self):
    """A small Flax CNN: 3x3 convs with relu, global mean pool, Dense,
    jax.nn.log_softmax."""
    a, p = self.a, self.p
    chans = [(3, 32, 1), (32, 64, 2), (64, 64, 2), (64, 128, 2)]
    ws = []
    for cin, cout, st in chans:
      ws.append((self.const([cout]), self.const([3, 3, cin, cout]), cout, st))
    head_b = self.const([a.classes])
    head_k = self.const([128, a.classes])
    img = p.new()
    x, shape = img, [a.batch, a.image, a.image, 3]
    for b, k, cout, st in ws:
      x, shape = self.conv(4, x, shape, k, b, cout, st)
    B, Hh, Ww, C = shape
    s = p.eqn(4, [B, C], "reduce_sum", [x], "axes=(1, 2) out_sharding=None")
    x = p.eqn(4, [B, C], "div", [s, p.lit("%.1f" % (Hh * Ww))])
    x = self.dense(4, x, [B, C], head_k, head_b, a.classes)
    # jax.nn.log_softmax
    r = p.eqn(4, [B], "reduce_max", [x], "axes=(1,) out_sharding=None")
    r = p.eqn(4, [B], "max", [p.lit("-inf"), r])
    r = p.eqn(4, [B, 1], "broadcast_in_dim", [r], "broadcast_dimensions=(0,)")
    r = p.eqn(4, [B, 1], "stop_gradient", [r])
    sh = p.eqn(4, [B, a.classes], "sub", [x, r])
    e = p.eqn(4, [B, a.classes], "exp", [sh])
    t = p.eqn(4, [B], "reduce_sum", [e], "axes=(1,) out_sharding=None")
    t = p.eqn(4, [B, 1], "broadcast_in_dim", [t], "broadcast_dimensions=(0,)")
    t = p.eqn(4, [B, 1], "log", [t])
    x = p.eqn(4, [B, a.classes], "sub", [sh, t])
    consts = " ".join("%s:%s" % (nm, p.ty(s)) for nm, s in self.consts)
    head = "{ lambda %s; %s:%s. let" % (consts, img,
                                        p.ty([a.batch, a.image, a.image, 3]))
    return "\n".join([head] + p.lines + ["  in (%s,) }" % x]) + "\n"

  def build(self):
    if self.a.model == "blocks":
      return self.build_blocks()
    if self.a.model == "cnn":
      return self.build_cnn()
    a, p = self.a, self.p
    B, D, H = a.batch, a.hidden, a.heads
    hd = D // H
    n = a.image // a.patch
    L = n * n + 1
    # constvars, in the order flax's param tree flattens (sorted keys)
    conv_b = self.const([D])
    conv_k = self.const([a.patch, a.patch, 3, D])
    cls = self.const([1, 1, D])
    layers = []
    for _ in range(a.layers):
      w = {}
      for k, s in (("ln1_bias", [D]), ("ln1_scale", [D]),
                   ("ln2_bias", [D]), ("ln2_scale", [D]),
                   ("mlp1_bias", [a.mlp]), ("mlp1_kernel", [D, a.mlp]),
                   ("mlp2_bias", [D]), ("mlp2_kernel", [a.mlp, D]),
                   ("k_bias", [H, hd]), ("k_kernel", [D, H, hd]),
                   ("out_bias", [D]), ("out_kernel", [H, hd, D]),
                   ("q_bias", [H, hd]), ("q_kernel", [D, H, hd]),
                   ("v_bias", [H, hd]), ("v_kernel", [D, H, hd])):
        w[k] = self.const(s)
      layers.append(w)
    norm_b = self.const([D])
    norm_s = self.const([D])
    pos = self.const([1, L, D])
    head_b = self.const([a.classes])
    head_k = self.const([D, a.classes])
    img = p.new()
    ind = 4
    y = p.eqn(ind, [B, n, n, D], "conv_general_dilated", [img, conv_k],
              "batch_group_count=1 "
              "dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), "
              "rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2)) "
              "feature_group_count=1 lhs_dilation=(1, 1) out_sharding=None "
              "padding=((0, 0), (0, 0)) precision=None "
              "preferred_element_type=None rhs_dilation=(1, 1) "
              "window_strides=(%d, %d)" % (a.patch, a.patch))
    b = p.eqn(ind, [1, 1, 1, D], "reshape", [conv_b],
              "dimensions=None new_sizes=(1, 1, 1, %d) sharding=None" % D)
    y = p.eqn(ind, [B, n, n, D], "add", [y, b])
    y = p.eqn(ind, [B, n * n, D], "reshape", [y],
              "dimensions=None new_sizes=(%d, %d, %d) sharding=None" %
              (B, n * n, D))
    c = cls
    if B != 1:
      c = p.eqn(ind, [B, 1, D], "broadcast_in_dim", [cls],
                "broadcast_dimensions=(0, 1, 2)")
    x = p.eqn(ind, [B, L, D], "concatenate", [c, y], "dimension=1")
    x = p.eqn(ind, [B, L, D], "add", [x, pos])
    shape = [B, L, D]
    for w in layers:
      h = self.layer_norm(ind, x, shape, w["ln1_scale"], w["ln1_bias"])
      h = self.attention(ind, h, shape, w)
      x = p.eqn(ind, shape, "add", [h, x])
      h = self.layer_norm(ind, x, shape, w["ln2_scale"], w["ln2_bias"])
      h = self.dense(ind, h, shape, w["mlp1_kernel"], w["mlp1_bias"], a.mlp)
      h = self.gelu(ind, h, [B, L, a.mlp])
      h = self.dense(ind, h, [B, L, a.mlp], w["mlp2_kernel"], w["mlp2_bias"],
                     D)
      x = p.eqn(ind, shape, "add", [x, h])
    x = self.layer_norm(ind, x, shape, norm_s, norm_b)
    x = p.eqn(ind, [B, 1, D], "slice", [x],
              "limit_indices=(%d, 1, %d) start_indices=(0, 0, 0) strides=None"
              % (B, D))
    x = p.eqn(ind, [B, D], "squeeze", [x], "dimensions=(1,)")
    x = self.dense(ind, x, [B, D], head_k, head_b, a.classes)
    consts = " ".join("%s:%s" % (nm, p.ty(s)) for nm, s in self.consts)
    head = "{ lambda %s; %s:%s. let" % (consts, img,
                                        p.ty([B, a.image, a.image, 3]))
    return "\n".join([head] + p.lines + ["  in (%s,) }" % x]) + "\n"


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("out")
  ap.add_argument("--layers", type=int, default=12)
  ap.add_argument("--hidden", type=int, default=768)
  ap.add_argument("--heads", type=int, default=12)
  ap.add_argument("--mlp", type=int, default=3072)
  ap.add_argument("--image", type=int, default=224)
  ap.add_argument("--patch", type=int, default=16)
  ap.add_argument("--classes", type=int, default=1000)
  ap.add_argument("--batch", type=int, default=1)
  ap.add_argument("--dtype", default="f32", choices=["f32", "bf16", "f16"])
  ap.add_argument("--model", default="vit", choices=["vit", "blocks", "cnn"],
                  help="vit: the whole ViT; blocks: transformer blocks on "
                  "[batch, seq, hidden] hidden states (a GPT-2 block with "
                  "--causal); cnn: a small conv net with log_softmax")
  ap.add_argument("--seq", type=int, default=128, help="--model blocks")
  ap.add_argument("--causal", action="store_true",
                  help="causal mask before the softmax (GPT)")
  ap.add_argument("--header", action="append", default=[],
                  help="a '# key: value' header line to put first")
  args = ap.parse_args()
  if args.hidden % args.heads:
    sys.exit("--hidden must be a multiple of --heads")
  text = Vit(args).build()
  with open(args.out, "w") as f:
    for h in args.header:
      f.write("# %s\n" % h)
    f.write(text)


if __name__ == "__main__":
  main()
