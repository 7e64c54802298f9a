"""A backward that raised: the node it failed in and the saved tensor that was changed."""
import pytest

import engine as torch
from replay.failure import failed_backward


def test_an_in_place_write_names_the_node_and_its_saved_tensor():
    x = torch.randn(4, requires_grad=True)
    with torch.record() as tr:
        y = x.exp()
        y.add_(1)
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    f = failed_backward(tr)
    assert (f.name, f.slot, f.saved_version, f.now_version) == ("ExpBackward0", "result", 0, 2)
    assert tr.events[f.at]["kind"] == "execute" and tr.events[f.at]["name"] == "ExpBackward0"
    assert f.words() == ("backward failed in ExpBackward0: its saved 'result' was modified in place "
                         "(saved at version 0, now at version 2)")


def test_a_second_backward_names_the_node_only_and_a_finished_run_has_no_failure():
    x = torch.randn(3, requires_grad=True)
    with torch.record() as tr:
        y = (x * x).sum()
        y.backward()
        assert failed_backward(tr) is None
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()
    f = failed_backward(tr)
    assert f is not None and f.slot is None and f.words().startswith("backward failed")
