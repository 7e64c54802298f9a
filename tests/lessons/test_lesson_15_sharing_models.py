"""Lesson 15's hub and checkpoint claims hold on their own."""
import os
import zipfile

from lessons import _runner, get
from lessons import lesson_15_sharing_models as L


def test_every_check_passes_and_nothing_is_left_behind():
    lr = _runner.run(get(15))
    assert [c.text for r in lr.steps for c in r.checks if not c.ok] == []
    assert lr.steps[3].values["gone"]


def test_globals_in_reads_what_a_pickle_would_import(tmp_path):
    import pickle
    import collections
    names = L.globals_in(pickle.dumps(collections.OrderedDict(a=1), protocol=2))
    assert names == ["collections.OrderedDict"]
    assert L.globals_in(pickle.dumps(L.Runs(), protocol=2)) == ["__builtin__.print"]


def test_the_checkpoint_records_are_the_parameters(tmp_path):
    import engine as torch
    m = torch.nn.Linear(3, 5)
    p = tmp_path / "w.pt"
    torch.save(m.state_dict(), p)
    with zipfile.ZipFile(p) as z:
        data = {i.filename.split("/", 1)[1]: i.file_size for i in z.infolist() if "/data/" in i.filename}
    assert sorted(data.values()) == [5 * 4, 15 * 4]
