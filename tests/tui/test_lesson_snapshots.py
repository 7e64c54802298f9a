"""Every lesson's first screen and one later step, at 80×24 and at 120×36 (NOTE [ Fitting the screen ]).

SVGs under __snapshots__/test_lesson_snapshots; regenerate with --snapshot-update and read them.
Each lesson is recorded once for the session (the ``recorded_lesson`` fixture). A first screen with a
question shows the question; a later step is shown after its questions are answered (rightly).
"""
import pytest

from tests.tui.conftest import right_answer_keys
from tui.app import GlassgradApp

SIZES = [(80, 24), (120, 36)]
LESSONS = [*range(1, 9), 16, 17]       # a later step of each; every lesson's first screen below
ALL_LESSONS = range(1, 18)
# the later step each lesson is shown at: where backward runs, except where the text quotes bytes
# that count what other tests keep alive (lesson 2's backward step quotes the live-bytes peak: its
# second backward instead; lesson 3's step 4 quotes memory_allocated(): the hook's backward);
# lesson 5: the recompute; lesson 6, which has no backward: a storage record; lesson 16: the lifetimes view
# at the peak; lesson 17: autocast's cast nodes
LATER = {1: 2, 2: 3, 3: 5, 4: 3, 5: 3, 6: 3, 7: 3, 8: 2, 16: 2, 17: 2}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lesson", ALL_LESSONS)
def test_first_screen(snap_compare, recorded_lesson, lesson, size):
    assert snap_compare(GlassgradApp("lesson", lesson_run=recorded_lesson(lesson)), terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lesson", LESSONS)
def test_later_step(snap_compare, recorded_lesson, lesson, size):
    lr = recorded_lesson(lesson)
    app = GlassgradApp("lesson", lesson_run=lr)
    keys = ["right_square_bracket"] * (LATER[lesson] - 1) + right_answer_keys(lr, LATER[lesson] - 1)

    async def play(pilot):
        await pilot.press(*keys)
        await pilot.pause()              # the graph re-centres once panels that appeared took their room
        await pilot.pause()

    assert snap_compare(app, run_before=play, terminal_size=size)
