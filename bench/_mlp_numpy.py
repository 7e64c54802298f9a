"""The MLP training step hand-written in plain NumPy: the baseline glassgrad is measured against."""
from __future__ import annotations

import numpy as np


class NumpyMLP:
    """Linear/ReLU layers, cross-entropy loss, SGD: forward, backward and update by hand.

    It does the work PyTorch's kernels do and nothing more: no gradient for the input,
    the ReLU mask taken from the saved output, weight gradients computed in (out, in)
    layout.
    """

    def __init__(self, weights, biases, lr: float):
        self.W = [np.array(w, dtype=np.float32) for w in weights]
        self.b = [np.array(b, dtype=np.float32) for b in biases]
        self.lr = lr

    def step(self, x, y):
        W, b = self.W, self.b
        acts = [x]
        h = x
        for i in range(len(W)):
            h = h @ W[i].T
            h += b[i]
            if i < len(W) - 1:
                h = np.maximum(h, 0)
            acts.append(h)
        logits = acts[-1]
        n = logits.shape[0]
        m = logits.max(axis=1, keepdims=True)
        z = logits - m
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        loss = -logp[np.arange(n), y].mean()
        g = np.exp(logp)
        g[np.arange(n), y] -= 1.0
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
