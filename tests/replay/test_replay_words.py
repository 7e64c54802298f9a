"""replay.words: one format for bytes, shapes, tensors, places and event lines (NOTE [ One format ])."""
import pytest
from replay.words import event_line, kind, nbytes, shape, unit_for, where


def test_event_lines_say_what_happened():
    # moved from tests/tui/test_app_model.py (``human_bytes`` is ``nbytes`` now)
    human_bytes = nbytes
    assert human_bytes(12) == "12 B" and human_bytes(2048) == "2.0 KiB" and human_bytes(3 << 20) == "3.00 MiB"
    assert event_line({"kind": "execute", "name": "SinBackward0", "node": 4}) == "run SinBackward0 (node 4)"
    assert event_line({"kind": "checkpoint_drop", "name": "result", "node": 9, "bytes": 1024, "kept": False}) == \
        "checkpoint: result of node 9 dropped, 1.0 KiB freed"
    assert event_line({"kind": "release", "name": "self", "node": 3, "bytes": 16}) == "release self of node 3 (16 B)"
    assert event_line({"kind": "brand_new", "x": 1}) == "brand_new x=1"


def test_bytes_read_the_same_everywhere():
    assert [nbytes(n) for n in (0, 1023, 1024, 1536, 3 << 20, 3 << 30, -2048, None)] == \
        ["0 B", "1023 B", "1.0 KiB", "1.5 KiB", "3.00 MiB", "3.00 GiB", "-2.0 KiB", "0 B"]


def test_axis_units():
    assert unit_for(100) == ("B", 1) and unit_for(4096) == ("KiB", 1024) and unit_for(5 << 20) == ("MiB", 1 << 20)


def test_three_shape_notations():
    assert shape([5, 8]) == "[5, 8]" and shape([]) == "[]" and shape(None) == "[]"
    assert shape([5, 8], "tuple") == "(5, 8)" and shape([3], "tuple") == "(3,)" and shape([], "tuple") == "()"
    assert shape([5, 8], "box") == "[5×8]" and shape([], "box") == "[scalar]"


def test_tensor_kind_and_place():
    assert kind({"dtype": "float32", "device": "cpu"}) == "float32"
    assert kind({"dtype": "float32", "device": "cuda:0"}) == "float32 cuda:0"
    assert where("/a/b/train.py", 9) == "train.py:9" and where("C:\\x\\m.py", None) == "m.py" and where(None, 3) == ""


def test_every_event_kind_of_the_format_has_its_own_line():
    from engine.trace import KINDS

    generic = {"save", "load", "empty_cache"}          # written field by field
    for k in KINDS:
        line = event_line({"kind": k})
        assert line and (k in generic or line != k), k
    assert event_line({"kind": "mark", "text": "step", "step": 1, "title": "Backward"}) == "── step 2: Backward ──"
    assert event_line({"kind": "op", "op": "sin", "output": {"shape": [3]},
                       "node": {"name": "SinBackward0", "saved": [{"bytes": 12}]}}) == \
        "sin [3] -> SinBackward0, saves 12 B"


@pytest.mark.parametrize("n, text", [(0, "0B"), (12, "12B"), (1023, "1023B"), (1024, "1.0K"), (99 * 1024 + 512, "99.5K"),
                                     (437 * 1024, "437K"), (1536 * 1024, "1.50M"), (99 * 1024 ** 2, "99.0M"),
                                     (500 * 1024 ** 2, "500M"), (3 * 1024 ** 3, "3.00G"), (-2048, "-2.0K")])
def test_short_bytes_fit_five_cells_with_three_figures(n, text):
    from replay.words import short_bytes
    assert short_bytes(n) == text and len(text) <= 5
