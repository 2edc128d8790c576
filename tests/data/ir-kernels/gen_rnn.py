#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reference vectors for LSTMSequence-5, GRUSequence-5, RNNSequence-5,
LSTMCell-1/4, GRUCell-3 and RNNCell-3 (tests/ir/kernels/test-rnn.c).

Run with Debian's /usr/bin/python3 (python3-torch, python3-numpy):
`tests/data/ir-kernels/gen_rnn.py`. Case NAME writes NAME_inI.npy (the
layer's inputs in OpenVINO's layouts and gate orders) and NAME_yJ.npy.

torch.nn.LSTM / GRU / RNN (and their cells) give the expectations, with
padded sequences of different lengths packed as torch packs them; gate
blocks are reordered from torch's (LSTM i f g o, GRU r z n) to OpenVINO's
(LSTM f i c o, GRU z r h), and torch's GRU is OpenVINO's with
linear_before_reset. What torch lacks (GRU without linear_before_reset,
clip, other activations, peepholes) comes from a NumPy loop of the spec's
formulas, itself checked against torch on the cases torch has.
"""
import os

import numpy as np
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20260119)
torch.manual_seed(5)
f32 = np.float32
CASES = []


def case(name, inputs, outputs):
    for i, a in enumerate(inputs):
        np.save(os.path.join(OUT, f"{name}_in{i}.npy"), np.array(a, order="C", dtype=a.dtype))
    for i, a in enumerate(outputs):
        np.save(os.path.join(OUT, f"{name}_y{i}.npy"), np.array(a, order="C"))
    CASES.append(name)


def reorder(w, order, h):
    """Gate blocks of @w (rows in blocks of @h) in @order."""
    return np.concatenate([w[k * h:(k + 1) * h] for k in order], 0)


LSTM_ORDER = [1, 0, 2, 3]      # torch i f g o -> f i c o
GRU_ORDER = [1, 0, 2]          # torch r z n -> z r h


def torch_seq(kind, B, T, I, H, bidir, lengths, nonlinearity="tanh"):
    D = 2 if bidir else 1
    cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[kind]
    kw = dict(nonlinearity=nonlinearity) if kind == "rnn" else {}
    m = cls(I, H, batch_first=True, bidirectional=bidir, **kw)
    x = torch.from_numpy(rng.uniform(-1, 1, size=(B, T, I)).astype(f32))
    h0 = torch.from_numpy(rng.uniform(-1, 1, size=(D, B, H)).astype(f32))
    c0 = torch.from_numpy(rng.uniform(-1, 1, size=(D, B, H)).astype(f32))
    packed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=True,
                                  enforce_sorted=False)
    with torch.no_grad():
        if kind == "lstm":
            out, (hn, cn) = m(packed, (h0, c0))
        else:
            out, hn = m(packed, h0)
        y, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
    order = {"lstm": LSTM_ORDER, "gru": GRU_ORDER, "rnn": [0]}[kind]
    W, R, Bs = [], [], []
    for d in range(D):
        sfx = "_l0" + ("_reverse" if d else "")
        wi = getattr(m, "weight_ih" + sfx).detach().numpy()
        wh = getattr(m, "weight_hh" + sfx).detach().numpy()
        bi = getattr(m, "bias_ih" + sfx).detach().numpy()
        bh = getattr(m, "bias_hh" + sfx).detach().numpy()
        W.append(reorder(wi, order, H))
        R.append(reorder(wh, order, H))
        if kind == "gru":   # linear_before_reset: z, r summed; h's two biases apart
            bz = reorder(bi, order, H)[:2 * H] + reorder(bh, order, H)[:2 * H]
            Bs.append(np.concatenate([bz, bi[2 * H:], bh[2 * H:]]))
        else:
            Bs.append(reorder(bi, order, H) + reorder(bh, order, H))
    W, R, Bs = (np.stack(v).astype(f32) for v in (W, R, Bs))
    yo = y.numpy().reshape(B, T, D, H).transpose(0, 2, 1, 3)
    st = lambda t: np.ascontiguousarray(t.numpy().transpose(1, 0, 2))
    ins = [x.numpy(), st(h0)] + ([st(c0)] if kind == "lstm" else []) + \
        [np.array(lengths, np.int32), W, R, Bs]
    outs = [np.ascontiguousarray(yo), st(hn)] + ([st(cn)] if kind == "lstm" else [])
    return ins, outs


def act(name, x):
    return {"sigmoid": lambda v: 1 / (1 + np.exp(-v)), "tanh": np.tanh,
            "relu": lambda v: np.maximum(v, 0)}[name](x).astype(f32)


def spec_seq(kind, x, h0, c0, lengths, W, R, Bs, direction, acts, clip=0.0, lbr=False,
             peep=None):
    """The spec's formulas, one step at a time (float64 sums, float32 out)."""
    B, T, I = x.shape
    D = W.shape[0]
    H = R.shape[2]
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    Y = np.zeros((B, D, T, H), f32)
    Ho = np.zeros((B, D, H), f32)
    Co = np.zeros((B, D, H), f32)
    for d in range(D):
        rev = direction == "reverse" or (direction == "bidirectional" and d == 1)
        for b in range(B):
            h = h0[b, d].astype(np.float64)
            c = c0[b, d].astype(np.float64) if c0 is not None else None
            L = lengths[b]
            for s in range(L):
                t = L - 1 - s if rev else s
                xt = x[b, t].astype(np.float64)
                g = W[d] @ xt + R[d] @ h
                if kind == "lstm":
                    g = g + Bs[d]
                    f_, i_, c_, o_ = (g[k * H:(k + 1) * H] for k in range(4))
                    if peep is not None:
                        i_ = i_ + peep[:H] * c
                        f_ = f_ + peep[H:2 * H] * c
                    f_, i_ = act(acts[0], cl(f_)), act(acts[0], cl(i_))
                    c = f_ * c + i_ * act(acts[1], cl(c_))
                    if peep is not None:
                        o_ = o_ + peep[2 * H:] * c
                    h = act(acts[0], cl(o_)) * act(acts[2], c)
                elif kind == "rnn":
                    h = act(acts[0], cl(g + Bs[d]))
                else:
                    xw = W[d] @ xt
                    rz = R[d][:2 * H] @ h
                    z = act(acts[0], cl(xw[:H] + rz[:H] + Bs[d][:H]))
                    r = act(acts[0], cl(xw[H:2 * H] + rz[H:] + Bs[d][H:2 * H]))
                    if lbr:
                        hh = xw[2 * H:] + Bs[d][2 * H:3 * H] + r * (R[d][2 * H:] @ h +
                                                                  Bs[d][3 * H:])
                    else:
                        hh = xw[2 * H:] + R[d][2 * H:] @ (r * h) + Bs[d][2 * H:]
                    h = (1 - z) * act(acts[1], cl(hh)) + z * h
                Y[b, d, t] = h
            Ho[b, d] = h
            if c is not None:
                Co[b, d] = c
    return Y, Ho, Co


def gen():
    # torch's own: LSTM, GRU (linear_before_reset), RNN tanh and relu
    ins, outs = torch_seq("lstm", 3, 5, 4, 6, False, [5, 2, 3])
    case("lstm_fwd", ins, outs)
    x, h0, c0, ln, W, R, Bs = ins
    Y, Ho, Co = spec_seq("lstm", x, h0, c0, ln, W, R, Bs, "forward", ["sigmoid", "tanh", "tanh"])
    assert np.allclose(Y, outs[0], atol=1e-5) and np.allclose(Co, outs[2], atol=1e-5)
    case("lstm_clip_acts", ins, list(spec_seq("lstm", x, h0, c0, ln, W, R, Bs, "reverse",
                                              ["tanh", "relu", "sigmoid"], clip=0.7)))
    ins, outs = torch_seq("lstm", 2, 4, 3, 5, True, [4, 1])
    case("lstm_bidir", ins, outs)
    ins, outs = torch_seq("gru", 2, 6, 5, 4, True, [3, 6])
    case("gru_bidir_lbr", ins, outs)
    x, h0, ln, W, R, Bs = ins
    Y, Ho, _ = spec_seq("gru", x, h0, None, ln, W, R, Bs, "bidirectional", ["sigmoid", "tanh"],
                        lbr=True)
    assert np.allclose(Y, outs[0], atol=1e-5)
    H = 4      # without linear_before_reset: one h bias (both summed), the reverse half
    B3 = np.concatenate([Bs[:, :2 * H], Bs[:, 2 * H:3 * H] + Bs[:, 3 * H:]], 1)
    rev = [x, h0[:, 1:].copy(), ln, W[1:].copy(), R[1:].copy(), B3[1:].copy()]
    Y, Ho, _ = spec_seq("gru", x, rev[1], None, ln, rev[3], rev[4], rev[5], "reverse",
                        ["sigmoid", "tanh"])
    case("gru_rev_nolbr", rev, [Y, Ho])
    ins, outs = torch_seq("rnn", 2, 4, 3, 5, False, [4, 2])
    case("rnn_tanh", ins, outs)
    ins, outs = torch_seq("rnn", 1, 3, 2, 4, True, [3], "relu")
    case("rnn_relu_bidir", ins, outs)
    # cells: torch's, in OpenVINO's layouts (no sequence axis, no direction)
    with torch.no_grad():
        B, I, H = 3, 5, 4
        x = torch.from_numpy(rng.uniform(-1, 1, size=(B, I)).astype(f32))
        h = torch.from_numpy(rng.uniform(-1, 1, size=(B, H)).astype(f32))
        c = torch.from_numpy(rng.uniform(-1, 1, size=(B, H)).astype(f32))
        m = torch.nn.LSTMCell(I, H)
        hn, cn = m(x, (h, c))
        W = reorder(m.weight_ih.numpy(), LSTM_ORDER, H)
        R = reorder(m.weight_hh.numpy(), LSTM_ORDER, H)
        Bb = reorder(m.bias_ih.numpy() + m.bias_hh.numpy(), LSTM_ORDER, H)
        case("lstm_cell", [x.numpy(), h.numpy(), c.numpy(), W, R, Bb], [hn.numpy(), cn.numpy()])
        P = rng.uniform(-1, 1, size=(3 * H,)).astype(f32)
        Y, Ho, Co = spec_seq("lstm", x.numpy()[:, None], h.numpy()[:, None], c.numpy()[:, None],
                             [1] * B, W[None], R[None], Bb[None], "forward",
                             ["sigmoid", "tanh", "tanh"], peep=P)
        case("lstm_cell_peep", [x.numpy(), h.numpy(), c.numpy(), W, R, Bb, P],
             [Ho[:, 0], Co[:, 0]])
        m = torch.nn.GRUCell(I, H)
        hn = m(x, h)
        W = reorder(m.weight_ih.numpy(), GRU_ORDER, H)
        R = reorder(m.weight_hh.numpy(), GRU_ORDER, H)
        bi = reorder(m.bias_ih.numpy(), GRU_ORDER, H)
        bh = reorder(m.bias_hh.numpy(), GRU_ORDER, H)
        Bb = np.concatenate([bi[:2 * H] + bh[:2 * H], bi[2 * H:], bh[2 * H:]])
        case("gru_cell_lbr", [x.numpy(), h.numpy(), W, R, Bb], [hn.numpy()])
        m = torch.nn.RNNCell(I, H)
        hn = m(x, h)
        case("rnn_cell", [x.numpy(), h.numpy(), m.weight_ih.numpy(), m.weight_hh.numpy(),
                          (m.bias_ih + m.bias_hh).numpy()], [hn.numpy()])
        case("rnn_cell_nobias", [x.numpy(), h.numpy(), m.weight_ih.numpy(),
                                 m.weight_hh.numpy()],
             [torch.tanh(x @ m.weight_ih.T + h @ m.weight_hh.T).numpy()])


if __name__ == "__main__":
    gen()
    print(len(CASES), "cases")
