"""The MLP training step hand-written in plain NumPy (or CuPy): the baseline glassgrad is measured against."""
from __future__ import annotations

import numpy as np


class NumpyMLP:
    """Linear/ReLU layers, cross-entropy loss, SGD: forward, backward and update by hand.

    It does the work PyTorch's kernels do and nothing more: no gradient for the input,
    the ReLU mask taken from the saved output, weight gradients computed in (out, in)
    layout. ``xp`` is NumPy, or CuPy for the GPU twin (the same calls exist in both).
    """

    def __init__(self, weights, biases, lr: float, xp=np):
        self.W = [xp.array(w, dtype=xp.float32) for w in weights]
        self.b = [xp.array(b, dtype=xp.float32) for b in biases]
        self.lr = lr
        self.xp = xp

    def step(self, x, y):
        W, b, xp = self.W, self.b, self.xp
        acts = [x]
        h = x
        for i in range(len(W)):
            h = h @ W[i].T
            h += b[i]
            if i < len(W) - 1:
                h = xp.maximum(h, 0)
            acts.append(h)
        logits = acts[-1]
        n = logits.shape[0]
        m = logits.max(axis=1, keepdims=True)
        z = logits - m
        logp = z - xp.log(xp.exp(z).sum(axis=1, keepdims=True))
        loss = -logp[xp.arange(n), y].mean()
        g = xp.exp(logp)
        g[xp.arange(n), y] -= 1.0
        g /= n
        for i in reversed(range(len(W))):
            a_in = acts[i]
            gW = g.T @ a_in
            gb = g.sum(axis=0)
            if i > 0:
                g = g @ W[i]
                g *= acts[i] > 0
            W[i] -= self.lr * gW
            b[i] -= self.lr * gb
        return float(loss)
