"""NOTE [ GC between keys ] (tui/gcpause.py): no automatic full collection while the app runs, one
between keys instead; the collector's thresholds come back when the app ends. Tests never freeze."""
import gc

from tui.app import GlassgradApp
from tui.gcpause import GCBetweenKeys


def _young_collections(n: int) -> None:
    """``n`` collections of the young generations: each one counts towards the oldest."""
    for _ in range(n):
        gc.collect(1)


def test_a_full_collection_is_due_when_something_piled_up_and_no_key_came_lately(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr("tui.gcpause.time.monotonic", lambda: now[0])
    c = GCBetweenKeys()
    gc.collect()
    assert gc.get_count()[2] == 0 and not c.due()          # nothing reached the oldest generation
    _young_collections(1)
    assert gc.get_count()[2] >= 1 and c.due()              # rule 2: idle, one pile
    c.input()
    assert not c.due()                                     # a key came just now
    now[0] += GCBetweenKeys.QUIET
    assert c.due()
    c.input()
    _young_collections(GCBetweenKeys.FORCE - 1)
    assert gc.get_count()[2] >= GCBetweenKeys.FORCE and c.due()    # keys keep coming: FORCE piles
    frozen = gc.get_freeze_count()
    c.collect()
    assert gc.get_count()[2] == 0 and c.collections == 1 and not c.due()
    assert gc.get_freeze_count() == frozen                 # only the real app freezes (rule 4)


def test_no_collection_while_the_collector_is_off():
    c = GCBetweenKeys()
    gc.collect()
    _young_collections(GCBetweenKeys.FORCE)
    gc.disable()
    try:
        assert not c.due()                                  # rule 3
    finally:
        gc.enable()
    assert c.due()


def test_only_the_real_app_showing_one_trace_for_its_life_does_it():
    assert GlassgradApp("trace", freeze=True).gc_between_keys.freeze
    assert GlassgradApp("run", freeze=True).gc_between_keys.freeze
    home = GlassgradApp("home", freeze=True).gc_between_keys
    assert not home.on and not home.freeze                 # traces come and go, their models not frozen
    test = GlassgradApp("trace").gc_between_keys
    assert not test.on and not test.freeze                 # rule 4: tests keep Python's rhythm


async def test_the_real_app_collects_between_keys_and_gives_the_thresholds_back(mlp_trace, monkeypatch):
    frozen = []
    monkeypatch.setattr("tui.gcpause.gc.freeze", lambda: frozen.append(1))     # tests never freeze
    before = gc.get_threshold()
    app = GlassgradApp("trace", trace=mlp_trace, title="t", freeze=True)
    async with app.run_test(size=(120, 40)) as pilot:
        assert gc.get_threshold() == (before[0], before[1], GCBetweenKeys.OFF)    # rule 1
        await pilot.press("right")
        assert app.gc_between_keys._last_input > 0          # keys and the mouse count as input
        gc.collect()
        _young_collections(2)
        await pilot.pause(4 * GCBetweenKeys.EVERY + GCBetweenKeys.QUIET)
        assert app.gc_between_keys.collections >= 1 and gc.get_count()[2] == 0
        assert frozen == [1]                                # rule 4: once, after the first collection
    assert gc.get_threshold() == before


async def test_an_app_in_a_test_leaves_the_collector_alone(mlp_trace):
    before = gc.get_threshold()
    app = GlassgradApp("trace", trace=mlp_trace, title="t")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("right")
        assert gc.get_threshold() == before and app.gc_between_keys._timer is None
