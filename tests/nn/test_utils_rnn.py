"""engine.nn.utils.rnn: pad_sequence / unpad_sequence, as torch.nn.utils.rnn."""
import pytest

import engine
from engine.nn.utils.rnn import pad_sequence, unpad_sequence


def test_pad_sequence_layouts_values_and_gradients():
    a = engine.ones(2, 3, requires_grad=True)
    b = engine.full((4, 3), 2.0, requires_grad=True)
    p = pad_sequence([a, b])
    assert tuple(p.shape) == (4, 2, 3) and p.grad_fn.name() == "torch::autograd::CopySlices"
    assert p[:, 0, 0].tolist() == [1.0, 1.0, 0.0, 0.0] and p[:, 1, 0].tolist() == [2.0] * 4
    q = pad_sequence([a, b], batch_first=True, padding_value=-1.0, padding_side="left")
    assert tuple(q.shape) == (2, 4, 3) and q[0, :, 0].tolist() == [-1.0, -1.0, 1.0, 1.0]
    (q * engine.arange(3.0)).sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0, 2.0]] * 2 and b.grad.tolist() == [[0.0, 1.0, 2.0]] * 4
    back = unpad_sequence(p, engine.tensor([2, 4]))
    assert [tuple(t.shape) for t in back] == [(2, 3), (4, 3)] and back[1].tolist() == b.tolist()


@pytest.mark.parametrize("seqs,msg", [
    (lambda: [engine.ones(2, 3), engine.ones(2, 4)],
     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"),
    (lambda: [], "received an empty list of sequences"),
])
def test_pad_sequence_errors(seqs, msg):
    with pytest.raises(RuntimeError) as e:
        pad_sequence(seqs())
    assert str(e.value) == msg
