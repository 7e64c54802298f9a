"""Lesson 8's figures are the lesson's own: the same exact bytes on a second run in the same process."""
import lessons
from lessons import _runner

KEYS = {0: ("param_bytes",), 1: ("act_forward", "grad_bytes", "act_peak"), 2: ("kept", "freed_to"),
        3: ("plain", "momentum"), 4: ("adam",),
        5: ("peak_64", "peak_1024", "act_peak_64", "act_peak_1024", "optimizer_small", "activation_big")}


def _figures(lr):
    return {(i, k): lr.steps[i].values[k] for i, keys in KEYS.items() for k in keys}


def test_figures_are_exact_and_repeat():
    first = _runner.run(lessons.get("training_memory"))
    assert first.ok
    figures = _figures(first)
    assert figures[(0, "param_bytes")] == 4 * (256 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10)
    assert figures[(4, "adam")] == 2 * figures[(0, "param_bytes")] + 6 * 4
    assert figures[(5, "act_peak_1024")] == 1024 * (2 * 512 + 10) * 4 + 4
    assert _figures(_runner.run(lessons.get(8))) == figures
