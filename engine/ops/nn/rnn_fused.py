"""The recurrent rows PyTorch's CPU kernels record: one LSTM layer as one node (MkldnnRnnLayerBackward0)
and ``unsafe_split`` (UnsafeSplitBackward0), which GRU's step uses to cut its gates.

NOTE [ Fused LSTM layer ]
1. ``mkldnn_rnn_layer`` runs one layer in one direction over all T steps and gives four outputs:
   ``result0`` the outputs h_1..h_T (T, N, H) in time order, ``result1`` h_T, ``result2`` c_T (each
   (N, H)) and ``result3`` the workspace. With ``reverse=True`` it walks from step T to 1.
2. It saves what PyTorch's node saves: ``input``, ``weight0..3`` (w_ih, w_hh, b_ih, b_hh), ``hx_``,
   ``cx_`` and ``result0..3``. Gate order is PyTorch's (i, f, g, o): ``c' = f*c + i*g``,
   ``h' = o*tanh(c')``.
3. The workspace holds each step's four gate activations (T, N, 4H) and cell states (T, N, H),
   flat, in the input's dtype: exactly what backward reads, 5 * T * N * H elements. (oneDNN's is an
   opaque uint8 buffer rounded up to 4 KiB pages, so its dtype and byte count differ from this one;
   a learner can read the gates out of glassgrad's.)
4. Backward is backpropagation through time inside the node: from the last step walked back to
   the first, ``dc = dc' + dh * o * (1 - tanh(c)^2)``, the gate gradients through their
   activations, ``dh_prev = dgates @ w_hh``; then ``dx = dgates @ w_ih`` and the weight gradients
   summed over steps. With ``create_graph=True`` the gates are recomputed from the saved inputs
   with differentiable ops (NOTE [ One formula, two currencies ] 4), not read from the workspace.

NOTE [ Unsafe split ]
1. ``unsafe_split(x, split_size, dim)`` cuts ``x`` into pieces that share its storage, as ``split``
   does, but the pieces are not tracked as views: each has a version counter of its own and may be
   written in place (PyTorch's GRU cell adds and applies its sigmoid to them in place).
2. Backward concatenates the pieces' gradients (zeros for a piece that got none).
"""
from __future__ import annotations

from ...core.table import op


def _sigmoid(xp, x):
    return 1.0 / (1.0 + xp.exp(-x))


def _lstm_fwd(xp, input, weight0, weight1, weight2, weight3, hx_, cx_, reverse=False, mode=2, hidden_size=0,
              num_layers=1, has_biases=True, bidirectional=False, batch_first=False, train=True, batch_sizes=()):
    H = weight1.shape[1]
    T = input.shape[0]
    xproj = xp.matmul(input, xp.matrix_transpose(weight0)) + weight2
    h, c = hx_, cx_
    ys, gates, cells = [None] * T, [None] * T, [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        z = xproj[t, ...] + xp.matmul(h, xp.matrix_transpose(weight1)) + weight3
        i, f = _sigmoid(xp, z[:, :H]), _sigmoid(xp, z[:, H:2 * H])
        g, o = xp.tanh(z[:, 2 * H:3 * H]), _sigmoid(xp, z[:, 3 * H:])
        c = f * c + i * g
        h = o * xp.tanh(c)
        ys[t], gates[t], cells[t] = h, xp.concat([i, f, g, o], axis=1), c
    y = xp.stack(ys, axis=0)
    work = xp.concat([xp.reshape(xp.stack(gates, axis=0), (-1,)), xp.reshape(xp.stack(cells, axis=0), (-1,))])
    return y, h, c, work                                  # rule 3


def _workspace(F, s, T, N, H):
    """(gates (T, N, 4H), cells (T, N, H)) from the workspace, or recomputed (rule 4)."""
    if not F.differentiable:
        w = s.result3
        n = T * N * 4 * H
        return F.reshape(w[:n], (T, N, 4 * H)), F.reshape(w[n:], (T, N, H))
    x, w_ih, w_hh = s.input, s.weight0, s.weight1
    xproj = F.matmul(x, F.mT(w_ih)) + s.weight2
    h, c = s.hx_, s.cx_
    gates, cells = [None] * T, [None] * T
    for t in (range(T - 1, -1, -1) if s.reverse else range(T)):
        z = F.index(xproj, (t,)) + F.matmul(h, F.mT(w_hh)) + s.weight3
        i = 1.0 / (1.0 + F.exp(-F.index(z, (slice(None), slice(0, H)))))
        f = 1.0 / (1.0 + F.exp(-F.index(z, (slice(None), slice(H, 2 * H)))))
        g = F.tanh(F.index(z, (slice(None), slice(2 * H, 3 * H))))
        o = 1.0 / (1.0 + F.exp(-F.index(z, (slice(None), slice(3 * H, 4 * H)))))
        c = f * c + i * g
        h = o * F.tanh(c)
        gates[t], cells[t] = F.concat([i, f, g, o], 1), c
    return (F.concat([F.expand_dims(a, 0) for a in gates], 0), F.concat([F.expand_dims(a, 0) for a in cells], 0))


def _lstm_bwd(F, g, s):
    T, N = s.shapes[0][0], s.shapes[5][0]
    H = s.shapes[6][1]
    gates, cells = _workspace(F, s, T, N, H)
    y, w_ih, w_hh, hx, cx = s.result0, s.weight0, s.weight1, s.hx_, s.cx_
    gy, dh, dc = g[0], g[1], g[2]
    order = list(range(T - 1, -1, -1) if s.reverse else range(T))
    dgates = [None] * T
    dw_hh = None
    for k in range(T - 1, -1, -1):                                   # rule 4: the walk, backwards
        t = order[k]
        prev = order[k - 1] if k > 0 else None
        gt = F.index(gates, (t,))
        i = F.index(gt, (slice(None), slice(0, H)))
        f = F.index(gt, (slice(None), slice(H, 2 * H)))
        gg = F.index(gt, (slice(None), slice(2 * H, 3 * H)))
        o = F.index(gt, (slice(None), slice(3 * H, 4 * H)))
        c_t = F.index(cells, (t,))
        c_prev = cx if prev is None else F.index(cells, (prev,))
        h_prev = hx if prev is None else F.index(y, (prev,))
        if gy is not None:
            step = F.index(gy, (t,))
            dh = step if dh is None else dh + step
        if dh is None:
            dh = F.zeros((N, H), hx)
        tc = F.tanh(c_t)
        d_o = dh * tc
        dct = dh * o * (1.0 - tc * tc)
        dc = dct if dc is None else dc + dct
        d_i, d_g, d_f = dc * gg, dc * i, dc * c_prev
        dc = dc * f
        dz = F.concat([d_i * i * (1.0 - i), d_f * f * (1.0 - f), d_g * (1.0 - gg * gg), d_o * o * (1.0 - o)], 1)
        dgates[t] = dz
        part = F.matmul(F.mT(dz), h_prev)
        dw_hh = part if dw_hh is None else dw_hh + part
        dh = F.matmul(dz, w_hh)
    dz_all = F.concat([F.expand_dims(d, 0) for d in dgates], 0)                    # (T, N, 4H)
    x = s.input
    dx = F.matmul(dz_all, w_ih)
    flat = F.reshape(dz_all, (T * N, 4 * H))
    dw_ih = F.matmul(F.mT(flat), F.reshape(x, (T * N, F.shape(x)[2])))
    return dx, dw_ih, dw_hh, F.sum(flat, 0), F.sum(flat, 0), dh, dc


op("mkldnn_rnn_layer", "MkldnnRnnLayerBackward0",
   ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_"), _lstm_fwd, _lstm_bwd, promote=False,
   save={"input": (), "weight0": (), "weight1": (), "weight2": (), "weight3": (), "hx_": (), "cx_": (),
         "result0": (), "result1": (), "result2": (), "result3": ()})


def _unsafe_split_fwd(xp, a, split_size, dim=0):
    n = a.shape[dim]
    idx = [slice(None)] * a.ndim
    out = []
    for start in range(0, n, split_size):
        idx[dim] = slice(start, min(start + split_size, n))
        out.append(a[tuple(idx)])
    return tuple(out)


def _unsafe_split_bwd(F, g, s):
    shape = s.shapes[0]
    dim, size = s.dim, s.split_size
    like = next(x for x in g if x is not None)
    parts = []
    for k, start in enumerate(range(0, shape[dim], size)):
        piece = list(shape)
        piece[dim] = min(size, shape[dim] - start)
        parts.append(g[k] if g[k] is not None else F.zeros(tuple(piece), like))
    return (F.concat(parts, dim),)


op("unsafe_split", "UnsafeSplitBackward0", ("self",), _unsafe_split_fwd, _unsafe_split_bwd, promote=False)
