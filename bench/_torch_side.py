"""The PyTorch side of the comparisons: imports only torch and the standard library.

Run in-process when ``import torch`` gives PyTorch, or in another interpreter as
``python -m bench._torch_side <name> <reps>`` (prints one JSON object).
"""
from __future__ import annotations

import gc
import json
import statistics
import sys
import time


def _median(fn, reps, warmup=2):
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(reps):
        gc.disable()
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
        gc.enable()
    return statistics.median(out)


def _threads(torch):
    """Match the BLAS thread count NumPy was given (OPENBLAS_NUM_THREADS / OMP_NUM_THREADS), if any."""
    import os
    n = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
    if n and n.isdigit():
        torch.set_num_threads(int(n))


def mlp_step(reps: int, sizes=(784, 1024, 1024, 10), batch=256, device="cpu") -> dict:
    import torch
    _threads(torch)
    torch.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(torch.nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(batch, sizes[0]).to(device)
    y = torch.randint(0, sizes[-1], (batch,)).to(device)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if device != "cpu":
            loss.item()            # wait for the GPU, as the glassgrad and CuPy steps do
    if device != "cpu" and not torch.cuda.is_available():
        return None
    return {"seconds": _median(step, reps), "threads": torch.get_num_threads(), "version": torch.__version__}


def tiny_ops(reps: int, n_ops=10_000) -> dict:
    import torch
    _threads(torch)
    from bench._tiny import chain
    a = torch.randn(16, requires_grad=True)

    def fwd():
        return chain(torch, a, n_ops)

    def fwd_bwd():
        chain(torch, a, n_ops).sum().backward()
    return {"forward": _median(fwd, reps, 1) / n_ops, "forward_backward": _median(fwd_bwd, reps, 1) / n_ops,
            "version": torch.__version__}


FUNCS = {"mlp_step": mlp_step, "tiny_ops": tiny_ops}


def real_torch():
    """The PyTorch module if ``import torch`` in this interpreter gives PyTorch, else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch if hasattr(torch, "_C") else None


def run(name: str, reps: int, torch_python: str | None, **kw):
    """``FUNCS[name](reps)`` with PyTorch: in-process if importable, else via ``torch_python``; else None."""
    if real_torch() is not None:
        return FUNCS[name](reps, **kw)
    if not torch_python:
        return None
    import os
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    res = subprocess.run([torch_python, "-m", "bench._torch_side", name, str(reps), json.dumps(kw)],
                         capture_output=True, text=True, cwd=root, env=env, timeout=600)
    if res.returncode != 0:
        raise RuntimeError(f"PyTorch side failed: {res.stderr.strip().splitlines()[-1:]}")
    return json.loads(res.stdout)


if __name__ == "__main__":
    kwargs = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    if "sizes" in kwargs:
        kwargs["sizes"] = tuple(kwargs["sizes"])
    print(json.dumps(FUNCS[sys.argv[1]](int(sys.argv[2]), **kwargs)))
