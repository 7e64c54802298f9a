"""Run a lesson: record it, compute facts, run checks; print it as text and write its pictures.

``python -m lessons.lesson_01_first_graph [--out DIR] [--no-pictures]`` ends here.
"""
from __future__ import annotations

import argparse
import os
import sys
import textwrap
import traceback
from dataclasses import dataclass, field
from types import SimpleNamespace

from replay.words import event_line

from ._format import Answer, CheckResult, Lesson, StepRun, fill


@dataclass
class LessonRun:
    lesson: Lesson
    trace: object
    steps: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.steps)

    def step_of(self, index: int) -> int:
        """Which step owns the event at ``index``."""
        owner = 0
        for i, s in enumerate(self.steps):
            if s.start <= index:
                owner = i
        return owner


def run(lesson: Lesson) -> LessonRun:
    """Record the whole lesson (one trace, a ``mark`` event per step) and run its checks."""
    import engine

    engine.manual_seed(lesson.seed)
    s = SimpleNamespace()
    runs = []
    with engine.record(lesson=lesson.name, title=lesson.title) as trace:
        for i, step in enumerate(lesson.steps):
            start = len(trace.events)
            trace.mark("step", step=i, title=step.title)
            values, error = {}, None
            try:
                values = dict(step.code(s) or {})
            except Exception as exc:  # the learner sees it; the step fails
                error = exc
            runs.append(StepRun(i, step, trace, start, len(trace.events), values, error))
    # stretch each step to the next step's mark (frees that happen between steps belong to the step before)
    for a, b in zip(runs, runs[1:]):
        a.end = b.start
    runs[-1].end = len(trace.events)
    for r in runs:
        _finish(r)
    return LessonRun(lesson, trace, runs)


def _finish(r: StepRun) -> None:
    if r.step.facts is not None and r.error is None:
        try:
            r.values.update(r.step.facts(r) or {})
        except Exception as exc:
            r.error = exc
    if r.error is not None:
        r.checks = [CheckResult("the step's code ran", False, _one_line(r.error))]
        return
    for q in r.step.questions:                       # NOTE [ Questions ] in _format.py
        try:
            ans = str(q.answer(r))
        except Exception as exc:
            r.checks.append(CheckResult(f"the run answers {q.text!r}", False, _one_line(exc)))
            continue
        if q.choices and ans not in q.choices:
            r.checks.append(CheckResult(f"the run answers {q.text!r} with one of its choices", False,
                                        f"{ans!r} is not one of {list(q.choices)}"))
            continue
        r.answers.append(Answer(q, ans, fill(q.why, r.values)))
    for c in r.step.checks:
        text = fill(c.text, r.values)
        try:
            out = c.fn(r)
            ok, detail = (out if isinstance(out, tuple) else (out, ""))
            r.checks.append(CheckResult(text, bool(ok), str(detail)))
        except Exception as exc:
            r.checks.append(CheckResult(text, False, _one_line(exc)))


def _one_line(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0] if msg else ''}"


# ---------------------------------------------------------------- text


def render_text(lr: LessonRun) -> str:
    L = lr.lesson
    out = [f"Lesson {L.number} · {L.title}", L.summary, ""]
    for r in lr.steps:
        out.append(f"== Step {r.index + 1}/{len(lr.steps)}: {r.step.title} ==")
        for a in r.answers:                             # asked before the code ran; answered by the run
            q = a.question
            out.append(f"Question: {q.text}" + (f"  ({' / '.join(q.choices)})" if q.choices else ""))
            out.append(f"  Answer: {a.answer}." + (f" {a.why}" if a.why else ""))
        if r.answers:
            out.append("")
        out.append(r.narrative().strip().replace("**", ""))  # plain text: no bold markers
        out.append("")
        out.append("Code (recorded):")
        out.append(textwrap.indent(r.step.source, "    ").rstrip())
        out.append("")
        if r.events:
            fi = r.focus_index()
            ev = lr.trace.events[fi]
            out.append(f"Look at: {focus_words(r.step.focus)}, event #{fi} ({event_line(ev)})")
        out.append("Checks:")
        for c in r.checks:
            mark = "✓" if c.ok else "✗"
            out.append(f"  {mark} {c.text}" + (f"  [{c.detail}]" if c.detail and not c.ok else ""))
        out.append("")
    n_ok = sum(c.ok for r in lr.steps for c in r.checks)
    n = sum(len(r.checks) for r in lr.steps)
    out.append(f"{n_ok} of {n} checks passed" + ("" if n_ok == n else " -- something is off, see ✗ above"))
    return "\n".join(out) + "\n"


def focus_words(f) -> str:
    """Where a step's Focus sends the app, in words ("the memory panel's holders view, by module, ...")."""
    if f.view is None or f.view == "chart":
        where = f"the {f.panel} panel"
    else:
        where = f"the {f.panel} panel's {f.view} view"
    extra = [f"by {f.group}" if f.group else "", f"{f.category} only" if f.category else "",
             f"window: {f.window}" if f.window else ""]
    return ", ".join([where, *[x for x in extra if x]])


def write_outputs(lr: LessonRun, outdir: str) -> list:
    """Write the trace and the lesson's pictures into ``outdir``; return lines saying what was written."""
    from ._pictures import write_pictures

    os.makedirs(outdir, exist_ok=True)
    lines = []
    tpath = os.path.join(outdir, "trace.jsonl")
    lr.trace.save(tpath)
    lines.append(f"trace: {tpath} (open it with: glassgrad view {tpath})")
    lines.extend(write_pictures(lr, outdir))
    return lines


def main_for(lesson: Lesson, argv=None) -> int:
    p = argparse.ArgumentParser(prog=f"python -m lessons.lesson_{lesson.name}",
                                description=f"Lesson {lesson.number}: {lesson.title} (as plain text).")
    p.add_argument("--out", default=os.path.join("glassgrad-out", f"lesson_{lesson.name}"),
                   help="folder for the trace and the pictures (default: %(default)s)")
    p.add_argument("--no-pictures", action="store_true", help="print the lesson only")
    a = p.parse_args(argv)
    return print_lesson(lesson, None if a.no_pictures else a.out)


def print_lesson(lesson: Lesson, outdir: str | None, stream=None) -> int:
    stream = stream or sys.stdout
    try:
        lr = run(lesson)
    except Exception:
        traceback.print_exc()
        return 1
    stream.write(render_text(lr))
    if outdir:
        try:
            for line in write_outputs(lr, outdir):
                stream.write(line + "\n")
        except OSError as exc:
            stream.write(f"could not write pictures to {outdir}: {exc}\n")
    stream.flush()
    return 0 if lr.ok else 1


def main(argv=None) -> int:
    """``python -m lessons._runner N|NAME [--out DIR] [--no-pictures]``: any lesson as text."""
    import lessons

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-"):
        print("usage: python -m lessons._runner N|NAME [--out DIR] [--no-pictures]", file=sys.stderr)
        return 2
    try:
        lesson = lessons.get(argv[0])
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    return main_for(lesson, argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
