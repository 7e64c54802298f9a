"""torch.serialization.add_safe_globals / safe_globals: what the program trusts, and nothing else
(NOTE [ Safe globals ])."""
import collections
import io
import pickle
import zipfile

import pytest

import engine as torch


class Config:
    def __init__(self, width=4):
        self.width = width


def _file_with(obj):
    """A checkpoint whose data.pkl is Python's own pickle of ``obj`` (as torch.save writes a class)."""
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buf)
    buf.seek(0)
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = pickle.dumps(obj, protocol=2) if info.filename.endswith("data.pkl") else src.read(info)
            dst.writestr(info, data)
    out.seek(0)
    return out


def test_a_class_is_refused_unless_the_program_trusts_it():
    with pytest.raises(pickle.UnpicklingError, match=r"add_safe_globals\(\[\.\.\.\]\)"):
        torch.load(_file_with(Config(7)))
    with torch.serialization.safe_globals([Config]):
        c = torch.load(_file_with(Config(7)))
    assert type(c) is Config and c.width == 7
    with pytest.raises(pickle.UnpicklingError):               # trusted only inside the block
        torch.load(_file_with(Config(7)))


def test_add_safe_globals_lasts_and_a_trusted_callable_may_be_called():
    torch.serialization.clear_safe_globals()
    try:
        torch.serialization.add_safe_globals([collections.namedtuple, Config])
        assert Config in torch.serialization.get_safe_globals()
        assert torch.load(_file_with({"c": Config(2)}))["c"].width == 2
    finally:
        torch.serialization.clear_safe_globals()
    assert torch.serialization.get_safe_globals() == []


def test_an_untrusted_callable_is_still_refused_with_nothing_run():
    class Runs:
        def __reduce__(self):
            return (print, ("ran",))
    with torch.serialization.safe_globals([Config]):
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL __builtin__.print"):
            torch.load(_file_with(Runs()))
