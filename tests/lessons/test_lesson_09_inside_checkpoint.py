"""Lesson 9 (inside checkpoint): its figures, computed from shapes and against PyTorch 2.13's, and the
reading path its steps name."""
import lessons
from lessons import _runner
from lessons._checkpoint_events import backwards, types_of
from lessons._reading_path import missing_notes, reading_path

# Recorded with PyTorch 2.13 (CPU): the lesson's MLP (64 -> 128 -> 128 -> 10, cross_entropy, batch 32) and
# the same pack hook (each saved storage once, parameters and the input batch left out), non-reentrant
# checkpoint; the reentrant variant gives the same three figures.
TORCH = {"plain": 34_308, "middle": 34_308, "first_two": 17_924}

# PyTorch 2.13's messages, as torch.utils.checkpoint and autograd raise them.
TORCH_GRAD_ERROR = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter "
    "to .backward(). To resolve this error, you can either set use_reentrant=False, or call .backward() without "
    "passing the `inputs` argument.")
TORCH_NO_INPUT_WARNING = "None of the inputs have requires_grad=True. Gradients will be None"
TORCH_LIST_ERROR = "element 0 of tensors does not require grad and does not have a grad_fn"

LR = None


def _run():
    global LR
    if LR is None:
        LR = _runner.run(lessons.get(9))
    return LR


def test_runs_and_every_check_passes():
    lr = _run()
    assert lr.ok, [(r.step.title, c.text, c.detail) for r in lr.steps for c in r.checks if not c.ok]
    assert lessons.get("inside_checkpoint") is lr.lesson


def test_the_middle_block_frees_nothing_and_the_first_two_keep_about_half():
    v = _run().steps[5].values
    relu, log_softmax, target, total_weight = 32 * 128 * 4, 32 * 10 * 4, 32 * 8, 4
    assert v["plain"] == v["middle"] == 2 * relu + log_softmax + target + total_weight == 34_308
    assert v["first_two"] == relu + log_softmax + target + total_weight
    assert {k: v[k] for k in TORCH} == TORCH
    assert 0.45 < v["first_two"] / v["plain"] < 0.55
    # the memory panel's activations: the same storages without the target (category input)
    assert v["plain_act"] == v["middle_act"] == v["plain"] - target
    assert v["freed_mid"] == 0 and v["freed_bytes_two"] == relu


def test_reentrant_backward_walk():
    lr = _run()
    step1, step2 = lr.steps[0].values, lr.steps[1].values
    assert step1["grad_fn"] == "WatchedBackward" and step1["region_nodes"] == 0 and step1["n_saved"] == 1
    assert step2["returned"] == "(None, None, Tensor[4, 16], None)"
    assert step2["nested"] and step2["max_diff"] == 0.0
    # the rerun replays the region's forward op for op: t, addmm, relu, dropout's mul, the * 2.0
    assert step2["n_rerun_ops"] == step1["n_region_ops"] == 5


def test_refusals_are_pytorchs():
    v = _run().steps[4].values
    assert v["grad_True"] == v["inputs_True"] == TORCH_GRAD_ERROR and v["grad_False"] == v["inputs_False"] == "works"
    assert v["warned_True"] == TORCH_NO_INPUT_WARNING and v["warned_False"] == "no warning"
    assert v["list_True"] == TORCH_LIST_ERROR and v["list_False"] == "works"


def test_non_reentrant_stops_early_and_does_not_nest():
    v = _run().steps[3].values
    assert v["rerun_ops"] == "t, addmm, relu, mul" and v["fwd_ops"] == "t, addmm, relu, mul, mul"
    assert v["n_backwards_first"] == 1 and v["recompute_inside"]


def test_every_step_names_engine_files_and_notes_that_exist():
    assert missing_notes(lessons.get(9)) == []
    assert missing_notes(lessons.get(10)) == []
    path = reading_path("x. Read the code: `engine/core/graph.py`, NOTE\n[ Saved tensors ] 4; `engine/a.py`.")
    assert path == [("engine/core/graph.py", ["Saved tensors"]), ("engine/a.py", [])]


def test_missing_notes_finds_a_wrong_name():
    from lessons._format import Lesson, Step

    bad = Lesson(99, "tmp", "T", "S", (
        Step("one", "Read the code: `engine/core/graph.py`, NOTE [ No such note ].", lambda s: None),
        Step("two", "nothing to read", lambda s: None)))
    assert missing_notes(bad) == ["one: no NOTE [ No such note ] in engine/core/graph.py", "two: names no engine file"]


def test_backwards_pairs_nested_passes():
    evs = [{"kind": "backward_begin", "roots": [1]}, {"kind": "backward_begin", "roots": [2]},
           {"kind": "backward_end", "roots": [2]}, {"kind": "backward_end", "roots": [1]},
           {"kind": "backward_begin", "roots": [3]}, {"kind": "backward_end", "roots": [3]}]
    assert backwards(evs) == [(0, 3), (1, 2), (4, 5)]
    assert types_of((None, 2.0)) == "(None, float)"
