"""What the app keeps while `glassgrad run` follows a run is bounded by the screen, not by the events
folded in: every panel's cache of drawn lines holds at most its own height, and the strips alive
after a collection do not grow with the run."""
import gc

from textual.strip import Strip

from tui.app import GlassgradApp

STEPS = 150
SCRIPT = ("import time\nimport engine as torch\n"
          "w = torch.ones(3, 3, requires_grad=True)\n"
          f"for _ in range({STEPS}):\n"
          "    (w.sin() @ torch.ones(3, 2)).relu().sum().backward()\n"
          "    time.sleep(0.02)\n")       # the app folds the run in over many batches


def _strips() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Strip)


def _check_line_caches(screen) -> None:
    """Each widget's drawn lines (textual's StylesCache, one strip per line drawn) number at most
    its height on the screen: a widget as tall as its content, scrolled along, would keep a line
    for every row it ever showed."""
    for w in screen.query("*"):
        kept = len(w._styles_cache._cache)
        assert kept <= min(w.region.height, screen.size.height), (w, kept, w.region.height)


async def test_following_a_run_keeps_drawn_lines_bounded_by_the_screen(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    script = tmp_path / "loop.py"
    script.write_text(SCRIPT)
    app = GlassgradApp("run", script=str(script), out=str(tmp_path / "run.jsonl"))
    samples = []                 # (events folded in, strips alive) while following
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(300):
            await pilot.pause(0.1)
            s = pilot.app.screen
            if s.finished:
                break
            if len(s.model):
                _check_line_caches(s)
                samples.append((len(s.model), _strips()))
        else:
            raise AssertionError("the run did not finish")
        _check_line_caches(s)
        n_end, strips_end = len(s.model), _strips()
    assert n_end > 4 * samples[0][0]            # the run grew a lot while it was followed
    # the strips alive once every panel has drawn (a quarter in: the first samples come before the
    # panels filled) are the screen's lines and the graph's row cache, however many events came in
    first = samples[len(samples) // 4][1]
    assert strips_end <= first + 300, (samples, strips_end)
    assert max(k for _, k in samples[len(samples) // 4:]) <= first + 300, samples
