"""Factories take size= and out= as PyTorch's do (issue #20)."""
import pytest

import engine as torch


@pytest.mark.parametrize("f", [torch.zeros, torch.ones, torch.empty, torch.randn, torch.rand])
def test_size_as_a_keyword(f):
    assert f(size=(2, 3)).shape == (2, 3) and f(size=[4]).shape == (4,)
    with pytest.raises(TypeError):
        f(2, size=(2,))


def test_out_writes_into_the_given_tensor_and_resizes_it():
    o = torch.empty(2)
    r = torch.zeros(3, out=o)
    assert r is o and o.shape == (3,) and o.tolist() == [0.0, 0.0, 0.0]
    same = torch.ones(3)
    assert torch.ones(3, out=same) is same
    torch.manual_seed(0)
    a = torch.randn(4)
    torch.manual_seed(0)
    b = torch.empty(4)
    torch.randn(4, out=b)
    assert b.tolist() == a.tolist()


def test_out_of_another_dtype_is_pytorchs_error():
    with pytest.raises(RuntimeError, match=r"^dtype Float does not match dtype of out parameter \(Long\)$"):
        torch.zeros(2, out=torch.empty(2, dtype=torch.int64), dtype=torch.float32)
    assert torch.zeros(2, out=torch.empty(2, dtype=torch.int64)).dtype == torch.int64
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'sizee'"):
        torch.zeros(2, sizee=3)


def test_torch_svd_returns_v_not_vh_and_its_gradient_checks():
    torch.manual_seed(0)
    a = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    u, s, v = torch.svd(a)
    assert (u.shape, s.shape, v.shape) == ((4, 3), (3,), (3, 3))
    assert (u @ torch.diag(s) @ v.T - a).abs().max().item() < 1e-12
    assert torch.svd(a, some=False).U.shape == (4, 4)
    assert torch.autograd.gradcheck(lambda t: torch.svd(t)[1], (a,))
    assert torch.serialization.save is torch.save
