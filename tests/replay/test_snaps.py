"""A followed model's live bytes per category: each row once, per event the row it shares (replay/index.py)."""
import numpy as np

from replay.index import Snaps
from replay.memory import Replay
from tests.replay.traces import RECORDED


def test_snaps_read_as_the_list_they_replace():
    rows = [(1, 2, 3)] * 3 + [tuple([4, 5, 6]), tuple([4, 5, 6])]  # noqa: C409 - two objects, not one constant
    s = Snaps()
    for r in rows:
        s.append(r)
    assert list(s) == rows and len(s) == 5 and s[-1] == (4, 5, 6) and s[1:4] == rows[1:4]
    assert len(s._sums) == 3                # (4, 5, 6) twice, as two objects: two rows; the shared one once
    assert list(s._which) == [0, 0, 0, 1, 2]
    s.widen()
    s.append((7, 8, 9, 10))
    assert list(s) == [r + (0,) for r in rows] + [(7, 8, 9, 10)]
    assert np.array_equal(s.a, np.array(list(s)))


def test_a_replay_folded_into_snaps_answers_as_one_into_a_list():
    events = RECORDED["checkpoint, non-reentrant"]().events
    plain, rows = Replay(events), Replay()
    rows.snaps = Snaps()
    for k in range(0, len(events), 7):
        rows.extend(events[k:k + 7])
    assert list(rows.snaps) == list(plain.snaps) and rows.categories == plain.categories
    n = len(events)
    for cat in (None, "activation", "gradient"):
        assert rows.peak_in(n // 3, n, cat) == plain.peak_in(n // 3, n, cat)
    assert [rows.live_at(i) for i in range(n)] == [plain.live_at(i) for i in range(n)]


def test_a_category_met_late_widens_every_row():
    events = [{"kind": "alloc", "storage": 1, "bytes": 8, "device": "cpu", "category": "other", "phase": "forward"},
              {"kind": "mark", "phase": "forward"},
              {"kind": "alloc", "storage": 2, "bytes": 16, "device": "cpu", "category": "late", "phase": "forward"}]
    plain, rows = Replay(events), Replay()
    rows.snaps = Snaps()
    for e in events:
        rows.extend([e])
    assert rows.categories == plain.categories and rows.categories[-1] == "late"
    assert list(rows.snaps) == list(plain.snaps)
