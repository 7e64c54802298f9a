"""Lesson 13's Functions behave as PyTorch's do, and its numbers come from the run."""
import os

import engine as torch
from lessons import _runner, get
from lessons import lesson_13_your_own_function as L


def test_every_check_passes_and_the_pack_step_leaves_no_file():
    lr = _runner.run(get(13))
    assert [c.text for r in lr.steps for c in r.checks if not c.ok] == []
    step = lr.steps[5]
    assert step.values["n_files"] == step.values["n_hooked"] > 0
    assert step.values["folder"].startswith(os.path.join(__import__("tempfile").gettempdir(), "glassgrad-lesson13-"))
    assert not os.path.exists(step.values["folder"])


def test_the_fused_gelu_keeps_only_its_input_and_matches_the_composed_gradient():
    x = torch.linspace(-3.0, 3.0, 7, dtype=torch.float64, requires_grad=True)
    y = L.GeluFused.apply(x)
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"   # only x is kept: one edge
    assert torch.autograd.gradcheck(L.GeluFused.apply, (x,))
    ref = torch.nn.functional.gelu(x.detach(), approximate="tanh")
    assert (y.detach() - ref).abs().max().item() < 1e-12


def test_mark_dirty_bumps_twice_and_sort_indices_carry_no_gradient():
    a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = a * 2
    out = L.AddOne_.apply(h)
    assert out is h and h._version == 2 and h.grad_fn.name() == "AddOne_Backward"
    values, index = L.SortWithIndex.apply(h)
    assert not index.requires_grad and values.requires_grad
    assert index.tolist() == [1, 0, 2]
