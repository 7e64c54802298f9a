"""engine.utils.data: datasets, samplers, default collate and DataLoader against PyTorch 2.13's behaviour."""
from __future__ import annotations

import collections
import subprocess
import sys

import numpy as np
import pytest

import engine
from engine import memory
from tests.checks import BACKENDS, assert_ran_on, on_backend
from engine.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                               SequentialSampler, Subset, SubsetRandomSampler, TensorDataset, default_collate,
                               random_split)


def desc(b):
    """A batch as plain data: tensors as ("T", dtype, shape, values); containers by type name."""
    if isinstance(b, engine.Tensor):
        return ("T", str(b.dtype).replace("torch.", ""), tuple(b.shape), b.tolist())
    if isinstance(b, dict):
        return {k: desc(v) for k, v in b.items()}
    if isinstance(b, tuple) and hasattr(b, "_fields"):
        return (type(b).__name__, [desc(v) for v in b])
    if isinstance(b, (list, tuple)):
        return (type(b).__name__, [desc(v) for v in b])
    return repr(b)


P = collections.namedtuple("P", "x y")

# Expected values printed by PyTorch 2.13 with the same calls:
#   print(desc(torch.utils.data.default_collate(samples)))   (desc as above, torch for engine)
COLLATE_CASES = [
    ([1.5, 2.0, -1.0], ("T", "float64", (3,), [1.5, 2.0, -1.0])),          # Python floats become float64
    ([1, 2, 3], ("T", "int64", (3,), [1, 2, 3])),
    ([True, False], ("T", "bool", (2,), [True, False])),
    ([(engine.tensor([1.0, 2.0]), 0), (engine.tensor([3.0, 4.0]), 1)],
     ("list", [("T", "float32", (2, 2), [[1.0, 2.0], [3.0, 4.0]]), ("T", "int64", (2,), [0, 1])])),
    ([[1, 2.5], [3, 4.5]], ("list", [("T", "int64", (2,), [1, 3]), ("T", "float64", (2,), [2.5, 4.5])])),
    ([{"img": engine.zeros(2, 2), "label": 3, "name": "a"}, {"img": engine.ones(2, 2), "label": 4, "name": "b"}],
     {"img": ("T", "float32", (2, 2, 2), [[[0.0, 0.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 1.0]]]),
      "label": ("T", "int64", (2,), [3, 4]), "name": ("list", ["'a'", "'b'"])}),
    ([P(1.0, engine.tensor(2)), P(3.0, engine.tensor(4))],
     ("P", [("T", "float64", (2,), [1.0, 3.0]), ("T", "int64", (2,), [2, 4])])),
    ([np.array([1, 2], dtype=np.float32), np.array([3, 4], dtype=np.float32)],
     ("T", "float32", (2, 2), [[1.0, 2.0], [3.0, 4.0]])),
    ([np.float32(1.5), np.float32(2.5)], ("T", "float32", (2,), [1.5, 2.5])),
    ([engine.tensor(3), engine.tensor(5)], ("T", "int64", (2,), [3, 5])),
]


@pytest.mark.parametrize("samples, expected", COLLATE_CASES, ids=[str(i) for i in range(len(COLLATE_CASES))])
def test_default_collate_matches_pytorch(samples, expected):
    assert desc(default_collate(samples)) == expected


def test_default_collate_errors_in_pytorchs_words():
    with pytest.raises(TypeError, match="^default_collate: batch must contain tensors, numpy arrays, numbers, "
                                        "dicts or lists; found <class 'object'>$"):
        default_collate([object()])
    with pytest.raises(RuntimeError, match="^each element in list of batch should be of equal size$"):
        default_collate([(1, 2), (3,)])
    with pytest.raises(RuntimeError, match=r"^stack expects each tensor to be equal size, but got \[2\] at entry 0 "
                                           r"and \[3\] at entry 1$"):
        default_collate([engine.zeros(2), engine.zeros(3)])


def _ds(n=10):
    return TensorDataset(engine.arange(float(n)), engine.arange(n))


@pytest.mark.parametrize("kw, n", [(dict(batch_size=3), 4), (dict(batch_size=3, drop_last=True), 3),
                                   (dict(batch_size=None), 10), (dict(batch_size=10), 1),
                                   (dict(batch_size=4, shuffle=True), 3)])
def test_len_matches_pytorch(kw, n):
    dl = DataLoader(_ds(), **kw)
    assert len(dl) == n == len(list(dl))


def test_batches_and_unbatched_samples():
    # PyTorch: next(iter(DataLoader(ds, batch_size=3))) is a list [x[0:3], y[0:3]]; batch_size=None gives
    # samples one by one (tuples converted to lists by default_convert)
    ds = _ds()
    assert desc(next(iter(DataLoader(ds, batch_size=3)))) == (
        "list", [("T", "float32", (3,), [0.0, 1.0, 2.0]), ("T", "int64", (3,), [0, 1, 2])])
    assert desc(next(iter(DataLoader(ds, batch_size=None)))) == (
        "list", [("T", "float32", (), 0.0), ("T", "int64", (), 0)])
    assert desc(list(DataLoader([1.0, 2.0, 3.0], batch_size=2))) == (
        "list", [("T", "float64", (2,), [1.0, 2.0]), ("T", "float64", (1,), [3.0])])
    assert desc(list(DataLoader([(1, 2), (3, 4)], batch_size=None))) == (
        "list", [("list", ["1", "2"]), ("list", ["3", "4"])])
    batches = list(DataLoader(ds, batch_size=4, drop_last=True))
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7]]


class Squares(Dataset):
    """A map-style dataset that builds each sample in __getitem__ (the generic collate path)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return engine.tensor([float(i), float(i * i)]), i % 2


def test_tensordataset_batches_equal_sample_by_sample_collation():
    # NOTE [ Batches are inputs ] 4: the one-gather path gives what stacking dataset[i] gives
    x, y = engine.randn(9, 3, 2), engine.randint(0, 5, (9,))
    ds = TensorDataset(x, y)
    sub = Subset(ds, [8, 1, 4, 4, 0, 7])
    for data in (ds, sub):
        fast = list(DataLoader(data, batch_size=4))
        slow = list(DataLoader(data, batch_size=4, collate_fn=lambda b: default_collate(b)))
        assert len(fast) == len(slow)
        for (fx, fy), (sx, sy) in zip(fast, slow):
            assert fx.dtype is sx.dtype is engine.float32 and fy.dtype is sy.dtype is engine.int64
            assert np.array_equal(fx.numpy(), sx.numpy()) and fy.tolist() == sy.tolist()


def test_batches_are_input_memory_and_freed_with_the_batch():
    def input_bytes():
        return memory.memory_stats().get("allocated_bytes.input.current", 0)

    ds = _ds(8)
    for data in (ds, Squares(8)):
        before = input_bytes()
        xb, yb = next(iter(DataLoader(data, batch_size=4)))
        assert xb._storage.category == yb._storage.category == "input"
        assert input_bytes() - before == xb.nbytes + yb.nbytes
        del xb, yb
        assert input_bytes() == before


def test_recorded_tensordataset_batch_is_two_input_allocations_and_no_ops():
    ds = _ds(8)
    it = iter(DataLoader(ds, batch_size=4))
    with engine.record() as tr:
        xb, yb = next(it)
    assert [(e["kind"], e.get("category"), e.get("bytes")) for e in tr.events] == [
        ("alloc", "input", 16), ("alloc", "input", 32)]


def test_shuffle_is_reproducible_under_manual_seed():
    ds = _ds(20)

    def epochs(loader, n=3):
        return [[int(v) for b in loader for v in b[1].tolist()] for _ in range(n)]

    engine.manual_seed(123)
    a = epochs(DataLoader(ds, batch_size=6, shuffle=True))
    engine.manual_seed(123)
    b = epochs(DataLoader(ds, batch_size=6, shuffle=True))
    assert a == b
    assert all(sorted(e) == list(range(20)) for e in a)         # each epoch is a permutation
    assert a[0] != a[1] != a[2] and a[0] != list(range(20))     # and the epochs differ
    engine.manual_seed(124)
    assert epochs(DataLoader(ds, batch_size=6, shuffle=True)) != a


def test_generator_argument_fixes_the_order_and_leaves_the_global_generator_alone():
    # PyTorch: with generator=g both the base seed and the permutation come from g; without one a pass
    # draws from the global generator even when not shuffling
    ds = _ds(12)
    state = engine.get_rng_state()
    orders = []
    for _ in range(2):
        g = engine.Generator().manual_seed(7)
        orders.append([v for b in DataLoader(ds, batch_size=5, shuffle=True, generator=g) for v in b[1].tolist()])
    assert orders[0] == orders[1] and sorted(orders[0]) == list(range(12))
    assert engine.get_rng_state().tolist() == state.tolist()
    iter(DataLoader(ds))
    assert engine.get_rng_state().tolist() != state.tolist()


def test_samplers():
    assert list(BatchSampler(SequentialSampler(range(7)), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    draws = list(RandomSampler(range(5), replacement=True, num_samples=40))
    assert len(draws) == 40 and set(draws) <= set(range(5))
    twelve = list(RandomSampler(range(5), num_samples=12))
    assert len(twelve) == 12 and sorted(twelve[:5]) == sorted(twelve[5:10]) == list(range(5))
    g = engine.Generator().manual_seed(3)
    assert sorted(SubsetRandomSampler([10, 20, 30], generator=g)) == [10, 20, 30]
    custom = DataLoader(_ds(), sampler=[9, 0, 5], batch_size=2)
    assert [b[1].tolist() for b in custom] == [[9, 0], [5]]
    by_batch = DataLoader(_ds(), batch_sampler=[[3, 1], [2]])
    assert [b[1].tolist() for b in by_batch] == [[3, 1], [2]] and len(by_batch) == 2


def test_collate_fn_and_map_style_dataset():
    dl = DataLoader(Squares(5), batch_size=2, collate_fn=lambda batch: [s[1] for s in batch])
    assert list(dl) == [[0, 1], [0, 1], [0]]
    xb, yb = next(iter(DataLoader(Squares(5), batch_size=3)))
    assert xb.tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 4.0]] and yb.tolist() == [0, 1, 0]


def test_iterable_dataset():
    class Count(IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    # PyTorch: [[0, 1, 2], [3, 4, 5], [6]], len 3; with drop_last len 2
    assert [b.tolist() for b in DataLoader(Count(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(DataLoader(Count(), batch_size=3)) == 3 and len(DataLoader(Count(), batch_size=3, drop_last=True)) == 2
    with pytest.raises(ValueError, match="^DataLoader with IterableDataset: expected unspecified shuffle option, "
                                         "but got shuffle=True$"):
        DataLoader(Count(), shuffle=True)


def test_random_split_lengths_and_fractions():
    # PyTorch 2.13: [len(s) for s in random_split(range(10), fractions)]
    for fracs, sizes in [([0.33, 0.33, 0.34], [4, 3, 3]), ([0.5, 0.5], [5, 5]), ([0.9, 0.1], [9, 1]),
                         ([0.25, 0.25, 0.25, 0.25], [3, 3, 2, 2])]:
        parts = random_split(range(10), fracs)
        assert [len(s) for s in parts] == sizes
        assert sorted(i for s in parts for i in s.indices) == list(range(10))
    assert [len(s) for s in random_split(range(3), [0.1, 0.9])] == [1, 2]
    with pytest.warns(UserWarning, match="^Length of split at index 1 is 0. This might result in an empty dataset.$"):
        assert [len(s) for s in random_split(range(2), [0.1, 0.1, 0.8])] == [1, 0, 1]
    engine.manual_seed(5)
    a = [s.indices for s in random_split(range(10), [7, 3])]
    engine.manual_seed(5)
    assert [s.indices for s in random_split(range(10), [7, 3])] == a
    g = engine.Generator().manual_seed(5)
    assert [s.indices for s in random_split(range(10), [7, 3], generator=g)] == a   # same seed, same stream
    train, _ = random_split(_ds(), [0.8, 0.2])
    assert train[0][1].item() == train.indices[0]


def test_concat_and_subset():
    both = _ds(3) + _ds(2)
    assert isinstance(both, ConcatDataset) and len(both) == 5 and both[3][1].item() == 0 and both[-1][1].item() == 1
    sub = Subset(_ds(), [4, 2])
    assert len(sub) == 2 and sub[1][1].item() == 2


def test_errors_in_pytorchs_words():
    ds = _ds()
    cases = [
        (dict(num_workers=-1), "num_workers option should be non-negative; use num_workers=0 to disable "
                               "multiprocessing."),
        (dict(sampler=SequentialSampler(ds), shuffle=True), "sampler option is mutually exclusive with shuffle"),
        (dict(batch_sampler=BatchSampler(SequentialSampler(ds), 2, False), batch_size=3),
         "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"),
        (dict(batch_size=None, drop_last=True), "batch_size=None option disables auto-batching and is mutually "
                                                "exclusive with drop_last"),
        (dict(batch_size=0), "batch_size should be a positive integer value, but got batch_size=0"),
        (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
    ]
    for kw, msg in cases:
        with pytest.raises(ValueError) as e:
            DataLoader(ds, **kw)
        assert str(e.value) == msg
    with pytest.raises(ValueError, match="^Sum of input lengths does not equal the length of the input dataset!$"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="^Fraction at index 0 is not between 0 and 1$"):
        random_split(range(10), [1.5, -0.5])
    with pytest.raises(AssertionError, match="^Size mismatch between tensors$"):
        TensorDataset(engine.zeros(3), engine.zeros(4))
    with pytest.raises(ValueError, match="^drop_last should be a boolean value, but got drop_last=1$"):
        BatchSampler(range(3), 2, 1)
    with pytest.raises(ValueError, match="^num_samples should be a positive integer value, but got num_samples=0$"):
        RandomSampler(range(3), num_samples=0)
    dl = DataLoader(ds, batch_size=2)
    with pytest.raises(ValueError, match="^batch_size attribute should not be set after DataLoader is initialized$"):
        dl.batch_size = 4
    with pytest.warns(UserWarning, match=r"^DataLoader\(num_workers=2\): glassgrad loads every batch in the main"):
        workers = DataLoader(ds, batch_size=2, num_workers=2, prefetch_factor=4, persistent_workers=True)
    assert [[t.tolist() for t in b] for b in workers] == [[t.tolist() for t in b] for b in DataLoader(ds, batch_size=2)]
    with pytest.raises(NotImplementedError, match="^Subclasses of Dataset should implement __getitem__.$"):
        Dataset()[0]


def test_reachable_after_bare_import():
    code = "import engine; print(engine.utils.data.DataLoader.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "DataLoader"


@pytest.mark.parametrize("backend", BACKENDS)
def test_loader_and_collate_on_other_backends(backend):
    with on_backend(backend):
        for data in (TensorDataset(engine.arange(10.0).reshape(5, 2), engine.arange(5)), Squares(5)):
            batches = list(DataLoader(data, batch_size=2))
            xb, yb = batches[1]
            assert_ran_on(backend, xb)
            assert xb._storage.category == "input"
            assert yb.tolist() == ([2, 3] if isinstance(data, TensorDataset) else [0, 1]) and len(batches) == 3


def test_weighted_random_sampler():
    from engine.utils.data import WeightedRandomSampler as W
    engine.manual_seed(0)
    a = list(W([0.1, 0.0, 0.9, 3.0], 200))
    engine.manual_seed(0)
    assert list(W([0.1, 0.0, 0.9, 3.0], 200)) == a                        # reproducible under manual_seed
    assert 1 not in a and a.count(3) > a.count(2) > a.count(0) and len(W([1, 2], 5)) == 5
    assert sorted(W([1.0, 1.0, 1.0], 3, replacement=False)) == [0, 1, 2]
    assert W([1, 2], 3).weights.dtype is engine.float64
    # PyTorch 2.13's messages (the last three from torch.multinomial)
    with pytest.raises(ValueError, match="^num_samples should be a positive integer value, but got num_samples=0$"):
        W([0.1, 0.9], 0)
    with pytest.raises(ValueError, match="^replacement should be a boolean value, but got replacement=1$"):
        W([0.1, 0.9], 3, 1)
    with pytest.raises(ValueError, match=r"^weights should be a 1d sequence but given weights have shape \(1, 1\)$"):
        W([[0.1]], 2)
    with pytest.raises(RuntimeError, match="^cannot sample n_sample > prob_dist.size\\(-1\\) samples without "
                                           "replacement$"):
        list(W([0.1, 0.9], 3, False))
    with pytest.raises(RuntimeError, match=r"^invalid multinomial distribution \(encountering probability entry "
                                           r"< 0\)$"):
        list(W([0.1, -0.9], 3))
    with pytest.raises(RuntimeError, match=r"^invalid multinomial distribution \(sum of probabilities <= 0\)$"):
        list(W([0.0, 0.0], 3))
