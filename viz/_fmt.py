"""Small formatting helpers shared by the pictures."""
from __future__ import annotations

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def nbytes(n: int | float) -> str:
    """``1536`` -> ``"1.5 KiB"``; exact bytes below 1 KiB."""
    n = float(n)
    if abs(n) < 1024:
        return f"{int(n)} B"
    for u in _UNITS[1:]:
        n /= 1024.0
        if abs(n) < 1024 or u == _UNITS[-1]:
            return f"{n:.1f} {u}"
    return f"{n:.1f} {_UNITS[-1]}"


def unit_for(max_bytes: float) -> tuple[str, int]:
    """The binary unit (name, divisor) that suits an axis reaching ``max_bytes``."""
    div = 1
    for u in _UNITS:
        if max_bytes < div * 1024 or u == _UNITS[-1]:
            return u, div
        div *= 1024
    return _UNITS[-1], div


def shape(s) -> str:
    return "(" + ", ".join(str(d) for d in s) + ("," if len(s) == 1 else "") + ")"


def kind(t: dict) -> str:
    """A tensor_info's dtype, then its device when that is not the CPU: ``float32 cuda:0``."""
    dev = t.get("device")
    return f"{t.get('dtype', '')} {dev}" if dev and dev != "cpu" else f"{t.get('dtype', '')}"


def where(file: str | None, line: int | None) -> str:
    if not file:
        return ""
    base = file.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{base}:{line}" if line is not None else base
