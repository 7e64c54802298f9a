"""The MLP training step on the GPU: glassgrad on CuPy vs the same step hand-written in CuPy vs PyTorch CUDA."""
from __future__ import annotations

from . import _torch_side
from ._timing import interleaved, min_ratio
from .mlp import BATCH, SIZES, build
from .registry import Row, section


@section("mlp_cuda", "MLP training step on the GPU (784-1024-1024-10, batch 256, float32, SGD)", order=11)
def run(cfg):
    import engine
    if not engine.cuda.is_available():
        return [Row("glassgrad CUDA step", "n/a", note="no CUDA GPU visible to CuPy")]
    sizes, batch = (SIZES, BATCH) if not cfg.quick else ((784, 256, 256, 10), 64)
    gg, cpstep, _ = build(sizes, batch, device="cuda")
    reps = max(3 * cfg.reps, 9)
    t = interleaved({"glassgrad": gg, "cupy": cpstep}, reps=reps, warmup=3)
    rows = [Row("glassgrad step", t["glassgrad"] * 1e3, "ms", note=f"median of {reps} interleaved steps, "
                "each ending in a host read of the loss"),
            Row("plain CuPy step (same process)", t["cupy"] * 1e3, "ms"),
            Row("glassgrad / CuPy", t["glassgrad"] / t["cupy"], "x", note=min_ratio("glassgrad", "cupy") +
                "; Python work per op, which a GPU cannot hide at this size")]
    try:
        tr = _torch_side.run("mlp_step", reps, cfg.torch_python, sizes=list(sizes), batch=batch, device="cuda")
    except Exception as e:  # noqa: BLE001 - reported in the table
        return rows + [Row("PyTorch CUDA step", "failed", note=str(e)[:60])]
    if tr is None:
        rows.append(Row("PyTorch CUDA step", "n/a", note="PyTorch with CUDA not importable (--torch-python PATH)"))
    else:
        rows.append(Row("PyTorch CUDA step", tr["seconds"] * 1e3, "ms", note=f"torch {tr['version']}"))
        rows.append(Row("glassgrad / PyTorch CUDA", t["glassgrad"] / tr["seconds"], "x"))
    return rows
