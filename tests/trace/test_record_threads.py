"""A recorder records its own thread: two threads recording at once never get each other's events."""
from __future__ import annotations

import threading

import engine
from engine import events as _events


def _worker(op: str, n: int, start: threading.Barrier, stop: threading.Barrier, out: dict):
    x = engine.ones(3, requires_grad=True)
    with engine.record(thread=op) as tr:
        start.wait()                        # both recorders are open from here ...
        y = x
        for _ in range(n):
            y = getattr(y, op)()
        y.sum().backward()
        stop.wait()                         # ... until both threads have finished their work
    out[op] = tr


def test_two_threads_recording_at_once_get_only_their_own_events():
    start, stop, out = threading.Barrier(2), threading.Barrier(2), {}
    threads = [threading.Thread(target=_worker, args=(op, n, start, stop, out)) for op, n in (("exp", 3), ("sin", 7))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ops = {k: [e["op"] for e in tr.of_kind("op")] for k, tr in out.items()}
    assert ops["exp"] == ["exp"] * 3 + ["sum"]
    assert ops["sin"] == ["sin"] * 7 + ["sum"]
    for k, tr in out.items():
        names = [e["name"] for e in tr.of_kind("execute")]
        assert names == ["SumBackward0"] + [f"{k.capitalize()}Backward0"] * (3 if k == "exp" else 7)
        assert [e["seq"] for e in tr.events] == list(range(len(tr.events)))
    assert _events.active is False and _events._recorders == ()


def test_events_of_a_thread_without_a_recorder_reach_no_recorder():
    done = threading.Event()

    def other():
        engine.ones(2).exp()
        done.set()
    with engine.record() as tr:
        t = threading.Thread(target=other)
        t.start()
        t.join()
        engine.ones(2).cos()
    assert done.is_set()
    assert [e["op"] for e in tr.of_kind("op")] == ["cos"]
