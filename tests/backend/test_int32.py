"""int32 is kept where a program asks for it (``dtype=torch.int32``, ``.int()``, ``IntTensor``, a NumPy
int32 array) and promotes as PyTorch's rules say; values, dtypes and the printed form recorded from
PyTorch 2.13."""
from __future__ import annotations

import numpy as np
import pytest

import engine as torch

CASES = [
    ('torch.tensor([1, 2], dtype=torch.int32)', [1, 2], 'int32'),
    ('torch.zeros(2, dtype=torch.int32)', [0, 0], 'int32'),
    ('torch.arange(3, dtype=torch.int32)', [0, 1, 2], 'int32'),
    ('torch.full((2,), 7, dtype=torch.int32)', [7, 7], 'int32'),
    ('torch.tensor([1, 2]).int()', [1, 2], 'int32'),
    ('torch.IntTensor([3, 4])', [3, 4], 'int32'),
    ('torch.tensor([1, 2], dtype=torch.int32) + 1', [2, 3], 'int32'),
    ('torch.tensor([1, 2], dtype=torch.int32) * 2.5', [2.5, 5.0], 'float32'),
    ('torch.tensor([1, 2], dtype=torch.int32) + torch.tensor([1, 2])', [2, 4], 'int64'),
    ('torch.tensor([1, 2], dtype=torch.int32) + torch.tensor(3)', [4, 5], 'int32'),
    ('torch.tensor(3, dtype=torch.int32) + torch.tensor([1, 2])', [4, 5], 'int64'),
    ('torch.tensor([1, 2], dtype=torch.int32) + torch.tensor([True, False])', [2, 2], 'int32'),
    ('torch.tensor([1, 2], dtype=torch.int32).sum()', 3, 'int64'),
    ('torch.tensor([1, 2], dtype=torch.int32).prod()', 2, 'int64'),
    ('torch.tensor([1, 2], dtype=torch.int32).cumsum(0)', [1, 3], 'int64'),
    ('torch.tensor([1, 2], dtype=torch.int32).max()', 2, 'int32'),
    ('torch.tensor([3, 2], dtype=torch.int32) // 2', [1, 1], 'int32'),
    ('torch.tensor([3, 2], dtype=torch.int32) / 2', [1.5, 1.0], 'float32'),
    ('torch.tensor([1, -2], dtype=torch.int32).abs()', [1, 2], 'int32'),
    ('torch.tensor([1, 2], dtype=torch.int32).float()', [1.0, 2.0], 'float32'),
    ('torch.tensor(np.array([1, 2], dtype=np.int32))', [1, 2], 'int32'),
    ('torch.from_numpy(np.array([1, 2], dtype=np.int32))', [1, 2], 'int32'),
    ('torch.searchsorted(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.5]), out_int32=True)', [2], 'int32'),
    ('torch.searchsorted(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.5]))', [2], 'int64'),
]


@pytest.mark.parametrize("code, value, dtype", CASES)
def test_int32_is_kept_and_promotes_as_pytorch(code, value, dtype):
    out = eval(code, {"torch": torch, "np": np})
    assert out.dtype.name == dtype and out.tolist() == value


def test_int32_promotion_table_and_names():
    assert torch.promote_types(torch.int32, torch.int64) is torch.int64
    assert torch.promote_types(torch.int32, torch.bool) is torch.int32
    assert torch.promote_types(torch.int32, torch.float32) is torch.float32
    assert torch.int is torch.int32 and torch.int32.itemsize == 4
    t = torch.tensor([1, 2], dtype=torch.int32)
    assert repr(t) == "tensor([1, 2], dtype=torch.int32)" and t.type() == "torch.IntTensor"
    assert t.element_size() == 4 and t.nbytes == 8   # the memory counters see 4-byte elements
