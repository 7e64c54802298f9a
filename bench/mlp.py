"""MLP training step (784-1024-1024-10, batch 256, float32, SGD): glassgrad vs NumPy vs PyTorch."""
from __future__ import annotations

import numpy as np

from . import _torch_side
from ._mlp_numpy import NumpyMLP
from ._timing import interleaved, min_ratio
from .registry import Row, goal_row, section

SIZES = (784, 1024, 1024, 10)
BATCH = 256
LR = 0.01


def build(sizes=SIZES, batch=BATCH, seed=0, device="cpu"):
    """The glassgrad model, optimizer, data and a ``step()``; plus the NumPy twin with equal weights
    (on ``device="cuda"``: both on the GPU, the twin in CuPy, each step ending in a host read of the loss)."""
    import engine
    from engine import nn
    engine.manual_seed(seed)
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers).to(device)
    opt = engine.optim.SGD(model.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()
    x = engine.randn(batch, sizes[0]).to(device)
    y = engine.randint(0, sizes[-1], (batch,)).to(device)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    lins = [m for m in model if isinstance(m, nn.Linear)]
    host = [(m.weight.detach().cpu().numpy(), m.bias.detach().cpu().numpy()) for m in lins]
    xp = np
    if device != "cpu":
        import cupy as xp
        step = (lambda s=step: s().item())       # wait for the GPU, as the twin's float(loss) does
    twin = NumpyMLP([w for w, _ in host], [b for _, b in host], LR, xp)
    xn, yn = xp.asarray(x.cpu().numpy()), xp.asarray(y.cpu().numpy())
    return step, (lambda: twin.step(xn, yn)), model


@section("mlp", "MLP training step (784-1024-1024-10, batch 256, float32, SGD)", order=10)
def run(cfg):
    sizes, batch = (SIZES, BATCH) if not cfg.quick else ((784, 256, 256, 10), 64)
    gg, npstep, _ = build(sizes, batch)
    reps = max(5 * cfg.reps, 15)  # a step is ~12 ms: five times the usual runs cost under a second and steady the ratio
    t = interleaved({"glassgrad": gg, "numpy": npstep}, reps=reps, warmup=2)
    note = f"median of {reps} interleaved steps" if not cfg.quick else f"--quick: {'-'.join(map(str, sizes))}, batch {batch}"
    rows = [Row("glassgrad step", t["glassgrad"] * 1e3, "ms", note=note),
            Row("plain NumPy step (same process)", t["numpy"] * 1e3, "ms"),
            goal_row("glassgrad / NumPy", t["glassgrad"] / t["numpy"], 1.10, min_ratio("glassgrad", "numpy"))]
    if not cfg.quick:
        rows.append(_untrimmed(reps))
    try:
        tr = _torch_side.run("mlp_step", reps, cfg.torch_python, sizes=list(sizes), batch=batch)
    except Exception as e:  # noqa: BLE001 - reported in the table
        rows.append(Row("PyTorch step", "failed", note=str(e)[:60]))
        return rows
    if tr is None:
        rows.append(Row("PyTorch step", "n/a", note="PyTorch not importable (--torch-python PATH)"))
    else:
        rows.append(Row("PyTorch CPU step", tr["seconds"] * 1e3, "ms",
                        note=f"torch {tr['version']}, {tr['threads']} threads"))
        rows.append(Row("glassgrad / PyTorch", t["glassgrad"] / tr["seconds"], "x"))
    return rows



def _untrimmed(reps: int) -> Row:
    """The same ratio with NOTE [ Host allocator tuning ] (engine/memory/malloc.py) turned off."""
    import json
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""),
               GLASSGRAD_MALLOC_TUNING="0")
    label = "glassgrad / NumPy, host allocator tuning off"
    try:
        res = subprocess.run([sys.executable, "-m", "bench._mlp_ratio", str(reps)], capture_output=True, text=True,
                             cwd=root, env=env, timeout=600)
        t = json.loads(res.stdout)
    except Exception as e:  # noqa: BLE001 - reported in the table
        return Row(label, "failed", note=str(e)[:60])
    return Row(label, t["glassgrad"] / t["numpy"], "x", note="GLASSGRAD_MALLOC_TUNING=0 (both sides pay the faults)")
