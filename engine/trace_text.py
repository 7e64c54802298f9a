"""Text from a trace, made safe to print: control characters and escape sequences become visible escapes.

NOTE [ Text from a trace ]
1. A trace is data from outside: an op name, a module path, a source file name, a mark's
   text may hold ESC (``\\x1b]0;title\\x07`` sets a terminal's title, ``\\x1b[31m`` its
   colour), other C0/C1 control characters, or bidirectional overrides that reorder
   what a reader sees.
2. :func:`safe_text` turns each such character into its visible escape (``\\x1b``,
   ``\\u202e``), so an escape sequence prints as plain text and does nothing. Newline and
   tab are kept (a compile stage's printout has lines); everything else printable is
   unchanged, so clean text costs one ``str.isprintable`` call.
3. :func:`safe_value` applies rule 2 to every string of a JSON value, keys included,
   and returns the same object when nothing changed (no copy for a clean event).
   Values nested deeper than :data:`MAX_DEPTH` are replaced by a note (a loaded trace
   never has them: NOTE [ Validating a trace field by field ] rule 3).
4. ``replay.model.TraceModel`` applies it to every event and to ``meta`` as it folds them
   in, once, so the app, the pictures and the lessons draw only safe text; commands
   that print a trace's strings without the model (``glassgrad view --text``) call
   :func:`safe_text` themselves.
5. :func:`plain_json` tells from a JSON text alone that no string in it needs rule 2 (no
   escape of such a character, none of them raw): ``Trace.load`` records it
   (``trace.plain_events``), and the model then skips walking those events. It may say
   "not plain" for plain text (an escaped backslash before ``u0``), never the reverse.
"""
from __future__ import annotations

import re

MAX_DEPTH = 40
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufff9-\ufffb]")


_UNSAFE_IN_JSON = re.compile(r"\\(?:u(?:00[01]|007f|008|009|061c|200[ef]|202|206|fff[9ab])|[bfr])"
                             "|[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufff9-\ufffb]",
                             re.IGNORECASE)


def plain_json(text: str) -> bool:
    """True when no string of the JSON ``text`` holds a character :func:`safe_text` escapes (rule 5)."""
    return _UNSAFE_IN_JSON.search(text) is None


def _escape(m) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def safe_text(s: str) -> str:
    """``s`` with control characters and bidirectional controls written as escapes (rule 2)."""
    if s.isprintable():
        return s
    return _UNSAFE.sub(_escape, s)


def safe_value(v, depth: int = 0):
    """``v`` (any JSON value) with every string made safe (rule 3); ``v`` itself when already safe."""
    t = type(v)
    if t is str:
        return v if v.isprintable() else _UNSAFE.sub(_escape, v)
    if t is dict:
        if depth >= MAX_DEPTH:
            return "<nested too deep>"
        out = None
        for i, (k, x) in enumerate(v.items()):
            tx = type(x)
            if tx is str:
                y = x if x.isprintable() else _UNSAFE.sub(_escape, x)
            elif tx is dict or tx is list:
                y = safe_value(x, depth + 1)
            else:
                y = x
            k2 = k if type(k) is not str or k.isprintable() else _UNSAFE.sub(_escape, k)
            if out is None and (y is not x or k2 is not k):
                out = dict(list(v.items())[:i])
            if out is not None:
                out[k2] = y
        return v if out is None else out
    if t is list:
        if depth >= MAX_DEPTH:
            return ["<nested too deep>"]
        out = None
        for i, x in enumerate(v):
            y = safe_value(x, depth + 1)
            if y is not x and out is None:
                out = list(v[:i])
            if out is not None:
                out.append(y)
        return v if out is None else out
    return v
