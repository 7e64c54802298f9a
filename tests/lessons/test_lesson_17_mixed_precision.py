"""Lesson 17's figures against sums computed here from the trace's own events (alloc/free/category,
pack, execute, accumulate), and the app playing it."""
import pytest

import lessons
from lessons import _runner

IN, HIDDEN, OUT, BATCH = 256, 512, 10, 64


@pytest.fixture(scope="module")
def lr():
    run = _runner.run(lessons.get(17))
    assert run.ok, [(r.step.title, c.text, c.detail) for r in run.steps for c in r.checks if not c.ok]
    return run


def _halves(r):
    """The step's events cut after each backward_end."""
    evs = r.trace.events
    ends = [i + 1 for i in range(r.start, r.end) if evs[i]["kind"] == "backward_end"]
    return list(zip([r.start] + ends[:-1], ends))


def _activation_series(events, upto):
    """Activation bytes after each event, from alloc/free/category events alone."""
    cat, live, out = {}, 0, []
    for e in events[:upto]:
        k = e["kind"]
        if k == "alloc":
            cat[e["storage"]] = e["category"]
            live += e["bytes"] if e["category"] == "activation" else 0
        elif k == "free" and e["storage"] in cat:
            live -= e["bytes"] if cat.pop(e["storage"]) == "activation" else 0
        elif k == "category" and e["storage"] in cat:
            live += e["bytes"] * ((e["new"] == "activation") - (e["old"] == "activation"))
            cat[e["storage"]] = e["new"]
        out.append(live)
    return out


def test_step1_bytes_are_the_allocations(lr):
    r = lr.steps[0]
    sizes = [e["bytes"] for e in r.of_kind("alloc")][:3]      # the activation, its bf16 and f16 copies
    assert sizes == [BATCH * HIDDEN * 4, BATCH * HIDDEN * 2, BATCH * HIDDEN * 2]
    v = r.values
    assert (v["f32_bytes"], v["bf16_bytes"], v["f16_bytes"]) == tuple(sizes)
    assert (v["bf16_eps"], v["f16_eps"], v["f16_max"]) == (2.0 ** -7, 2.0 ** -10, 65504.0)
    assert v["big_f16"] == float("inf") and v["big_bf16"] == 70144.0


def test_step2_answers_and_cast_nodes(lr):
    r = lr.steps[1]
    assert [a.answer for a in r.answers] == ["256.0 KiB", "no: both are alive"]
    ops = [e for e in r.of_kind("op") if e.get("node")]
    assert sum(e["node"]["name"] == "ToCopyBackward0" for e in ops) == 5
    focus = lr.trace.events[r.focus_index()]
    assert focus["kind"] == "op" and focus["node"]["name"] == "ToCopyBackward0"
    packs = {e["name"]: e["bytes"] for e in r.of_kind("pack") if e["name"] == "mat2"}
    assert packs == {"mat2": OUT * HIDDEN * 2} == {"mat2": r.values["w2_saved"]}


def test_step3_saved_bytes_are_the_packs(lr):
    """The lesson's totals come from the nodes' saved lists; here from the pack events of each run."""
    r = lr.steps[2]
    evs = lr.trace.events
    (a0, a1), (b0, b1) = _halves(r)
    packed32 = sum(e["bytes"] for e in evs[a0:a1] if e["kind"] == "pack")
    packed16 = sum(e["bytes"] for e in evs[b0:b1] if e["kind"] == "pack")
    assert (r.values["total32"], r.values["total16"]) == (packed32, packed16)
    # by hand: input, ReLU result, ReLU result + weight, log_softmax result, nll_loss's self, target, total_weight
    assert packed32 == 4 * (BATCH * IN + 2 * BATCH * HIDDEN + OUT * HIDDEN + 2 * BATCH * OUT + 1) + 8 * BATCH
    assert packed16 == 2 * (BATCH * IN + 2 * BATCH * HIDDEN + OUT * HIDDEN) + 4 * (2 * BATCH * OUT + 1) + 8 * BATCH
    assert r.values["kept32"] == 4 * (2 * BATCH * OUT + 1) + 8 * BATCH
    series = _activation_series(evs, r.end)
    assert r.values["peak32"] == max(series[a0:a1]) - series[a0]
    assert r.values["peak16"] == max(series[b0:b1]) - series[b0]
    assert evs[r.focus_index()]["seq"] == evs[r.values["peak32_at"]]["seq"]


def test_step4_the_cache_counts_in_backward(lr):
    r = lr.steps[3]
    evs = lr.trace.events
    runs = [sum(e["kind"] == "execute" and e["name"] == "ToCopyBackward0" for e in evs[lo:hi])
            for lo, hi in _halves(r)]
    assert runs == [r.values["cached_nodes"], r.values["uncached_nodes"]] == [3, 5]   # weight, bias, .float()


def test_step5_gradients_are_float32_bytes(lr):
    r = lr.steps[4]
    lo, hi = _halves(r)[1]
    acc = [e["bytes"] for e in lr.trace.events[lo:hi] if e["kind"] == "accumulate"]
    assert sorted(acc) == sorted(4 * n for n in (IN * HIDDEN, HIDDEN, HIDDEN * OUT, OUT))
    assert r.values["acc_bytes"] == sum(acc)


def test_step6_scaler_values(lr):
    v = lr.steps[5].values
    assert (v["scale_good"], v["after_good"], v["after_bad"]) == (65536.0, 65536.0, 32768.0)
    assert v["tiny_f16"] == 0.0 and abs(v["scaled_f16"] - 1e-8 * 65536) < 1e-6
    assert v["moved_bad"] == 0.0 < v["moved_good"]


async def test_the_app_plays_it(lr):
    from tests.tui.conftest import right_answer_keys
    from tui.app import GlassgradApp
    from tui.narrative import Narrative

    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(100, 30)) as pilot:
        s = pilot.app.screen
        nv = s.query_one(Narrative)
        await pilot.press("right_square_bracket")
        assert s.step == 1 and nv.pending(1)                    # step 2 asks its two questions first
        await pilot.press(*right_answer_keys(lr, 1))
        assert not nv.pending(1) and s.index == lr.steps[1].focus_index()
        assert s.model.events[s.index]["node"]["name"] == "ToCopyBackward0"
        for k in range(2, len(lr.steps)):
            await pilot.press("right_square_bracket")
            assert s.step == k and s.index == lr.steps[k].focus_index()
