"""The tiny-op chain, written once for any module with PyTorch's API (engine or torch)."""


def chain(torch, a, n_ops: int):
    """``n_ops`` elementwise ops on a 16-element tensor (mul, add, tanh, sub in turn)."""
    x = a
    for i in range(n_ops // 4):
        x = x * 0.999
        x = x + a
        x = torch.tanh(x)
        x = x - 0.001
    return x
