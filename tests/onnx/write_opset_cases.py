#!/usr/bin/python3
"""Writes ONNX test cases for what opsets 18 to 21 changed, in the ONNX backend test layout.

    write_opset_cases.py OUT_DIR

Each case is a folder with model.onnx and test_data_set_0/{input,output}_N.pb; the expected
outputs come from numpy written here from the ONNX spec (or from small cases worked by hand),
never from beamlab. Debian's python3-onnx (1.12) writes any opset number without checking
the ops against it, which is what lets these cases exist before its schemas do.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
RNG = np.random.default_rng(20)

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.bool_): TensorProto.BOOL,
}


def case(name, opset, op, inputs, outputs, attrs=None, consts=None):
    """One node `op` over graph inputs `inputs` (name -> array) and initializers `consts`;
    `outputs` maps output names to their expected arrays."""
    consts = consts or {}
    node = helper.make_node(op, list(inputs) + list(consts), list(outputs), **(attrs or {}))
    vi = lambda n, a: helper.make_tensor_value_info(n, NP_TO_ONNX[a.dtype], list(a.shape))
    graph = helper.make_graph(
        [node], name, [vi(n, a) for n, a in inputs.items()], [vi(n, a) for n, a in outputs.items()],
        initializer=[numpy_helper.from_array(a, n) for n, a in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10 if opset >= 21 else 9
    folder = os.path.join(OUT, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(values.items()):
            path = os.path.join(folder, "test_data_set_0", f"{kind}_{i}.pb")
            with open(path, "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def erf(x):
    return np.vectorize(__import__("math").erf)(x)


# ---- Gelu-20
x = randn(3, 7)
case("gelu_none_20", 20, "Gelu", {"x": x},
     {"y": (0.5 * x * (1 + erf(x / np.sqrt(2)))).astype(np.float32)})
t = np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))
case("gelu_tanh_20", 20, "Gelu", {"x": x}, {"y": (0.5 * x * (1 + t)).astype(np.float32)},
     {"approximate": "tanh"})


# ---- GroupNormalization-18 (scale per group) and -21 (per channel)
def group_norm(x, g, scale, bias, eps=1e-5):
    n, c = x.shape[:2]
    v = x.reshape(n, g, -1).astype(np.float64)
    norm = (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + eps)
    norm = norm.reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return (norm * scale.reshape(shape) + bias.reshape(shape)).astype(np.float32)


x = randn(2, 6, 4, 5)
s3, b3 = randn(3), randn(3)
case("group_norm_18", 18, "GroupNormalization", {"x": x},
     {"y": group_norm(x, 3, np.repeat(s3, 2), np.repeat(b3, 2))}, {"num_groups": 3},
     {"scale": s3, "bias": b3})
s6, b6 = randn(6), randn(6)
case("group_norm_21", 21, "GroupNormalization", {"x": x}, {"y": group_norm(x, 3, s6, b6)},
     {"num_groups": 3}, {"scale": s6, "bias": b6})
case("group_norm_21_eps", 21, "GroupNormalization", {"x": x},
     {"y": group_norm(x, 3, s6, b6, 1e-3)}, {"num_groups": 3, "epsilon": 1e-3},
     {"scale": s6, "bias": b6})


# ---- Col2Im-18: PyTorch's fold, written out
def col2im(cols, image, block, dil, pads, strides):
    n, ck, L = cols.shape
    k = int(np.prod(block))
    c = ck // k
    out = np.zeros((n, c) + tuple(image), cols.dtype)
    nb = [(image[i] + pads[i] + pads[i + 2] - (dil[i] * (block[i] - 1) + 1)) // strides[i] + 1
          for i in range(2)]
    for kap in range(k):
        o = np.unravel_index(kap, block)
        for l in range(L):
            b = np.unravel_index(l, nb)
            p = [b[i] * strides[i] - pads[i] + o[i] * dil[i] for i in range(2)]
            if all(0 <= p[i] < image[i] for i in range(2)):
                out[:, :, p[0], p[1]] += cols[:, np.arange(c) * k + kap, l]
    return out


for tag, dil, pads, strides in (("plain", [1, 1], [0, 0, 0, 0], [1, 1]),
                                ("strided_padded", [1, 2], [1, 0, 1, 2], [2, 1])):
    image, block = [5, 6], [2, 3]
    nb = [(image[i] + pads[i] + pads[i + 2] - (dil[i] * (block[i] - 1) + 1)) // strides[i] + 1
          for i in range(2)]
    cols = randn(2, 3 * 6, nb[0] * nb[1])
    case(f"col2im_{tag}_18", 18, "Col2Im", {"cols": cols},
         {"y": col2im(cols, image, block, dil, pads, strides)},
         {"dilations": dil, "pads": pads, "strides": strides},
         {"image_shape": np.array(image, np.int64), "block_shape": np.array(block, np.int64)})

# ---- CenterCropPad-18: crop one axis (odd difference), pad another (odd difference)
x = randn(5, 4, 3)
want = np.zeros((5, 2, 6), np.float32)
want[:, :, 1:4] = x[:, 1:3, :]
case("center_crop_pad_18", 18, "CenterCropPad", {"x": x}, {"y": want}, {"axes": [1, 2]},
     {"shape": np.array([2, 6], np.int64)})

# ---- Bitwise*-18
a = RNG.integers(-100, 100, (4, 5)).astype(np.int32)
b = RNG.integers(-100, 100, (5,)).astype(np.int32)
for op, f in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or),
              ("BitwiseXor", np.bitwise_xor)):
    case(f"{op.lower()}_18", 18, op, {"a": a, "b": b}, {"c": f(a, b)})
u = RNG.integers(0, 255, (3, 4)).astype(np.uint8)
case("bitwisenot_18", 18, "BitwiseNot", {"x": u}, {"y": np.bitwise_not(u)})

# ---- Pad-18 axes, Pad-19 wrap (pads larger than the dim too)
x = randn(3, 4, 2)
case("pad_axes_18", 18, "Pad", {"x": x},
     {"y": np.pad(x, [(0, 0), (2, 1), (0, 0)], constant_values=1.5)}, {},
     {"pads": np.array([2, 1], np.int64), "value": np.array(1.5, np.float32),
      "axes": np.array([-2], np.int64)})
case("pad_wrap_19", 19, "Pad", {"x": x}, {"y": np.pad(x, [(1, 3), (0, 0), (2, 0)], mode="wrap")},
     {"mode": "wrap"}, {"pads": np.array([1, 0, 2, 3, 0, 0], np.int64)})
# Pads longer than the dim go on around the torus (numpy 1.24's wrap does not, so by hand).
case("pad_wrap_longer_than_dim_19", 19, "Pad", {"x": np.array([0, 1, 2], np.float32)},
     {"y": np.array([2, 0, 1, 2, 0, 1, 2, 0, 1], np.float32)}, {"mode": "wrap"},
     {"pads": np.array([1, 5], np.int64)})

# ---- Reduce*-18 with axes as an input, noop_with_empty_axes; ReduceMax-20 over bools
x = randn(3, 4, 5)
case("reduce_mean_axes_input_18", 18, "ReduceMean", {"x": x},
     {"y": x.mean(axis=(0, 2), keepdims=True)}, {}, {"axes": np.array([0, -1], np.int64)})
case("reduce_l2_no_keepdims_18", 18, "ReduceL2", {"x": x},
     {"y": np.sqrt((x.astype(np.float64)**2).sum(axis=1)).astype(np.float32)}, {"keepdims": 0},
     {"axes": np.array([1], np.int64)})
case("reduce_max_all_18", 18, "ReduceMax", {"x": x}, {"y": x.max(keepdims=True)})
bools = RNG.random((3, 4)) > 0.7
case("reduce_max_bool_20", 20, "ReduceMax", {"x": bools},
     {"y": bools.any(axis=1, keepdims=True)}, {}, {"axes": np.array([1], np.int64)})
case("reduce_min_bool_20", 20, "ReduceMin", {"x": bools}, {"y": bools.all(axis=0)},
     {"keepdims": 0}, {"axes": np.array([0], np.int64)})

# ---- Split-18 num_outputs (uneven: the last part smaller)
x = randn(7, 3)
case("split_num_outputs_18", 18, "Split", {"x": x},
     {"a": x[0:3], "b": x[3:6], "c": x[6:7]}, {"num_outputs": 3, "axis": 0})

# ---- ScatterElements-18 / ScatterND-18 reductions max and min
data = randn(3, 4)
idx = np.array([[0, 1, 1], [2, 2, 0]], np.int64)
upd = randn(2, 3)
for red, f in (("max", np.maximum), ("min", np.minimum)):
    want = data.copy()
    for i in range(2):
        for j in range(3):
            want[i, idx[i, j]] = f(want[i, idx[i, j]], upd[i, j])
    case(f"scatter_elements_{red}_18", 18, "ScatterElements",
         {"data": data, "idx": idx, "upd": upd}, {"y": want}, {"axis": 1, "reduction": red})
    nd_idx = np.array([[1], [0], [1]], np.int64)
    nd_upd = randn(3, 4)
    want = data.copy()
    for i in range(3):
        want[nd_idx[i, 0]] = f(want[nd_idx[i, 0]], nd_upd[i])
    case(f"scatter_nd_{red}_18", 18, "ScatterND", {"data": data, "idx": nd_idx, "upd": nd_upd},
         {"y": want}, {"reduction": red})


# ---- AveragePool-19 dilations, LpPool-18 ceil_mode
def pool2d(x, k, s, d, f, ceil=False):
    n, c, h, w = x.shape
    span = [d[i] * (k[i] - 1) + 1 for i in range(2)]
    rnd = np.ceil if ceil else np.floor
    out = [int(rnd((x.shape[2 + i] - span[i]) / s[i])) + 1 for i in range(2)]
    y = np.zeros((n, c) + tuple(out), np.float64)
    for i in range(out[0]):
        for j in range(out[1]):
            rows = [i * s[0] + a * d[0] for a in range(k[0]) if i * s[0] + a * d[0] < h]
            cols = [j * s[1] + b * d[1] for b in range(k[1]) if j * s[1] + b * d[1] < w]
            y[:, :, i, j] = f(x[:, :, rows][:, :, :, cols].reshape(n, c, -1))
    return y.astype(np.float32)


x = randn(1, 2, 7, 8)
case("average_pool_dilations_19", 19, "AveragePool", {"x": x},
     {"y": pool2d(x, [2, 3], [1, 2], [2, 2], lambda v: v.mean(-1))},
     {"kernel_shape": [2, 3], "strides": [1, 2], "dilations": [2, 2]})
case("lp_pool_ceil_18", 18, "LpPool", {"x": x},
     {"y": pool2d(x, [3, 3], [2, 2], [1, 1], lambda v: np.sqrt((v**2).sum(-1)), ceil=True)},
     {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1, "p": 2})


# ---- DFT-20: axis as an input (default -2, the last signal axis)
def dft(x, axis):
    c = x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0]
    y = np.fft.fft(c, axis=axis)
    return np.stack([y.real, y.imag], -1).astype(np.float32)


x = randn(2, 6, 5, 2)
case("dft_default_axis_20", 20, "DFT", {"x": x}, {"y": dft(x, -1)})
case("dft_axis_input_20", 20, "DFT", {"x": x}, {"y": dft(x, 1)}, {},
     {"length": np.array(6, np.int64), "axis": np.array(1, np.int64)})


# ---- AffineGrid-20, 2-D and 3-D, both align_corners
def base(s, align):
    i = np.arange(s, dtype=np.float64)
    if s == 1:
        return np.array([-1.0 if align else 0.0])
    return -1 + 2 * i / (s - 1) if align else -1 + (2 * i + 1) / s


for align in (0, 1):
    theta = randn(2, 2, 3)
    h, w = 3, 4
    pts = np.stack(np.meshgrid(base(w, align), base(h, align), indexing="xy"), -1)  # (h, w, 2)
    pts = np.concatenate([pts, np.ones((h, w, 1))], -1)
    grid = np.einsum("hwk,njk->nhwj", pts, theta.astype(np.float64)).astype(np.float32)
    case(f"affine_grid_2d_align{align}_20", 20, "AffineGrid", {"theta": theta}, {"grid": grid},
         {"align_corners": align}, {"size": np.array([2, 5, h, w], np.int64)})
theta = randn(1, 3, 4)
d, h, w = 2, 3, 2
zz, yy, xx = np.meshgrid(base(d, 0), base(h, 0), base(w, 0), indexing="ij")
pts = np.stack([xx, yy, zz, np.ones_like(xx)], -1)
grid = np.einsum("dhwk,njk->ndhwj", pts, theta.astype(np.float64)).astype(np.float32)
case("affine_grid_3d_20", 20, "AffineGrid", {"theta": theta}, {"grid": grid}, {},
     {"size": np.array([1, 1, d, h, w], np.int64)})

# ---- Resize-18 antialias (worked by hand: [1, 2, 3, 4] halved, linear, half_pixel: the
# triangle stretched to 4 taps, weights 1/8 3/8 3/8 1/8, edge-clamped), axes, keep_aspect_ratio;
# Resize-19 half_pixel_symmetric (nearest, 4 -> 3 by scale 0.8: output width 3.2)
x = np.array([[[[1, 2, 3, 4]]]], np.float32)
case("resize_antialias_linear_18", 18, "Resize", {"x": x},
     {"y": np.array([[[[1.625, 3.375]]]], np.float32)}, {"mode": "linear", "antialias": 1},
     {"roi": np.array([], np.float32), "scales": np.array([1, 1, 1, 0.5], np.float32)})
x = randn(1, 2, 4, 6)
case("resize_axes_nearest_18", 18, "Resize", {"x": x}, {"y": np.repeat(x, 2, axis=3)},
     {"mode": "nearest", "axes": [3], "coordinate_transformation_mode": "asymmetric"},
     {"roi": np.array([], np.float32), "scales": np.array([2], np.float32)})
# not_larger: sizes (8, 8) for 4 x 6 give one scale, min(2, 4/3) = 4/3: 4 x 6 -> 5 x 8
case("resize_not_larger_18", 18, "Resize", {"x": x},
     {"y": x[:, :, [int(np.floor(i * 0.75)) for i in range(5)]][:, :, :,
                 [int(np.floor(j * 0.75)) for j in range(8)]]},
     {"mode": "nearest", "axes": [2, 3], "keep_aspect_ratio_policy": "not_larger",
      "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
     {"roi": np.array([], np.float32), "scales": np.array([], np.float32),
      "sizes": np.array([8, 8], np.int64)})
x1 = np.array([[[[10, 20, 30, 40]]]], np.float32)
# half_pixel_symmetric: adjustment 3 / 3.2, offset 2 * (1 - 0.9375) = 0.125; sources
# 0.125 + (o + 0.5) / 0.8 - 0.5 = 0.25, 1.5, 2.75 -> nearest (round_prefer_floor) 0, 1, 3
case("resize_half_pixel_symmetric_19", 19, "Resize", {"x": x1},
     {"y": np.array([[[[10, 20, 40]]]], np.float32)},
     {"mode": "nearest", "coordinate_transformation_mode": "half_pixel_symmetric"},
     {"roi": np.array([], np.float32), "scales": np.array([1, 1, 1, 0.8], np.float32)})

# ---- QuantizeLinear-21 blocked (blocks of 2 along axis 1), DequantizeLinear-19 float16 scale
x = randn(2, 5)
scale = np.abs(randn(2, 3)) + 0.05
want = np.clip(np.round(x / np.repeat(scale, 2, axis=1)[:, :5]), -128, 127).astype(np.int8)
case("quantize_blocked_21", 21, "QuantizeLinear", {"x": x}, {"y": want},
     {"axis": 1, "block_size": 2}, {"scale": scale, "zp": np.zeros((2, 3), np.int8)})
q = RNG.integers(-128, 127, (3, 4)).astype(np.int8)
s16 = np.array(0.125, np.float16)
case("dequantize_float16_scale_19", 19, "DequantizeLinear", {"q": q},
     {"y": (q.astype(np.float32) * 0.125).astype(np.float16)}, {}, {"scale": s16})


# ---- Recurrent layers beyond the node suite's cases: bidirectional with sequence lengths,
# clip and coupled gates (LSTM), reverse with linear_before_reset (GRU), bidirectional RNN,
# batch-first with initial states. numpy from the ONNX spec's equations.
def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def recurrent(kind, x, w, r, b, lens, init, dirs, clip=None, input_forget=False, lbr=False,
              peep=None):
    seq, batch, _ = x.shape
    hid = r.shape[-1]
    ys = np.zeros((seq, dirs, batch, hid))
    finals = [np.zeros((dirs, batch, hid)) for _ in init]
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    for d in range(dirs):
        W, R = w[d].astype(np.float64), r[d].astype(np.float64)
        Wb, Rb = np.split(b[d].astype(np.float64), 2)
        state = [s[d].astype(np.float64).copy() for s in init]
        steps = range(seq - 1, -1, -1) if (dirs == 2 and d == 1) or kind.endswith("_rev") \
            else range(seq)
        for t in steps:
            h = state[0]
            if kind.startswith("lstm"):
                g = x[t] @ W.T + h @ R.T + Wb + Rb
                gi, go, gf, gc = np.split(g, 4, axis=1)
                p = peep[d] if peep is not None else np.zeros(3 * hid)
                i = sigmoid(cl(gi + p[:hid] * state[1]))
                f = 1 - i if input_forget else sigmoid(cl(gf + p[2 * hid:] * state[1]))
                c = f * state[1] + i * np.tanh(cl(gc))
                o = sigmoid(cl(go + p[hid:2 * hid] * c))
                new = [o * np.tanh(c), c]
            elif kind.startswith("gru"):
                Wz, Wr, Wh = np.split(W, 3)
                Rz, Rr, Rh = np.split(R, 3)
                wbz, wbr, wbh = np.split(Wb, 3)
                rbz, rbr, rbh = np.split(Rb, 3)
                z = sigmoid(cl(x[t] @ Wz.T + h @ Rz.T + wbz + rbz))
                rr = sigmoid(cl(x[t] @ Wr.T + h @ Rr.T + wbr + rbr))
                if lbr:
                    hh = np.tanh(cl(x[t] @ Wh.T + rr * (h @ Rh.T + rbh) + wbh))
                else:
                    hh = np.tanh(cl(x[t] @ Wh.T + (rr * h) @ Rh.T + rbh + wbh))
                new = [(1 - z) * hh + z * h]
            else:
                new = [np.tanh(cl(x[t] @ W.T + h @ R.T + Wb + Rb))]
            live = (lens > t)[:, None]
            state = [np.where(live, nv, sv) for nv, sv in zip(new, state)]
            ys[t, d] = np.where(live, new[0], 0)
        for s in range(len(init)):
            finals[s][d] = state[s]
    return [ys.astype(np.float32)] + [f.astype(np.float32) for f in finals]


def recurrent_case(name, op, gates, dirs, attrs, kind, states, seq=5, batch=3, inp=4, hid=3,
                   batch_first=False, **kw):
    x = randn(seq, batch, inp)
    w, r = randn(dirs, gates * hid, inp), randn(dirs, gates * hid, hid)
    b = randn(dirs, 2 * gates * hid)
    lens = np.array([seq, 2, 4][:batch], np.int32)
    init = [randn(dirs, batch, hid) for _ in range(states)]
    names = ["X", "W", "R", "B", "lens"] + ["h0", "c0"][:states]
    feeds = {"X": x, "W": w, "R": r, "B": b, "lens": lens}
    for nm, s in zip(["h0", "c0"], init):
        feeds[nm] = s
    peep = None
    if kw.get("peepholes"):
        peep = randn(dirs, 3 * hid)
        feeds["P"] = peep
        names.append("P")
    outs = recurrent(kind, x, w, r, b, lens, init, dirs, attrs.get("clip"),
                     attrs.get("input_forget", 0) == 1, attrs.get("linear_before_reset", 0) == 1,
                     peep)
    if batch_first:
        feeds["X"] = x.transpose(1, 0, 2)
        for nm in ("h0", "c0")[:states]:
            feeds[nm] = feeds[nm].transpose(1, 0, 2)
        outs = [outs[0].transpose(2, 0, 1, 3)] + [o.transpose(1, 0, 2) for o in outs[1:]]
        attrs = dict(attrs, layout=1)
    out_names = ["Y", "Y_h", "Y_c"][:1 + states]
    attrs = dict(attrs, hidden_size=hid)
    case(name, 20, op, {n: feeds[n] for n in names}, dict(zip(out_names, outs)), attrs)


recurrent_case("lstm_bidirectional_lens_clip_20", "LSTM", 4, 2,
               {"direction": "bidirectional", "clip": 1.5}, "lstm", 2, peepholes=True)
recurrent_case("lstm_input_forget_batch_first_20", "LSTM", 4, 1, {"input_forget": 1}, "lstm", 2,
               batch_first=True)
recurrent_case("gru_reverse_linear_before_reset_20", "GRU", 3, 1,
               {"direction": "reverse", "linear_before_reset": 1}, "gru_rev", 1)
recurrent_case("gru_bidirectional_20", "GRU", 3, 2, {"direction": "bidirectional"}, "gru", 1)
recurrent_case("rnn_bidirectional_20", "RNN", 1, 2, {"direction": "bidirectional"}, "rnn", 1)

# ---- Einsum (12) as numpy's: '...' broadcast across operands, repeated letters (diagonals),
# implicit outputs
a, b = randn(2, 1, 3, 4), randn(5, 4, 6)
for name, eq, ops in (("einsum_ellipsis_matmul", "...ij,...jk->...ik", (a, b)),
                      ("einsum_diagonal", "...ii->...i", (randn(3, 4, 4),)),
                      ("einsum_trace_implicit", "ii", (randn(5, 5),)),
                      ("einsum_implicit_sorted", "kj,ji", (randn(3, 4), randn(4, 2))),
                      ("einsum_diagonal_product", "iij,jk->ik", (randn(3, 3, 4), randn(4, 2)))):
    case(f"{name}_20", 20, "Einsum", {f"x{i}": o for i, o in enumerate(ops)},
         {"y": np.einsum(eq, *[o.astype(np.float64) for o in ops]).astype(np.float32)},
         {"equation": eq})

# ---- Unique (11) at opset 20 as numpy's: NaN sorted last and equal to NaN, first-occurrence
# order with sorted=0, and rows along an axis
x = np.array([2.0, np.nan, 1.0, 2.0, np.nan, -3.0], np.float32)
y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
case("unique_nan_20", 20, "Unique", {"x": x},
     {"y": y, "indices": idx.astype(np.int64), "inverse": inv.astype(np.int64),
      "counts": cnt.astype(np.int64)})
x = np.array([[3, 1], [1, 2], [3, 1], [0, 5]], np.int64)
case("unique_rows_unsorted_20", 20, "Unique", {"x": x},
     {"y": np.array([[3, 1], [1, 2], [0, 5]], np.int64),
      "indices": np.array([0, 1, 3], np.int64), "inverse": np.array([0, 1, 0, 2], np.int64),
      "counts": np.array([2, 1, 1], np.int64)}, {"axis": 0, "sorted": 0})


# ---- Resize-18 antialias, cubic, by a port of ONNX's reference interpolation (1-D, half_pixel)
def reference_resize_1d(data, scale, out_len, coeffs):
    out = []
    for o in range(out_len):
        x = (o + 0.5) / scale - 0.5
        x_int = int(np.floor(x))
        ratio = 1.0 if float(x).is_integer() else x - x_int
        c = coeffs(ratio, scale)
        pad = int(np.ceil(len(c) / 2))
        padded = np.pad(data, pad, mode="edge")
        idx = sorted(sorted(range(len(padded)), key=lambda i: (abs(x + pad - i), i))[:len(c)])
        out.append(np.dot(c, padded[idx]))
    return np.array(out)


def cubic_antialias(ratio, scale, a=-0.75):
    scale = min(scale, 1.0)
    start = int(np.floor(-2 / scale) + 1)

    def k(v):
        v = abs(v)
        if v <= 1:
            return (a + 2) * v**3 - (a + 3) * v**2 + 1
        return a * v**3 - 5 * a * v**2 + 8 * a * v - 4 * a if v < 2 else 0.0
    c = np.array([k(scale * (i - ratio)) for i in range(start, 2 - start)])
    return c / c.sum()


sig = np.array([1, 4, 2, 8, 5, 7, 3, 6], np.float64)
for tag, scale, n_out in (("down", 0.5, 4), ("up", 1.5, 12)):
    case(f"resize_antialias_cubic_{tag}_18", 18, "Resize",
         {"x": sig.astype(np.float32).reshape(1, 1, 1, 8)},
         {"y": reference_resize_1d(sig, scale, n_out, cubic_antialias)
          .astype(np.float32).reshape(1, 1, 1, n_out)},
         {"mode": "cubic", "antialias": 1},
         {"roi": np.array([], np.float32), "scales": np.array([1, 1, 1, scale], np.float32)})

# ---- MaxPool's Indices never point into the padding: uint8 zeros pad with 0 (the lowest
# uint8), so the first window's maximum is its only real element, index 0
x = np.zeros((1, 1, 1, 3), np.uint8)
case("max_pool_indices_padded_uint8_20", 20, "MaxPool", {"x": x},
     {"y": np.zeros((1, 1, 1, 3), np.uint8), "i": np.array([[[[0, 0, 1]]]], np.int64)},
     {"kernel_shape": [1, 2], "pads": [0, 1, 0, 0]})
