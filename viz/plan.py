"""``glassgrad plan script.py``: the checkpointing planner's trade-off curve, as text and a PNG.

NOTE [ The planner, visible ]
1. The script is run as ``__main__`` would run it (it is the user's own program); it must
   leave a chain in a variable (``--model``, default ``model``: an ``nn.Sequential`` or a
   list of layers) and a sample input (``--input``, default ``example_input``).
2. The planner measures the chain once (NOTE [ Checkpoint plan cost model ] in
   engine/utils/planner.py) and gives the Pareto curve of peak bytes against recompute cost.
3. Marked beside the curve, each evaluated by the same cost model: "none" (nothing
   checkpointed: the plain run), "every layer" (each layer its own segment), and
   "sqrt(n) segments" (``checkpoint_sequential`` with round(sqrt(n)) segments, Chen et al.).
4. ``--budget BYTES`` prints the cheapest plan within the budget: which layers it checkpoints,
   its predicted peak and its extra forward cost, beside the sqrt(n) plan's figures.
5. The PNG puts peak bytes on x and extra forward (percent of one forward) on y.
"""
from __future__ import annotations

import argparse
import math
import os
import runpy
import sys

from replay.words import nbytes


def marks(stats) -> dict:
    """Rule 3: {name: (peak bytes, extra cost, segments)}."""
    from engine.utils.planner import evaluate, sequential_plan
    n = len(stats)
    out = {"none": [], "every layer": [(i, i + 1) for i in range(n)]}
    k = max(1, round(math.sqrt(n)))
    if n >= 2 and k >= 2:
        out[f"sqrt(n): {k} segments"] = sequential_plan(n, k)
    return {name: (*evaluate(stats, segs), segs) for name, segs in out.items()}


def curve_lines(curve, forward_cost, mk) -> list:
    lines = [f"{'peak':>12}  {'extra forward':>13}  checkpointed segments (layers [start:end))"]
    for peak, cost, segs in curve:
        pct = 100 * cost / forward_cost if forward_cost else 0.0
        lines.append(f"{nbytes(peak):>12}  {pct:12.1f}%  {', '.join(f'[{a}:{b}]' for a, b in segs) or 'none'}")
    lines.append("")
    for name, (peak, cost, _) in mk.items():
        pct = 100 * cost / forward_cost if forward_cost else 0.0
        lines.append(f"{name:<22} peak {nbytes(peak):>10}, extra forward {pct:.1f}%")
    return lines


def draw(curve, forward_cost, mk, path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    pts = sorted(curve, key=lambda pt: pt[0])            # by peak: the cheapest plan within a budget holds
    xs = [p / 1024 for p, _, _ in pts]                   # from its peak up to the next point's
    ys = [100 * c / forward_cost if forward_cost else 0 for _, c, _ in pts]
    ax.step(xs, ys, where="post", color="#4c72b0", label="optimal plans (Pareto front)")
    ax.plot(xs, ys, "o", color="#4c72b0", ms=3)
    styles = {"none": ("s", "#55a868"), "every layer": ("^", "#c44e52")}    # "none" is the plain run
    for name, (peak, cost, _) in mk.items():
        m, c = styles.get(name, ("D", "#8172b2"))
        ax.plot([peak / 1024], [100 * cost / forward_cost if forward_cost else 0], m, color=c, ms=8, label=name)
    ax.set_xlabel("predicted peak (KiB above the step's start)")
    ax.set_ylabel("extra forward (% of one forward)")
    ax.set_title("Checkpointing: memory against recompute")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="glassgrad plan", description="The checkpointing planner's trade-off "
                                "curve for a chain of layers defined by a script (NOTE [ The planner, visible ]).")
    p.add_argument("script", help="a Python file that leaves the chain and a sample input in variables")
    p.add_argument("--model", default="model", help="the chain's variable (default: %(default)s)")
    p.add_argument("--input", default="example_input", help="the sample input's variable (default: %(default)s)")
    p.add_argument("--budget", type=int, default=None, help="bytes: print the cheapest plan within this budget")
    p.add_argument("--png", default=None, help="where to write the curve (default: <script>-plan.png)")
    a = p.parse_args(argv)
    if not os.path.isfile(a.script):
        print(f"glassgrad plan: no such file: {a.script}", file=sys.stderr)
        return 2
    from engine.utils.planner import measure, plan_from_stats, tradeoff
    g = runpy.run_path(a.script, run_name="__glassgrad_plan__")
    missing = [v for v in (a.model, a.input) if v not in g]
    if missing:
        print(f"glassgrad plan: {a.script} defines no {' and no '.join(missing)} "
              f"(name them with --model/--input)", file=sys.stderr)
        return 2
    print(f"measuring {a.script}: {a.model} on {a.input} ...", file=sys.stderr, flush=True)
    stats = measure(g[a.model], g[a.input])
    forward = sum(s.cost for s in stats)
    curve = tradeoff(stats)
    mk = marks(stats)
    print(f"{len(stats)} layers; one forward costs {forward:,.0f} FLOPs")
    print("\n".join(curve_lines(curve, forward, mk)))
    if a.budget is not None:
        try:
            best = plan_from_stats(stats, a.budget)
        except ValueError as err:
            print(f"\n{err}")
            return 1
        print(f"\nwithin {nbytes(a.budget)}: {best.describe()}")
    png = a.png or os.path.splitext(a.script)[0] + "-plan.png"
    try:
        draw(curve, forward, mk, png)
        print(f"\ncurve: {png}")
    except ImportError:
        print("\ncurve: not drawn (matplotlib is not installed)")
    return 0
