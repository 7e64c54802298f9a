"""engine.utils.planner: optimal against brute force, predictions equal measured peaks to the
byte, and gradients under every plan equal the un-checkpointed ones."""
from __future__ import annotations

import gc
import random

import numpy as np
import pytest

import engine
import engine.memory as M
import engine.nn as nn
from engine.utils import planner
from engine.utils.planner import LayerStats


def _all_plans(n, start=0):
    """Every set of disjoint segments [a, b) within [start, n) (one-level plans)."""
    if start >= n:
        yield []
        return
    for rest in _all_plans(n, start + 1):       # layer `start` stored
        yield rest
    for b in range(start + 1, n + 1):           # a segment [start, b)
        for rest in _all_plans(n, b):
            yield [(start, b)] + rest


def _random_chain(rng, n):
    stats = []
    for _ in range(n):
        x = rng.choice([0, 64, 128, 256, 512, 1024])
        m = x + rng.choice([0, 0, 64, 512])
        prev_x = stats[-1].x if stats else 0
        stats.append(LayerStats(x=x, m=m, p=rng.choice([0, 64, 1024]), e=rng.randrange(-64, 2048),
                                u=rng.randrange(-64, 1024), cost=float(rng.randrange(1, 100)),
                                f=rng.choice([0, prev_x]), k=rng.random() < 0.5, v=rng.choice([0, x])))
    return stats


def test_plan_count_of_the_enumeration():
    assert [sum(1 for _ in _all_plans(n)) for n in range(7)] == [1, 2, 5, 13, 34, 89, 233]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 12])
def test_optimal_against_brute_force(n):
    rng = random.Random(n)
    chains = 1 if n == 12 else 4
    for _ in range(chains):
        stats = _random_chain(rng, n)
        every = [(planner.evaluate(stats, segs), segs) for segs in _all_plans(n)]
        peaks = sorted({pk for (pk, _), _ in every})
        budgets = sorted(set(peaks[:: max(1, len(peaks) // 12)] + [peaks[0], peaks[-1], peaks[0] - 1]))
        for budget in budgets:
            feasible = [cost for (pk, cost), _ in every if pk <= budget]
            found = planner._solve(stats, budget)
            if not feasible:
                assert found is None
                continue
            segs, peak, cost = found
            assert cost == min(feasible), (budget, segs)
            assert peak <= budget and (peak, cost) == planner.evaluate(stats, segs)
        # the curve is exactly the Pareto front of (peak, cost) over all plans
        front = []
        for (pk, cost), _ in sorted(every, key=lambda t: (t[0][0], t[0][1])):
            if not front or cost < front[-1][1]:
                front.append((pk, cost))
        curve = [(pk, c) for pk, c, _ in planner.tradeoff(stats)]
        assert sorted(curve) == front


# ---- real models -----------------------------------------------------------------------
def _mixed():
    engine.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 16), nn.Tanh(),
                         nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 4), nn.Sigmoid(), nn.Linear(4, 24),
                         nn.LayerNorm(24), nn.Linear(24, 8))


def _mlp(n=16, w=8):
    engine.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(w, w), nn.ReLU()) for _ in range(n)])


def _step(run, x):
    out = run(x)
    loss = out.sum()
    del out
    loss.backward()


def _measured_peak(run, x):
    gc.collect()
    base = M.memory_allocated()
    M.reset_peak_memory_stats()
    _step(run, x)
    return M.max_memory_allocated() - base


def _grads(model, x):
    return [p.grad.numpy().copy() for p in model.parameters()] + ([x.grad.numpy().copy()] if x.requires_grad else [])


def _zero(model, x):
    for p in model.parameters():
        p.grad = None
    x.grad = None


def _zero_in_place(model, x):
    for p in list(model.parameters()) + ([x] if x.requires_grad else []):
        p.grad.zero_()


@pytest.mark.parametrize("make,x_grad,grads", [(_mixed, True, "none"), (_mlp, False, "kept")])
def test_every_plan_on_the_curve_predicts_its_peak_and_keeps_the_gradients(make, x_grad, grads):
    """``grads``: the step starts with .grad None (new gradient storages appear during backward)
    or with .grad kept from an earlier step (accumulated in place); the planner measures the
    state it is given."""
    model = make()
    engine.manual_seed(1)
    x = engine.randn(64, 8, requires_grad=x_grad)
    reset = _zero if grads == "none" else _zero_in_place
    engine.manual_seed(2)
    _step(model, x)
    reset(model, x)
    engine.manual_seed(2)
    _step(model, x)
    ref = _grads(model, x)
    reset(model, x)
    best = planner.plan(model, x)
    assert best.segments == [] and best.cost == 0
    assert len(best.curve) >= 5
    peaks = [pk for pk, _ in best.curve]
    costs = [c for _, c in best.curve]
    assert peaks == sorted(peaks, reverse=True) and len(set(peaks)) == len(peaks)
    assert costs == sorted(costs) and len(set(costs)) == len(costs)
    for pk, cost in best.curve:
        p = planner.plan_from_stats(best.stats, budget_bytes=pk)
        assert (p.peak_bytes, p.cost) == (pk, cost)
        run = p.apply(model)
        reset(model, x)
        engine.manual_seed(2)
        assert _measured_peak(run, x) == pk          # the model's prediction, to the byte
        for a, b in zip(ref, _grads(model, x)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_checkpoint_sequential_predictions_and_the_planner_beats_it():
    model = _mlp(16)
    x = engine.randn(64, 8)
    _step(model, x)
    stats = planner.measure(model, x)
    for segments in (2, 4, 8, 16):
        segs = planner.sequential_plan(16, segments)
        from engine.utils.checkpoint import checkpoint_sequential
        measured = _measured_peak(lambda h: checkpoint_sequential(model, segments, h, use_reentrant=False), x)
        assert planner.evaluate(stats, segs)[0] == measured
        # the planner's plan within the same memory recomputes no more
        peak, cost = planner.evaluate(stats, segs)
        assert planner.plan_from_stats(stats, peak).cost <= cost
    # sqrt(n) segments: the planner finds a strictly cheaper plan at that peak here
    peak4, cost4 = planner.evaluate(stats, planner.sequential_plan(16, 4))
    assert planner.plan_from_stats(stats, peak4).cost < cost4


def test_budget_too_small_and_wrong_model():
    model = _mlp(4)
    x = engine.randn(8, 8)
    p = planner.plan(model, x)
    lowest = p.curve[-1][0]
    with pytest.raises(ValueError, match=f"^no checkpointing plan keeps the step within {lowest - 1} bytes; the "
                       f"lowest peak a one-level plan reaches is {lowest} bytes$"):
        planner.plan_from_stats(p.stats, lowest - 1)
    with pytest.raises(ValueError, match="^the plan is for 4 layers, the model has 3$"):
        planner.apply(list(model.children())[:3], p)
    with pytest.raises(ValueError, match="^plan\\(\\): the model has no layers$"):
        planner.plan([], x)
    with pytest.raises(TypeError, match="^plan\\(\\): sample_input must be a Tensor, got list$"):
        planner.plan(model, [1.0])
    with pytest.raises(TypeError, match="^plan\\(\\): layer 1 \\(function\\) returned tuple; the layers of a "
                       "chain take and return one tensor$"):
        planner.plan([lambda h: h * 2, lambda h: (h, h)], x)


def test_measure_leaves_gradients_and_rng_untouched():
    model = _mlp(3)
    x = engine.randn(4, 8)
    _step(model, x)
    before = [p.grad.numpy().copy() for p in model.parameters()]
    ids = [id(p.grad) for p in model.parameters()]
    state = engine.get_rng_state().tolist()
    planner.measure(model, x)
    assert [id(p.grad) for p in model.parameters()] == ids
    for a, p in zip(before, model.parameters()):
        np.testing.assert_array_equal(a, p.grad.numpy())
    assert engine.get_rng_state().tolist() == state
    for p in model.parameters():
        p.grad = None
    planner.measure(model, x)
    assert all(p.grad is None for p in model.parameters())
    xg = engine.randn(4, 8, requires_grad=True)      # an input that requires grad keeps its .grad too
    planner.measure(model, xg)
    assert xg.grad is None and all(p.grad is None for p in model.parameters())


def test_random_plans_predicted_to_the_byte():
    """Not only the optimal plans: any set of segments is predicted exactly on the mixed chain."""
    model = _mixed()
    engine.manual_seed(1)
    x = engine.randn(32, 8, requires_grad=True)
    stats = planner.measure(model, x)
    every = list(_all_plans(len(stats)))
    rng = random.Random(0)
    plans = rng.sample(every, 60) + [[(0, 12)], [(i, i + 1) for i in range(12)]]
    del every                        # 75,025 plans: each gc.collect() below would scan them all
    for segs in plans:
        p = planner.Plan(segments=segs, n=12, peak_bytes=0, cost=0.0)
        _zero(model, x)
        engine.manual_seed(5)
        assert _measured_peak(p.apply(model), x) == planner.evaluate(stats, segs)[0], segs
