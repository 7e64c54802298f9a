"""Lesson 16's numbers, recomputed here from the trace's own events (alloc, free, category, op, pack,
accumulate), and the memory focus its steps use."""
import pytest

from engine.memory.allocator import CachingAllocatorModel
from lessons import _runner, get
from lessons import lesson_16_where_memory_goes as L
from lessons._format import Focus

SCORES = L.BATCH * L.N_HEAD * L.T * L.T * 4          # one (B, heads, T, T) float32 tensor


@pytest.fixture(scope="module")
def lr():
    return _runner.run(get(16))


def series(events, hi):
    """After each of events[:hi]: {category: bytes} of the storages the trace allocated, and who is alive
    ({storage: [bytes, category, alloc index]}) after event ``hi - 1``."""
    alive, live, out = {}, {}, []
    for i, e in enumerate(events[:hi]):
        k, sid = e["kind"], e.get("storage")
        if k == "alloc":
            alive[sid] = [e["bytes"], e["category"], i]
            live[e["category"]] = live.get(e["category"], 0) + e["bytes"]
        elif k == "free" and sid in alive:
            b, cat, _ = alive.pop(sid)
            live[cat] -= b
        elif k == "category" and sid in alive:
            live[e["old"]] -= e["bytes"]
            live[e["new"]] = live.get(e["new"], 0) + e["bytes"]
            alive[sid][1] = e["new"]
        out.append(dict(live))
    return out, alive


def peak(events, lo, hi, category=None):
    s, _ = series(events, hi)
    value = [sum(x.values()) if category is None else x.get(category, 0) for x in s]
    return max(range(lo, hi), key=lambda i: (value[i], -i))


def makers(events):
    """storage -> (op, module) of the first op event whose output lives in a storage its inputs do not."""
    out = {}
    for e in events:
        o = e.get("output") if e["kind"] == "op" else None
        if isinstance(o, dict) and o.get("storage") not in out and all(
                t.get("storage") != o["storage"] for t in e.get("inputs") or [] if isinstance(t, dict)):
            out[o["storage"]] = (e["op"], e.get("module"))
    return out


def test_every_check_passes_and_the_run_answers_each_question(lr):
    assert [(r.step.title, c.text) for r in lr.steps for c in r.checks if not c.ok] == []
    assert [a.answer for r in lr.steps for a in r.answers] == [
        "activations", "softmax", "block.attn", "as many as the parameters",
        "whole 2 MiB segments, part of them free", "between a quarter and a half", "block.mlp"]
    text = _runner.render_text(lr)
    assert "1. 256.0 KiB, made by `softmax` at lesson_16_where_memory_goes.py:" in text
    n = sum(len(r.checks) for r in lr.steps)
    assert f"{n} of {n} checks passed" in text and n > len(lr.steps) * 3


def test_the_peak_and_what_is_alive_there_come_from_alloc_and_free_events(lr):
    r = lr.steps[0]
    evs = lr.trace.events
    at = peak(evs, r.start, r.end)
    s, _ = series(evs, at + 1)
    assert r.values["at"] == at and evs[at]["phase"] == "backward"
    assert {c: b for c, b in s[at].items() if b} == {c: b for c, b in r.values["live"].items() if b}
    assert s[at].get("gradient", 0) == 0 and s[at]["activation"] > 4 * s[at]["parameter"]
    assert s[at]["parameter"] == 4 * r.values["n_params"] == 4 * sum(
        p.numel() for p in L.TinyGPT().parameters())


def test_the_largest_storage_at_the_peak_is_the_attention_weights_saved_twice(lr):
    r = lr.steps[1]
    evs = lr.trace.events
    at = peak(evs, r.start, r.end)
    _, alive = series(evs, at + 1)
    sid = max((s for s, (b, _, i) in alive.items() if i >= r.start), key=lambda s: (alive[s][0], -alive[s][2]))
    assert alive[sid][0] == SCORES and makers(evs)[sid] == ("softmax", "block.attn")
    packs = [e for e in evs[r.start:r.end] if e["kind"] == "pack" and e.get("storage") == sid]
    assert len(packs) == 2 and r.values["top3"][0].storage == sid
    free = next(i for i in range(at, r.end) if evs[i]["kind"] == "free" and evs[i]["storage"] == sid)
    assert r.values["top3"][0].end == free and evs[free]["phase"] == "backward"


def test_module_totals_come_from_the_op_events_module_field(lr):
    r = lr.steps[2]
    evs = lr.trace.events
    at = peak(evs, r.start, r.end)
    _, alive = series(evs, at + 1)
    made = makers(evs)
    own: dict = {}
    for sid, (b, cat, i) in alive.items():
        if cat == "activation" and i >= r.start:
            path = made.get(sid, (None, None))[1] or ""
            own[path] = own.get(path, 0) + b
    total = {m: sum(b for p, b in own.items() if p == m or p.startswith(m + ".")) for m in own}
    mlp = sum(b for p, b in own.items() if p.startswith("block.mlp."))
    assert r.values["attn"] == total["block.attn"] > mlp == r.values["mlp"]
    assert own["block.mlp.c_fc"] == own["block.mlp.gelu"] == L.BATCH * L.T * 4 * L.N_EMBD * 4
    assert r.values["block_own"] == own["block"] == 2 * L.BATCH * L.T * L.N_EMBD * 4


def test_the_backward_window_runs_from_its_first_to_its_last_backward_event(lr):
    r = lr.steps[3]
    evs = lr.trace.events
    back = [i for i in range(r.start, r.end) if evs[i]["phase"] == "backward"]
    lo, hi = back[0], back[-1] + 1
    assert back == list(range(lo, hi)) and r.focus_window() == (lo, hi) and r.values["hi"] == hi - 1
    at = peak(evs, lo, hi)
    assert r.focus_index() == at == peak(evs, r.start, r.end)       # the window's peak is the step's
    s, alive = series(evs, hi)
    assert s[hi - 1].get("activation", 0) == 0
    grads = sum(b for b, cat, i in alive.values() if cat == "gradient")
    params = sum(b for b, cat, i in alive.values() if cat == "parameter")
    assert r.values["grad_hi"] == grads == params
    assert sum(1 for e in evs[lo:hi] if e["kind"] == "accumulate") == len(list(L.TinyGPT().parameters())) == 17


def test_allocated_and_reserved_match_a_fresh_allocator_model_fed_the_events(lr):
    r = lr.steps[4]
    evs = lr.trace.events
    at = peak(evs, r.start, r.end)
    m = CachingAllocatorModel("cpu")
    for e in evs[:at + 1]:
        if e["kind"] == "alloc":
            m.malloc(e["storage"], e["bytes"])
        elif e["kind"] == "free" and e["storage"] in m.by_owner:
            m.free(e["storage"])
    g = r.values["g"]
    assert (g["reserved"], g["requested"], g["rounding"]) == (m.reserved, m.requested, m.active - m.requested)
    assert m.reserved % (2 << 20) == 0 and m.reserved > m.active > m.requested
    assert m.requested == sum(series(evs, at + 1)[0][at].values())


def test_half_the_sequence_keeps_a_half_of_each_tokens_bytes_and_a_quarter_of_the_t_by_t_ones(lr):
    evs = lr.trace.events
    long, short = lr.steps[4], lr.steps[5]
    act = []
    for r in (long, short):
        at = peak(evs, r.start, r.end, "activation")
        _, alive = series(evs, at + 1)
        act.append(sorted((i, b) for b, cat, i in alive.values() if cat == "activation" and i >= r.start))
    assert [sum(b for _, b in a) for a in act] == [short.values["act_long"], short.values["act_short"]]
    quarter = sum(b for (_, b), (_, c) in zip(*act) if b == 4 * c)
    assert quarter == SCORES + L.T * L.T                     # the softmax result and the causal mask (bool)
    assert short.focus_index() == peak(evs, short.start, short.end, "activation")
    assert 0.25 < short.values["r"] < 0.5


def test_a_memory_focus_names_a_view_a_window_and_the_holders_rows():
    assert Focus("memory", "peak", view="holders", window="backward", group="module", category="activation")
    with pytest.raises(ValueError, match="Focus view must be one of"):
        Focus("memory", "peak", view="bands")
    with pytest.raises(ValueError, match="Focus window must be one of"):
        Focus("memory", "peak", window="epoch")
    with pytest.raises(ValueError, match="belong to the memory panel, not 'graph'"):
        Focus("graph", "peak", view="lifetimes")
    with pytest.raises(ValueError, match="need view='holders'"):
        Focus("memory", "peak", view="lifetimes", group="module")
    with pytest.raises(ValueError, match="Focus category must be one of"):
        Focus("memory", "peak", view="holders", category="weights")


def test_the_formats_names_are_the_apps():
    from lessons import _format
    from replay.holders import BY
    from tui import holders_view, memory_modes
    assert _format.VIEWS == memory_modes.MODES
    assert _format.GROUPS == BY + ("module phases",) == holders_view.MODES
