"""The reading path of a lesson: each step's "Read the code:" paragraph names engine files and the
NOTEs in them that implement what the step shows; ``missing_notes`` says which of those do not exist."""
from __future__ import annotations

import os
import re

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_FILE = re.compile(r"`(engine/[\w/]+\.py)`")
_NOTE = re.compile(r"NOTE\s+\[\s+([^\]]+?)\s+\]")


def reading_path(narrative: str) -> list:
    """[(file, [NOTE titles])] a step's "Read the code" paragraph names; each NOTE belongs to the
    file named last before it."""
    text = narrative.split("Read the code:", 1)[-1] if "Read the code:" in narrative else ""
    text = re.sub(r"\s+", " ", text)
    out = []
    for m in re.finditer(f"{_FILE.pattern}|{_NOTE.pattern}", text):
        if m.group(1):
            out.append((m.group(1), []))
        elif out:
            out[-1][1].append(m.group(2))
    return out


def missing_notes(lesson) -> list:
    """Files or NOTEs the lesson's steps name that the engine does not have."""
    bad = []
    for step in lesson.steps:
        path = reading_path(step.narrative)
        if not path:
            bad.append(f"{step.title}: names no engine file")
        for f, notes in path:
            full = os.path.join(_ROOT, f)
            if not os.path.isfile(full):
                bad.append(f"{step.title}: no file {f}")
                continue
            with open(full, encoding="utf-8") as fh:
                src = re.sub(r"\s+", " ", fh.read())
            bad.extend(f"{step.title}: no NOTE [ {n} ] in {f}" for n in notes if f"NOTE [ {n} ]" not in src)
    return bad
