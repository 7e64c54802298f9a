"""Playing lesson 16's steps in the app opens what each step's focus names: the memory panel's view,
the window, the holders table's rows and cursor, the selected band (NOTE [ Memory focus ])."""
import pytest

from lessons import _runner, get
from tests.tui.conftest import right_answer_keys
from tui.app import GlassgradApp
from tui.holders_view import HoldersView
from tui.lifetimes_view import LifetimesView
from tui.memory_modes import IDS
from tui.narrative import Narrative


@pytest.fixture(scope="module")
def lr():
    lr = _runner.run(get(16))
    lr.trace.meta.pop("memory_at_start", None)      # bytes earlier tests left alive are no part of the lesson
    return lr


@pytest.fixture(autouse=True)
def _own_recent_list(monkeypatch, tmp_path):
    monkeypatch.setenv("GLASSGRAD_HOME", str(tmp_path / "glassgrad-home"))


def alive_after(events, at):
    """{storage: (bytes, category, alloc index)} alive after event ``at``, from alloc/free/category events."""
    alive = {}
    for i, e in enumerate(events[:at + 1]):
        sid = e.get("storage")
        if e["kind"] == "alloc":
            alive[sid] = (e["bytes"], e["category"], i)
        elif e["kind"] == "free":
            alive.pop(sid, None)
        elif e["kind"] == "category" and sid in alive:
            alive[sid] = (alive[sid][0], e["new"], alive[sid][2])
    return alive


def own_activation_bytes(events, lo, at):
    """Activation bytes alive after ``at`` per module path of the op that made them (from event ``lo`` on):
    its output, or what its node packed before the op event and no input holds (LayerNorm's mean, rstd)."""
    module, packed = {}, {}
    for e in events[lo:at + 1]:
        if e["kind"] == "pack" and e.get("phase") != "backward":
            packed.setdefault(e.get("node"), []).append(e["storage"])
        if e["kind"] == "op":
            node = e.get("node")
            ins = {t.get("storage") for t in e.get("inputs") or [] if isinstance(t, dict)}
            for sid in packed.pop(node.get("id") if isinstance(node, dict) else node, ()):
                if sid not in ins and sid not in module and sid != (e.get("output") or {}).get("storage"):
                    module[sid] = e.get("module") or ""
        o = e.get("output") if e["kind"] == "op" else None
        if isinstance(o, dict) and o.get("storage") not in module and all(
                isinstance(t, dict) and t.get("storage") != o["storage"] for t in e.get("inputs") or []):
            module[o["storage"]] = e.get("module") or ""
    own: dict = {}
    for sid, (b, cat, i) in alive_after(events, at).items():
        if cat == "activation" and i >= lo:
            own[module.get(sid, "")] = own.get(module.get(sid, ""), 0) + b
    return own


async def test_each_step_opens_the_view_window_rows_and_band_its_focus_names(lr):
    """Every step at 120×36, then windows: a step's goes with the next step naming none, the learner's stays."""
    evs = lr.trace.events
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(120, 36)) as pilot:
        s = pilot.app.screen
        lv, hv = s.query_one(LifetimesView), s.query_one(HoldersView)
        for k, r in enumerate(lr.steps):
            if k:
                await pilot.press("right_square_bracket")
            await pilot.press(*right_answer_keys(lr, k))
            await pilot.pause()
            f = r.step.focus
            at = r.focus_index()
            assert (s.step, s.index, s.memory_mode) == (k, at, f.view)
            shown = [m for m, sel in IDS.items() if s.query_one(sel).display]
            assert shown == [f.view] and s.query_one(IDS[f.view]).has_focus
            assert s.window == r.focus_window()
            assert all(s.query_one(sel).window == s.window for sel in ("#lifetimes", "#holders", "#allocator"))
            if f.view == "lifetimes":
                lo = s.window[0]
                alive = {sid: v for sid, v in alive_after(evs, at).items() if v[2] >= lo}
                biggest = max(alive, key=lambda sid: (alive[sid][0], -alive[sid][2]))
                assert lv.selected_lifetime().storage == biggest and alive[biggest][0] == 4 * 4 * 64 * 64 * 4
                assert f"{lv.selected_lifetime().made_by}" == "softmax"
            if f.view == "holders":
                assert (hv.by, hv.sort_by, hv.category) == ("module", "total", "activation") and hv.at == at
                own = own_activation_bytes(evs, r.start, at)
                assert hv.holder_rows[hv.cursor_row].name == max(own, key=own.get) == "block.attn"
                assert {row.name: row.own for row in hv.holder_rows if row.own} == own
            text = str(s.query_one(Narrative).query_one("#narrative-body").source)
            assert f"*Memory panel: {f.view}, at the " in text
        # a window a step's focus chose goes with the next step that names none; one the learner chose stays
        assert s.step == 5 and lr.steps[4].focus_window() is not None and s.window is None
        await pilot.press("W")
        mine = s.window
        assert mine is not None
        await pilot.press("left_square_bracket")         # step 5 names its own window
        assert s.window == lr.steps[4].focus_window()
        await pilot.press("right_square_bracket")
        assert s.window is None
        await pilot.press("W", "right_square_bracket")   # past the last step: step 6 plays again
        assert s.step == 5 and s.window == mine
