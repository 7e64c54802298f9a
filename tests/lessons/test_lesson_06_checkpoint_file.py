"""Lesson 6 runs headless, points at the records panel, and its numbers are the trace's and the file's."""
import io

import lessons
from lessons import _runner
from replay.records import Files


def _run():
    return _runner.run(lessons.get(6))


def test_every_check_passes_and_each_file_step_looks_at_the_records():
    lr = _run()
    assert [(r.step.title, c.text) for r in lr.steps for c in r.checks if not c.ok] == []
    assert [r.step.focus.panel for r in lr.steps] == ["records", "records", "records", "records", "log"]
    files = Files(lr.trace.events)
    kinds = {1: "save", 3: "load", 4: "load"}
    for n, kind in kinds.items():                      # the event each step moves to is the file event it is about
        r = lr.steps[n - 1]
        fe = files.at(r.focus_index())
        assert fe.index == r.focus_index() and fe.kind == kind and fe.described
    assert files.at(lr.steps[1].focus_index()).file_name == "tiny.pt"      # step 2 still shows step 1's file
    text = _runner.render_text(lr)
    assert text.count("Look at: the records panel") == 4


def test_the_records_the_lesson_shows_are_the_zip_listing():
    lr = _run()
    v = lr.steps[0].values
    save = Files(lr.trace.events).at(lr.steps[0].focus_index())
    assert [(r.name, r.bytes) for r in save.records] == v["listing"]            # zipfile's own listing
    assert [r.data_offset for r in save.records] == v["offsets"]
    assert [(s.record, s.numel, s.bytes, [w.name for w in s.views]) for s in save.storages] == [
        ("tiny/data/0", 12, 48, ["0.weight"]), ("tiny/data/1", 4, 16, ["0.bias"]),
        ("tiny/data/2", 8, 32, ["2.weight"]), ("tiny/data/3", 2, 8, ["2.bias"])]
    # the narrative's numbers are the run's
    step3 = lr.steps[2]
    said = " ".join(step3.narrative().split())
    assert "viewed by `base` and `window` (offset 10)" in said
    assert f"rebuilt that record as storage {step3.values['load_storage_id']}," in said
    assert "has the tag `cuda:0` and was rebuilt on `cpu`" in " ".join(lr.steps[3].narrative().split())


def test_the_script_prints_every_check_passed():
    out = io.StringIO()
    assert _runner.print_lesson(lessons.get(6), None, out) == 0
    n = sum(len(r.step.checks) for r in _run().steps)
    assert f"{n} of {n} checks passed" in out.getvalue()
