"""Lesson 11's questions are answered by the run, and its segment map draws the model's blocks."""
from engine.memory.allocator import CachingAllocatorModel
from lessons import _runner, get
from lessons import lesson_11_allocated_vs_reserved as L


def test_every_check_passes_and_every_question_is_answered_by_the_run():
    lr = _runner.run(get(11))
    assert [c.text for r in lr.steps for c in r.checks if not c.ok] == []
    answers = [a.answer for r in lr.steps for a in r.answers]
    assert answers == ["512 B", "2.00 MiB", "into b's freed block", "no: a new segment is reserved", "20.00 MiB"]
    text = _runner.render_text(lr)
    assert "Question: How much does empty_cache() give back?" in text
    assert "  Answer: 20.00 MiB. Only the entirely free segment" in text


def test_segment_map_marks_allocated_and_free_blocks_in_proportion():
    m = CachingAllocatorModel("cuda:0")
    m.malloc("a", 1 << 20)                   # half of a 2 MiB small segment
    line = L.segment_map(m)
    bar = line.split("|")[1]
    assert bar == "#" * 24 + "." * 24
    assert line.startswith("small  2.00 MiB") and line.endswith("1.00 MiB allocated")


def test_fragmentation_is_one_minus_largest_hole_over_free_bytes():
    m = CachingAllocatorModel("cuda:0")
    for i in range(6):
        m.malloc(i, 3 << 20)
    assert L.fragmentation(m) == 0.0         # one hole: the 2 MiB tail
    for i in (0, 2, 4):
        m.free(i)
    assert abs(L.fragmentation(m) - (1 - 3 / 11)) < 1e-12
