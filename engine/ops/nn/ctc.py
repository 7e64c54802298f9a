"""The op-table row behind ``F.ctc_loss`` (CtcLossBackward0).

NOTE [ CTC loss ]
1. Each target ``l`` (length S) is extended with blanks, ``l' = (blank, l1, blank, l2, ..., lS, blank)``
   (2S + 1 states). A path through time may stay in a state, move to the next one, or skip a blank
   between two different labels. ``alpha[t, s]`` is the log-probability of all path prefixes that end in
   state s at time t; everything is in log space (sums are logsumexp), so long inputs do not underflow.
2. The loss of one sample is ``-logsumexp(alpha[T-1, 2S], alpha[T-1, 2S-1])`` with T its input length; an
   impossible alignment (a target too long for its input) gives ``inf``.
3. The node keeps what PyTorch's keeps: ``log_probs``, ``targets``, the output (the per-sample losses)
   and ``result1`` = log_alpha (N, T, 2 max S + 1), with the lengths, ``blank`` and ``zero_infinity``.
4. Backward runs the same recursion backwards for ``beta`` and, as PyTorch's kernel, gives
   ``exp(lp[t, c]) - exp(logsumexp_{s: l'_s = c}(alpha + beta)[t, s] + loss - lp[t, c])`` times the
   output gradient: the gradient with respect to the logits that ``log_probs = log_softmax(logits)``
   came from, which is what flows on through LogSoftmaxBackward0 unchanged (the softmax part sums to
   zero). Times past an input's length get zero, and so does a sample whose loss is ``inf`` under
   ``zero_infinity``. This backward is not itself differentiable (as in PyTorch).
"""
from __future__ import annotations

import math

import numpy as np

from ...backend import gaps as _backend
from ...core.table import op


def _extended(targets, target_lengths, blank, n):
    """(N, L) extended labels, (N, L) valid states and (N, L) "may skip from s - 2" as NumPy arrays."""
    s_max = max(target_lengths) if n else 0
    ell = 2 * s_max + 1
    ext = np.full((n, ell), blank, dtype=np.int64)
    t = np.asarray(targets)
    start = 0
    for b in range(n):
        k = target_lengths[b]
        row = t[b, :k] if t.ndim == 2 else t[start:start + k]
        start += k
        ext[b, 1:2 * k:2] = row
    valid = np.arange(ell)[None, :] < (2 * np.asarray(target_lengths, dtype=np.int64)[:, None] + 1)
    skip = np.zeros((n, ell), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, valid, skip


def _lse3(xp, a, b, c):
    m = xp.maximum(xp.maximum(a, b), c)
    safe = xp.where(xp.isinf(m), xp.zeros((), dtype=m.dtype), m)
    empty = xp.isinf(m)
    s = xp.exp(a - safe) + xp.exp(b - safe) + xp.exp(c - safe)
    return xp.where(empty, m, xp.log(xp.where(empty, xp.ones((), dtype=s.dtype), s)) + safe)


def _shift(xp, a, k, fill):
    """a[:, s - k] along the last axis (``fill`` where s < k); negative k shifts the other way."""
    n = a.shape[0]
    pad = xp.full((n, abs(k)), fill, dtype=a.dtype)
    if k > 0:
        return xp.concat([pad, a[:, :-k]], axis=1)
    return xp.concat([a[:, -k:], pad], axis=1)


def _tables(xp, log_probs, targets, target_lengths, blank):
    t_max, n, c = log_probs.shape
    ext, valid, skip = _extended(_backend.to_numpy(xp, targets), target_lengths, blank, n)
    ell = ext.shape[1]
    flat = (np.arange(n)[:, None] * c + ext).reshape(-1)
    lpe = xp.reshape(xp.take(xp.reshape(log_probs, (t_max, n * c)), _backend.from_numpy(xp, flat), axis=1),
                     (t_max, n, ell))
    return ext, _backend.from_numpy(xp, valid), _backend.from_numpy(xp, skip), lpe


def _ctc_fwd(xp, log_probs, targets, input_lengths=(), target_lengths=(), blank=0, zero_infinity=False):
    t_max, n, _ = log_probs.shape
    _, valid, skip, lpe = _tables(xp, log_probs, targets, target_lengths, blank)
    ell = lpe.shape[2]
    neg = -math.inf
    ninf = xp.full((n, ell), neg, dtype=log_probs.dtype)
    alive = _backend.from_numpy(xp, np.arange(t_max)[:, None] < np.asarray(input_lengths)[None, :])   # (T, N)
    first = _backend.from_numpy(xp, np.arange(ell)[None, :] < 2) & valid
    alpha = [xp.where(first & xp.reshape(alive[0, ...], (n, 1)), lpe[0, ...], ninf)]
    for t in range(1, t_max):
        a = alpha[-1]
        stay_or_move = _lse3(xp, a, _shift(xp, a, 1, neg), xp.where(skip, _shift(xp, a, 2, neg), ninf))
        alpha.append(xp.where(valid & xp.reshape(alive[t, ...], (n, 1)), stay_or_move + lpe[t, ...], ninf))
    alpha = xp.stack(alpha, axis=1) if t_max else xp.zeros((n, 0, ell), dtype=log_probs.dtype)   # (N, T, L)
    last_t = np.maximum(np.asarray(input_lengths, dtype=np.int64) - 1, 0)
    end = 2 * np.asarray(target_lengths, dtype=np.int64)
    base = (np.arange(n) * t_max + last_t) * ell
    flat = xp.reshape(alpha, (-1,))
    a_end = xp.take(flat, _backend.from_numpy(xp, base + end))
    a_prev = xp.take(flat, _backend.from_numpy(xp, base + np.maximum(end - 1, 0)))
    a_prev = xp.where(_backend.from_numpy(xp, end > 0), a_prev, xp.full((n,), neg, dtype=log_probs.dtype))
    nll = -_lse3(xp, a_end, a_prev, xp.full((n,), neg, dtype=log_probs.dtype))
    return nll, {"result1": alpha}


def _ctc_bwd(F, g, s):
    if F.differentiable:
        raise RuntimeError("the derivative for '_ctc_loss_backward' is not implemented.")
    xp = F.xp                      # NOTE [ CTC loss ] 4: a recursion over time, on the arrays
    log_probs, nll, alpha = s.log_probs, s.result, s.result1
    t_max, n, c = log_probs.shape
    in_len, tg_len = np.asarray(s.input_lengths, dtype=np.int64), np.asarray(s.target_lengths, dtype=np.int64)
    ext, valid, skip, lpe = _tables(xp, log_probs, s.targets, s.target_lengths, s.blank)
    ell = ext.shape[1]
    neg = -math.inf
    ninf = xp.full((n, ell), neg, dtype=log_probs.dtype)
    s_idx = np.arange(ell)[None, :]
    ends = _backend.from_numpy(xp, ((s_idx == 2 * tg_len[:, None]) | (s_idx == 2 * tg_len[:, None] - 1)) &
                               (s_idx >= 0)) & valid
    skip_next = _shift(xp, skip, -2, False)                   # may skip from s + 2 back to s
    beta = [None] * t_max
    nxt = ninf
    for t in range(t_max - 1, -1, -1):
        at_end = _backend.from_numpy(xp, (in_len - 1 == t)[:, None])
        inside = _backend.from_numpy(xp, (t < in_len - 1)[:, None])
        carried = _lse3(xp, nxt, _shift(xp, nxt, -1, neg), xp.where(skip_next, _shift(xp, nxt, -2, neg), ninf))
        cur = xp.where(at_end & ends, lpe[t, ...], xp.where(inside & valid, carried + lpe[t, ...], ninf))
        beta[t] = cur
        nxt = cur
    beta = xp.stack(beta, axis=1) if t_max else xp.zeros((n, 0, ell), dtype=log_probs.dtype)    # (N, T, L)
    ab = alpha + beta
    m = xp.max(ab, axis=2, keepdims=True) if ell else ab
    m = xp.where(xp.isinf(m), xp.zeros((), dtype=m.dtype), m)
    onehot = np.zeros((n, ell, c))
    onehot[np.arange(n)[:, None], np.arange(ell)[None, :], ext] = 1.0
    summed = xp.matmul(xp.exp(ab - m), _backend.from_numpy(xp, onehot.astype(_np_dtype(log_probs))))
    lp = xp.permute_dims(log_probs, (1, 0, 2))                             # (N, T, C)
    with np.errstate(divide="ignore", invalid="ignore"):   # log 0 and inf - inf, both masked below
        lcab = xp.log(summed) + m                                         # (N, T, C)
        grad = xp.exp(lp) - xp.exp(lcab + xp.reshape(nll, (n, 1, 1)) - lp)
    keep = _backend.from_numpy(xp, (np.arange(t_max)[None, :] < in_len[:, None])[:, :, None])
    if s.zero_infinity:
        keep = keep & xp.reshape(~xp.isinf(nll), (n, 1, 1))
    grad = xp.where(keep, grad * xp.reshape(g, (n, 1, 1)), xp.zeros((), dtype=grad.dtype))
    return xp.permute_dims(grad, (1, 0, 2)), None


def _np_dtype(a):
    return np.float64 if "64" in str(a.dtype) else np.float32


op("ctc_loss", "CtcLossBackward0", ("log_probs", "targets"), _ctc_fwd, _ctc_bwd,
   save={"log_probs": (), "targets": (), "result": (), "result1": ()}, aux=("result1",), promote=False,
   nondiff=("targets",))
