"""out= on the torch.* functions (NOTE [ out= arguments ]): PyTorch's results and refusals."""
import warnings

import pytest

import engine as torch


def test_the_result_is_written_into_out_which_is_returned():
    o = torch.empty(2)
    r = torch.add(torch.ones(2), torch.ones(2), out=o)
    assert r is o and o.tolist() == [2.0, 2.0] and o._version >= 1
    v = o[:1]                                     # a view of out sees the write
    torch.mul(torch.tensor([3.0, 4.0]), 2.0, out=o)
    assert v.tolist() == [6.0]
    assert torch.cat([torch.ones(2), torch.zeros(1)], out=torch.empty(3)).tolist() == [1.0, 1.0, 0.0]
    assert torch.sum(torch.ones(3), out=torch.empty(())).item() == 3.0


def test_out_of_another_shape_is_resized_with_pytorchs_warning():
    o = torch.empty(3)
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape \[3\]"):
        torch.add(torch.ones(2), torch.ones(2), out=o)
    assert o.shape == (2,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")             # an empty out is resized without a word
        torch.add(torch.ones(2), torch.ones(2), out=torch.empty(0))


def test_pytorchs_refusals():
    a = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^add\(\): functions with out=\.\.\. arguments don't support automatic "
                                           r"differentiation, but one of the arguments requires grad\.$"):
        torch.add(a, a, out=torch.empty(2))
    with torch.no_grad():
        assert torch.add(a, a, out=torch.empty(2)).tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        torch.mul(torch.ones(2), 2.5, out=torch.zeros(2, dtype=torch.int64))
    assert torch.add(torch.tensor([1, 2]), 1, out=torch.zeros(2)).tolist() == [2.0, 3.0]   # int into float: cast
    assert torch.add(torch.ones(1), 1).tolist() == [2.0]                                   # no out: unchanged
