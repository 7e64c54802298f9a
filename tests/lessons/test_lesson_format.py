"""The lesson format: selectors, placeholders, the registry."""
import pytest

import lessons
from lessons._format import Check, Focus, Lesson, Step, fill, parse_selector, select

EVENTS = [
    {"kind": "mark", "text": "step"},
    {"kind": "alloc", "bytes": 8, "storage": 1},
    {"kind": "op", "op": "sin", "node": {"name": "SinBackward0"}},
    {"kind": "alloc", "bytes": 16, "storage": 2},
    {"kind": "execute", "name": "SinBackward0"},
    {"kind": "free", "bytes": 16, "storage": 2},
    {"kind": "execute", "name": "AccumulateGrad"},
]


@pytest.mark.parametrize("selector, index", [
    ("start", 0), ("end", 6), ("peak", 3), ("first execute", 4), ("last execute", 6),
    ("execute", 4), ("first execute name == 'AccumulateGrad'", 6), ("kind == 'free'", 5),
    ("first op node.name == 'SinBackward0'", 2), ("first op op == 'cos'", 6),  # no match: the last event
])
def test_select(selector, index):
    assert select(EVENTS, selector) == index


def test_select_within_a_range():
    assert select(EVENTS, "first execute", 5, 7) == 6
    assert select(EVENTS, "start", 2, 4) == 2
    assert select(EVENTS, "peak", 4, 7) == 4


def test_bad_selectors_fail_early():
    with pytest.raises(ValueError, match="cannot read condition"):
        parse_selector("first execute name = 'x'")
    with pytest.raises(ValueError, match="not a literal"):
        parse_selector("name == foo")
    with pytest.raises(ValueError, match="panel"):
        Focus("plot", "end")


def test_fill_keeps_unknown_placeholders_and_formats_numbers():
    assert fill("{a:,} B and {b}", {"a": 12345}) == "12,345 B and {b}"
    assert fill("{x:.2f}", {"x": 1 / 3}) == "0.33"


def test_lesson_validation():
    with pytest.raises(ValueError, match="slug"):
        Lesson(1, "Bad Slug", "t", "s", (Step("a", "b", lambda s: None),))
    with pytest.raises(ValueError, match="at least one step"):
        Lesson(1, "ok", "t", "s", ())


def test_step_source_is_the_function():
    def code(s):
        return {"v": 1}
    assert Step("t", "n", code).source.startswith("def code(s):")


def test_registry():
    names = lessons.module_names()
    assert names[:5] == ["lesson_01_first_graph", "lesson_02_saved_tensors", "lesson_03_leaves_and_no_grad",
                         "lesson_04_inplace_versions", "lesson_05_checkpointing"]
    assert lessons.get(1).slug == "first_graph"
    assert lessons.get("01").number == 1
    assert lessons.get("checkpointing").number == 5
    assert lessons.get("lesson_02_saved_tensors").number == 2
    assert [L.number for L in lessons.all_lessons()][:5] == [1, 2, 3, 4, 5]
    assert lessons.broken() == {}
    with pytest.raises(KeyError, match="no lesson 'nope'"):
        lessons.get("nope")


def test_a_failing_check_and_a_raising_step_are_reported():
    from lessons import _runner

    def ok(s):
        return {"n": 2}

    def boom(s):
        raise ValueError("bad step")

    L = Lesson(99, "tmp", "T", "S", (
        Step("one", "n is {n}", ok, checks=(Check("n is {n}", lambda r: r.values["n"] == 2),
                                           Check("n is three", lambda r: (r.values["n"] == 3, "it is 2")),
                                           Check("raises", lambda r: 1 / 0))),
        Step("two", "x", boom),
    ))
    lr = _runner.run(L)
    assert [c.ok for c in lr.steps[0].checks] == [True, False, False]
    assert lr.steps[0].checks[0].text == "n is 2"
    assert lr.steps[0].checks[1].detail == "it is 2"
    assert "ZeroDivisionError" in lr.steps[0].checks[2].detail
    assert not lr.steps[1].ok and "ValueError: bad step" in lr.steps[1].checks[0].detail
    text = _runner.render_text(lr)
    assert "✗ n is three  [it is 2]" in text and "1 of 4 checks passed" in text
    # each step owns the events from its mark to the next mark
    assert lr.trace.events[lr.steps[0].start]["kind"] == "mark"
    assert lr.steps[0].end == lr.steps[1].start


def test_a_question_the_run_cannot_answer_with_one_of_its_choices_fails_the_step():
    from lessons import Lesson, Question, Step, _runner

    def code(s):
        return {"n": 3}

    step = Step("q", "n is {n}", code, checks=(Check("n is 3", lambda r: r.values["n"] == 3),),
                questions=(Question("How many?", lambda r: str(r.values["n"]), ("1", "2")),
                           Question("Twice?", lambda r: str(2 * r.values["n"]), why="twice {n}")))
    lr = _runner.run(Lesson(99, "q", "Q", "s", (step,)))
    bad = [c for c in lr.steps[0].checks if not c.ok]
    assert [c.detail for c in bad] == ["'3' is not one of ['1', '2']"]
    assert [(a.answer, a.why) for a in lr.steps[0].answers] == [("6", "twice 3")]


def test_the_plain_text_runner_names_the_memory_view_a_step_opens():
    from lessons._format import Focus
    from lessons._runner import focus_words

    assert focus_words(Focus("graph", "end")) == "the graph panel"
    assert focus_words(Focus("memory", "peak", view="chart", window="backward")) == "the memory panel, window: backward"
    assert focus_words(Focus("memory", "peak", view="holders", group="module", category="activation")) == \
        "the memory panel's holders view, by module, activation only"
