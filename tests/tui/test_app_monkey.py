"""A learner's keys never crash the app: seeded random key sequences and clicks on every screen.

Each case opens one trace (a lesson run, a training loop, a trace without memory events, a cut
trace, no events at all, two runs in the diff screen, a checkpointing plan) at 80×24 or 120×36, presses bursts of keys
drawn from every key the screens and the memory views bind and the ``?`` helps list (so a new
key is pressed as soon as it is bound or documented), clicks a random cell before each burst,
and checks the app still runs, raised nothing, and its status line still ends with ``? help``.
The keys that leave the first screen (q, and escape on the diff screen) are left out: they end
the run. ``w`` writes a picture under the working folder, which is the test's tmp_path.
``GLASSGRAD_MONKEY_SEED`` and ``GLASSGRAD_MONKEY_BURSTS`` press other and longer sequences, and
``GLASSGRAD_MONKEY_SIZES=all`` runs every case at both sizes (by default each case takes one, in turn).
"""
import os
import random

import pytest
from textual.binding import Binding
from textual.keys import _character_to_key

from tui.app import GlassgradApp
from tui.diff_screen import KEYS as DIFF_KEYS
from tui.diff_screen import DiffScreen
from tui.graph_keys import BINDINGS as GRAPH_BINDINGS
from tui.help_screen import KEYS as HELP_KEYS
from tui.help_screen import HelpScreen
from tui.holders_view import HoldersView
from tui.lifetimes_view import LifetimesView
from tui.plan_screen import KEYS as PLAN_KEYS
from tui.plan_screen import PlanScreen
from tui.trace_screen import TraceScreen

# to look for more: GLASSGRAD_MONKEY_SEED=n presses other sequences, GLASSGRAD_MONKEY_BURSTS=n longer ones
SEED = int(os.environ.get("GLASSGRAD_MONKEY_SEED", "0"))
BURSTS = int(os.environ.get("GLASSGRAD_MONKEY_BURSTS", "3"))   # a click at a random cell, then a burst of keys
KEYS_PER_BURST = 7
SIZES = [(80, 24), (120, 36)]
LEAVE = {"close", "quit"}     # a binding that leaves the screen (q; escape on the diff screen) ends the run

# how the help writes a key -> Textual's name for it; the help's other words name no key
HELP_WORDS = {"→": "right", "←": "left", "↑": "up", "↓": "down", "pgup": "pageup", "pgdn": "pagedown",
              "shift+arrows": ("shift+left", "shift+right", "shift+up", "shift+down"),
              "1-9": tuple("123456789")}
NAMED = {"space", "enter", "tab", "escape", "home", "end", "up", "down", "left", "right", "pageup", "pagedown"}
NOT_KEYS = {"mouse", "┃", "▲", "┄", "◆", "●", "┌│└", "✓", "√"}    # the charts' marks


def _bindings(cls_or_list) -> list:
    raw = cls_or_list if isinstance(cls_or_list, list) else cls_or_list.BINDINGS
    return [b if isinstance(b, Binding) else Binding(*b) for b in raw]


def bound_keys(*owners) -> dict:
    """{key: action} of every binding of ``owners`` (screen or widget classes, or binding lists)."""
    out = {}
    for owner in owners:
        for b in _bindings(owner):
            for k in b.key.split(","):
                out.setdefault(k.strip(), b.action)
    return out


def help_keys(rows) -> set:
    """The keys a help table (rows of (keys, what they do)) names, as Textual names them."""
    keys = set()
    for left, _ in rows:
        for word in left.split():
            if word in NOT_KEYS:
                continue
            named = HELP_WORDS.get(word, word if word in NAMED else None)
            if named is None:
                assert len(word) == 1, f"the help names a key this test cannot press: {word!r}"
                named = _character_to_key(word)
            keys.update([named] if isinstance(named, str) else named)
    return keys


TRACE_BINDINGS = bound_keys(TraceScreen, GRAPH_BINDINGS, HoldersView, LifetimesView, HelpScreen)
DIFF_BINDINGS = bound_keys(DiffScreen, HelpScreen)
PLAN_BINDINGS = bound_keys(PlanScreen, HelpScreen)


def key_pool(screen_bindings: dict) -> list:
    """Every key bound or in the help, less the keys that leave the first screen; plus tab, shift+tab."""
    keys = set(TRACE_BINDINGS) | set(DIFF_BINDINGS) | set(PLAN_BINDINGS)
    keys |= help_keys(HELP_KEYS) | help_keys(DIFF_KEYS) | help_keys(PLAN_KEYS)
    keys |= {"tab", "shift+tab", "escape", "up", "down", "pageup", "pagedown"}
    keys -= {k for k, action in screen_bindings.items() if action.split("(")[0] in LEAVE}
    return sorted(keys)


def test_the_pool_holds_every_key_the_help_names():
    pool = key_pool(TRACE_BINDINGS)
    for k in ("m", "a", "e", "W", "x", "b", "s", "c", "enter", "tab", "plus", "minus", "0", "t", "T", "v",
              "f", "p", "P", "left_curly_bracket", "right_curly_bracket", "right_square_bracket",
              "left_square_bracket", "slash", "n", "N", "escape", "shift+up", "space", "greater_than_sign",
              "less_than_sign", "home", "end", "i", "o", "z", "w", "question_mark", "5", "full_stop", "comma"):
        assert k in pool, k
    assert "q" not in pool            # q leaves the trace screen: the run would end there
    diff_pool = key_pool(DIFF_BINDINGS)
    assert "escape" not in diff_pool and "q" not in diff_pool and "pagedown" in diff_pool
    assert "escape" not in key_pool(PLAN_BINDINGS)


# ---------------------------------------------------------------- the traces


def _training_loop():
    import engine as torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(5, 4), torch.randn(5, 2)
    with torch.record() as tr:
        for _ in range(3):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    return tr


def _diff_runs():
    import engine as torch
    from engine.utils.checkpoint import checkpoint

    def run(ckpt):
        torch.manual_seed(0)
        first = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh())
        last = torch.nn.Linear(4, 2)
        x = torch.randn(3, 4)
        with torch.record() as tr:
            h = checkpoint(first, x, use_reentrant=False) if ckpt else first(x)
            last(h).sum().backward()
        return tr
    return run(False), run(True)


PLAN_SCRIPT = """
import engine as torch
torch.manual_seed(0)
model = torch.nn.Sequential(*[m for _ in range(3) for m in (torch.nn.Linear(16, 16), torch.nn.GELU())])
example_input = torch.randn(8, 16)
"""


def make_app(case: str, mlp_trace, recorded_lesson, tmp_path):
    from engine.trace import Trace
    from replay.diff import diff

    if case.startswith("lesson"):
        return GlassgradApp("lesson", lesson_run=recorded_lesson(int(case[len("lesson"):])))
    if case == "training":
        return GlassgradApp("trace", trace=_training_loop(), title="training loop")
    if case == "no-memory":
        events = [e for e in mlp_trace.events if e["kind"] not in ("alloc", "free", "category")]
        return GlassgradApp("trace", trace=Trace(events, mlp_trace.meta), title="no memory")
    if case == "cut":            # cut in the middle of backward, as a run that crashed leaves it
        back = next(k for k, e in enumerate(mlp_trace.events) if e["kind"] == "backward_begin")
        return GlassgradApp("trace", trace=Trace(mlp_trace.events[:back + 5], mlp_trace.meta), title="cut")
    if case == "empty":
        return GlassgradApp("trace", trace=Trace([], {}), title="empty")
    if case == "diff":
        a, b = _diff_runs()
        return GlassgradApp("screen", first_screen=DiffScreen(diff(a, b), ("plain.jsonl", "ckpt.jsonl")))
    if case == "plan":
        from viz.plan import load

        (tmp_path / "chain.py").write_text(PLAN_SCRIPT)
        return GlassgradApp("screen", first_screen=PlanScreen(load(str(tmp_path / "chain.py"))))
    raise ValueError(case)


CASES = ["lesson5", "lesson16", "training", "no-memory", "cut", "empty", "diff", "plan"]


def status_text(app) -> str:
    """The status line of the first screen (under the help when the help is open)."""
    return str(app.screen_stack[1].query_one("#status").render()).rstrip()


# each case at one of the sizes, in turn (both sizes of every case: GLASSGRAD_MONKEY_SIZES=all)
PAIRS = [(c, z) for k, c in enumerate(CASES) for z in SIZES
         if os.environ.get("GLASSGRAD_MONKEY_SIZES") == "all" or z == SIZES[k % len(SIZES)]]


@pytest.mark.parametrize(("case", "size"), PAIRS, ids=[f"{c}-{z[0]}x{z[1]}" for c, z in PAIRS])
async def test_random_keys_never_crash_the_app(case, size, mlp_trace, recorded_lesson, tmp_path, monkeypatch):
    # w writes the graph picture into glassgrad-out/ under the working folder: keep it in tmp_path
    monkeypatch.chdir(tmp_path)
    app = make_app(case, mlp_trace, recorded_lesson, tmp_path)
    seed = SEED * 100 + CASES.index(case) * 10 + SIZES.index(size)
    rng = random.Random(seed)
    pool = key_pool({"diff": DIFF_BINDINGS, "plan": PLAN_BINDINGS}.get(case, TRACE_BINDINGS))
    pressed = []
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for _ in range(BURSTS):
            at = (rng.randrange(size[0]), rng.randrange(size[1] - 1))    # not the footer: its q quits
            keys = [rng.choice(pool) for _ in range(KEYS_PER_BURST)]
            pressed += [f"click{at}", *keys]
            await pilot.click(offset=at)
            await pilot.press(*keys)         # as fast as a learner mashing keys: no redraw waited between
            assert app.is_running, f"seed {seed}: the app stopped after {pressed[-12:]}"
        await pilot.pause()
        assert getattr(app, "_exception", None) is None, f"seed {seed}: {pressed[-12:]}"
        assert status_text(app).endswith("? help"), (status_text(app), pressed[-12:])
        assert len(app.screen_stack) >= 2


async def test_w_on_a_trace_without_events_says_why_it_wrote_nothing(tmp_path, monkeypatch):
    """Found by the test above: w on an empty trace raised IndexError out of the key handler."""
    from engine.trace import Trace

    monkeypatch.chdir(tmp_path)
    app = GlassgradApp("trace", trace=Trace([], {}), title="empty")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("w")
        await pilot.pause()
        assert app.is_running and status_text(app) == " empty │ no events │ ? help"
        notes = [n.message for n in app._notifications]
        assert notes == ["Could not write the picture: step 0 is out of range: the trace has 0 events (0..-1)"]
    assert not (tmp_path / "glassgrad-out").exists() or not any((tmp_path / "glassgrad-out").rglob("*.dot"))


async def test_a_click_on_the_holders_header_of_a_trace_without_events_says_no_events():
    """Found by the test above (seed 12): the holders table of an empty trace had no column, and a click
    on its header raised IndexError inside Textual's DataTable."""
    from engine.trace import Trace
    from tui.holders_view import HoldersView

    app = GlassgradApp("trace", trace=Trace([], {}), title="empty")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("m", "m")
        ho = app.screen.query_one(HoldersView)
        assert ho.display
        await pilot.click(HoldersView, offset=(2, 0))
        await pilot.pause()
        assert app.is_running and getattr(app, "_exception", None) is None
        assert [str(c.label) for c in ho.columns.values()] == ["who"] and str(ho.get_row_at(0)[0]) == "No events yet."
