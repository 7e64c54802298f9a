"""Many tiny ops: 10k elementwise ops on 16-element tensors with autograd, microseconds per op."""
from __future__ import annotations

from . import _torch_side
from ._tiny import chain
from ._timing import median_time
from .registry import Row, section

N_OPS = 10_000


@section("tiny_ops", "Tiny ops (10k ops on 16-element tensors, with autograd)", order=20)
def run(cfg):
    import engine
    n = N_OPS if not cfg.quick else 2_000
    a = engine.randn(16, requires_grad=True)
    reps = max(cfg.reps // 2, 3)
    fwd = median_time(lambda: chain(engine, a, n), reps) / n

    def fwd_bwd():
        chain(engine, a, n).sum().backward()
    fb = median_time(fwd_bwd, reps) / n
    rows = [Row("glassgrad forward", fwd * 1e6, "us/op"), Row("glassgrad forward+backward", fb * 1e6, "us/op")]
    try:
        tr = _torch_side.run("tiny_ops", reps, cfg.torch_python, n_ops=n)
    except Exception as e:  # noqa: BLE001
        rows.append(Row("PyTorch", "failed", note=str(e)[:60]))
        return rows
    if tr is None:
        rows.append(Row("PyTorch", "n/a", note="PyTorch not importable (--torch-python PATH)"))
    else:
        rows += [Row("PyTorch forward", tr["forward"] * 1e6, "us/op", note=f"torch {tr['version']}"),
                 Row("PyTorch forward+backward", tr["forward_backward"] * 1e6, "us/op"),
                 Row("glassgrad / PyTorch (forward+backward)", fb / tr["forward_backward"], "x")]
    return rows
