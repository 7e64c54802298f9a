"""Snapshots of the main screens (SVG under __snapshots__; regenerate with --snapshot-update and look at them)."""
import os

from tui.app import GlassgradApp

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "mlp_trace.jsonl")


def test_home_screen(snap_compare):
    import lessons

    app = GlassgradApp("home", lessons=[lessons.get(n) for n in range(1, 6)], recent=[])
    assert snap_compare(app, terminal_size=(100, 30))


def test_lesson_1_backward_step(snap_compare, lesson_run):
    app = GlassgradApp("lesson", lesson_run=lesson_run(1))
    # step 2 starts at the first executed node; two more events into backward
    assert snap_compare(app, press=["right_square_bracket", "right", "right"], terminal_size=(100, 30))


def test_lesson_1_at_80x24(snap_compare, lesson_run):
    app = GlassgradApp("lesson", lesson_run=lesson_run(1))
    assert snap_compare(app, terminal_size=(80, 24))


def test_view_of_a_trace(snap_compare, mlp_trace):
    app = GlassgradApp("trace", trace=mlp_trace, title="mlp_trace.jsonl")
    assert snap_compare(app, press=["right_curly_bracket", "full_stop", "full_stop"], terminal_size=(120, 36))


def test_help_screen(snap_compare, mlp_trace):
    app = GlassgradApp("trace", trace=mlp_trace, title="mlp_trace.jsonl")
    assert snap_compare(app, press=["question_mark"], terminal_size=(100, 30))
