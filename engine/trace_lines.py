"""Reading a trace's JSON Lines: the header's checks, one JSON value per line, and the error they raise.

``engine.trace`` (``Trace.load``) and ``engine.trace_index`` (``Trace.open``) read with these,
so both make the checks of NOTE [ Trace validation ] (engine/trace.py) in the same words.
"""
from __future__ import annotations

import json
import json.decoder
import json.scanner
import os
import stat
import sys

from . import trace_schema as _schema
from .trace_text import safe_text

FORMAT = "glassgrad-trace"
VERSION = 1


class TraceFormatError(ValueError):
    """A trace file that is not a valid glassgrad trace (the message says where and why)."""


def open_regular(path):
    """The file at ``path`` opened for binary reading, or TraceFormatError when it is not a regular
    file (NOTE [ Trace validation ] rule 7); OSError as ``open`` raises it."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))   # a FIFO must not block (rule 7)
    try:
        mode = os.fstat(fd).st_mode
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = "Is a directory" if stat.S_ISDIR(mode) else \
            "not a regular file (a device, FIFO or socket); a trace is read only from a regular file"
        raise TraceFormatError(f"{safe_text(str(path))}: cannot read trace: {what}")
    return os.fdopen(fd, "rb")


def _read_header(line: str, maybe_truncated: bool, fail) -> tuple:
    """(meta, created) of a header line, checked as NOTE [ Trace validation ] rule 2 says."""
    header = _json_line(line, 1, maybe_truncated, fail)
    if not isinstance(header, dict):
        fail(1, "header is not a JSON object")
    if header.get("format") != FORMAT:
        fail(1, f"not a glassgrad trace: format is {header.get('format')!r}, expected {FORMAT!r}")
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        fail(1, f"bad format version {version!r}")
    if version > VERSION:
        fail(1, f"trace format version {version} is newer than this glassgrad reads "
                f"(version {VERSION}); upgrade glassgrad to open it")
    meta = header.get("meta", {})
    _schema.validate_meta(meta, fail)
    created = header.get("created")
    if created is not None and type(created) is not str:
        fail(1, "header 'created' must be a string")
    return meta, created


_scan_once = json.scanner.make_scanner(json.decoder.JSONDecoder())


def _scan_lines(lines):
    """Each line's one JSON value, or None when some line is anything but exactly one value
    with no surrounding whitespace (then per-line ``json.loads`` says what is wrong, and where).
    The scanner is what ``json.loads`` runs, without its per-call overhead."""
    scan = _scan_once
    out = []
    append = out.append
    try:
        for s in lines:
            value, end = scan(s, 0)
            if end != len(s):
                return None
            append(value)
    except (StopIteration, ValueError, RecursionError):
        return None
    return out


def _json_line(s, line, maybe_truncated, fail):
    if not s.strip():
        fail(line, "blank line (expected a JSON object)")
    try:
        return json.loads(s)
    except json.JSONDecodeError as e:
        if maybe_truncated:
            fail(line, f"truncated: the last line is incomplete ({e.msg}, column {e.colno})")
        fail(line, f"bad JSON: {e.msg} (column {e.colno})")
    except ValueError:       # NOTE [ Trace validation ] rule 4: int('9' * 5001) refuses to convert
        fail(line, f"an integer has more than {sys.get_int_max_str_digits()} digits; "
                   "a trace's numbers are ids, counts and byte sizes")
    except RecursionError:
        fail(line, "JSON nested too deep to read; a trace's values nest a few levels")
