"""Lesson 10 (how much to checkpoint): peaks against the formula from the shapes, the planner's
predictions, selective checkpointing's recompute, and the curve picture."""
import lessons
from lessons import _runner
from lessons._tradeoff import chart, flops, kernels_run

N, W, B = 16, 32, 64
A = B * W * 4                       # one activation
P = (W * W + W) * 4                 # one layer's weight and bias gradient

LR = None


def _run():
    global LR
    if LR is None:
        LR = _runner.run(lessons.get(10))
    return LR


def test_runs_and_every_check_passes():
    lr = _run()
    assert lr.ok, [(r.step.title, c.text, c.detail) for r in lr.steps for c in r.checks if not c.ok]


def test_checkpoint_sequential_peaks_follow_the_formula_and_bottom_out_at_sqrt_n():
    v = _run().steps[0].values
    for s, peak in v["peaks"].items():
        k = N // s
        last = N - (s - 1) * k          # blocks in the last, stored segment
        assert peak == (s + last) * A + P + 8, s
    assert v["best"] == 4 and v["best"] ** 2 == N


def test_the_planner_predicts_step_one_and_beats_sqrt_n_at_its_budget():
    lr = _run()
    curve, budget = lr.steps[1].values, lr.steps[2].values
    assert {k: p for k, (p, _) in curve["sequential_points"].items()} == lr.steps[0].values["peaks"]
    assert budget["measured"] == budget["predicted"] <= budget["budget"] == lr.steps[0].values["peaks"][4]
    assert budget["blocks_rerun"] == budget["n_ckpt"] < 12
    shares = [c for _, c in curve["curve_points"]]
    assert shares[0] == 0.0 and shares == sorted(shares)


def test_selective_reruns_only_the_pointwise_ops():
    v = _run().steps[3].values
    assert (v["full_matmuls"], v["selective_matmuls"]) == (8, 0)
    pointwise = 2 * B * W               # sigmoid and mul: one flop per output element each
    assert v["selective_flops"] == 8 * pointwise
    assert v["full_flops"] == 8 * (2 * B * W * W + pointwise) == v["forward_flops"]


def test_flops_and_kernels_run():
    addmm = {"kind": "op", "op": "addmm", "output": {"shape": [4, 5], "storage": 9},
             "inputs": [{"shape": [5]}, {"shape": [4, 3]}, {"shape": [3, 5]}]}
    mm = {"kind": "op", "op": "mm", "output": {"shape": [4, 5], "storage": 8},
          "inputs": [{"shape": [4, 3]}, {"shape": [3, 5]}]}
    assert flops(addmm) == flops(mm) == 2 * 4 * 5 * 3
    assert flops({"op": "relu", "output": {"shape": [4, 5]}, "inputs": []}) == 20
    cached = dict(addmm, output={"shape": [4, 5], "storage": 1})
    assert kernels_run([{"kind": "alloc", "storage": 9}, addmm, cached]) == [addmm]


def test_chart_rows():
    text = chart([(2048, 0.0), (1024, 0.5)], {1024: "here"}, width=10)
    assert text.splitlines()[1:] == ["  2.0 KiB" + " " * 15 + "0%", "  1.0 KiB  █████" + " " * 7 + "50%  ◀ here"]


def test_main_writes_the_curve(tmp_path, capsys):
    from lessons._tradeoff import main_with_curve

    rc = main_with_curve(lessons.get(10), 1, ["--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0 and "14 of 14 checks passed" in out
    assert (tmp_path / "curve.png").stat().st_size > 0 and f"trade-off curve: {tmp_path}" in out
