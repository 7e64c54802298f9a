"""The lesson format: a lesson is data (steps of narrative, code, focus and checks).

A lesson module ``lessons/lesson_NN_slug.py`` defines ``LESSON = Lesson(...)``.
See docs/lessons.md for a full example.

NOTE [ How a lesson runs ]
1. The runner seeds the generator (``engine.manual_seed(0)``) and records the
   whole lesson into ONE trace; before each step it adds a ``mark`` event
   (``text="step"``, ``step=i``, ``title=...``), so step i owns the events
   between its mark and the next one.
2. Each step's ``code`` is a plain function ``code(s)``; ``s`` is a namespace
   shared by all steps of one run (step 1 builds a model into ``s.model``,
   step 2 uses it). Its source is what the learner sees. It returns a dict
   of values (numbers, strings) or None.
3. ``facts(run)`` (optional) derives more values from the recorded events.
   Values and facts fill ``{placeholders}`` in the narrative and in check texts,
   so every number a learner reads comes from the run.
4. A check is ``Check(text, fn)``; ``fn(run)`` returns a bool, or
   ``(bool, detail)``. A check that raises counts as failed with the error.
5. ``Focus(panel, event)`` tells the app where to look: a panel name from
   PANELS and an event selector (see :func:`select`) evaluated over the
   step's own events; on the memory panel also a view and a window
   (NOTE [ Memory focus ]).

NOTE [ Questions ]
1. A step may ask ``Question``s. They are shown before the step's code runs;
   the answer is never typed into the lesson: ``answer(run)`` computes it from
   the recorded run, after the step, like a check.
2. With ``choices`` the answer must be one of them (the runner fails the step
   otherwise, so a lesson cannot ask a question its run does not answer).
3. As plain text a question is printed with its answer and the why after it.
   In the app the learner picks a choice (keys 1..9) or types an answer before
   the step plays; the app then says whether it was right and shows the why.

NOTE [ Memory focus ]
1. ``view`` (one of VIEWS) opens that view of the memory panel (NOTE [ Memory views ] in
   tui/memory_modes.py) and gives it the keyboard; None leaves the view the learner chose.
2. ``window`` names the events every memory view shows: "step" the step's own events, a
   phase ("forward", "backward", "recompute", "optimizer") its first run of events in the
   step (the whole step when the step has none). The event selector is then evaluated over
   the window, so "peak" is the window's peak. None: a window an earlier step's focus chose
   is cleared; a window the learner chose stays.
3. ``group`` and ``category`` set the holders table (``view="holders"``): rows by ``group``
   (one of GROUPS, "op" when None), sorted by total, counting only ``category``'s bytes
   (None: every category); its cursor goes to the row with the most bytes of its own.
4. With ``view="lifetimes"`` the band of the largest storage alive at the event, among those
   made inside the window (or the step), is selected.
"""
from __future__ import annotations

import ast
import inspect
import re
import string
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

from replay.memory import CATEGORIES, Replay, phase_runs, start_of

PANELS = ("graph", "memory", "log", "inspector", "narrative", "records")
VIEWS = ("chart", "lifetimes", "holders", "allocator")        # the memory panel's views
WINDOWS = ("step", "forward", "backward", "recompute", "optimizer")
GROUPS = ("module", "op", "line", "module phases")           # the holders table's rows


@dataclass(frozen=True)
class Focus:
    """Where the app moves for a step: ``panel`` (one of PANELS) and an event selector; on the
    memory panel also a ``view``, a ``window`` and the holders table's ``group`` and ``category``
    (NOTE [ Memory focus ])."""

    panel: str = "graph"
    event: str = "end"
    view: str | None = None
    window: str | None = None
    group: str | None = None
    category: str | None = None

    def __post_init__(self):
        if self.panel not in PANELS:
            raise ValueError(f"Focus panel must be one of {PANELS}, got {self.panel!r}")
        parse_selector(self.event)  # fail early on a typo
        for name, allowed in (("view", VIEWS), ("window", WINDOWS), ("group", GROUPS), ("category", CATEGORIES)):
            value = getattr(self, name)
            if value is not None and value not in allowed:
                raise ValueError(f"Focus {name} must be one of {tuple(allowed)}, got {value!r}")
        if (self.view is not None or self.window is not None) and self.panel != "memory":
            raise ValueError(f"Focus view and window belong to the memory panel, not {self.panel!r}")
        if (self.group is not None or self.category is not None) and self.view != "holders":
            raise ValueError("Focus group and category set the holders table: they need view='holders'")


@dataclass(frozen=True)
class Check:
    """A claim of the narrative (``text``, may hold {placeholders}) and ``fn(run) -> bool | (bool, str)``."""

    text: str
    fn: Callable[["StepRun"], Any]


@dataclass(frozen=True)
class Question:
    """Asked before a step runs (NOTE [ Questions ]). ``choices``: the answers offered (None: the
    learner types one); ``answer(run)`` computes the right one from the run, as a string;
    ``why`` (may hold {placeholders}) says why, after the run."""

    text: str
    answer: Callable[["StepRun"], Any]
    choices: tuple = ()
    why: str = ""

    def __post_init__(self):
        if self.choices and len(set(self.choices)) != len(self.choices):
            raise ValueError(f"a question's choices must differ: {self.choices}")


@dataclass(frozen=True)
class Step:
    title: str
    narrative: str                      # Markdown with {placeholders}
    code: Callable[[Any], Any]          # code(s) -> dict | None, runs under engine.record()
    focus: Focus = field(default_factory=Focus)
    checks: tuple = ()
    facts: Callable[["StepRun"], dict] | None = None
    questions: tuple = ()               # Question(...)s asked before the code runs

    @property
    def source(self) -> str:
        """The code as the learner reads it (the function's own source)."""
        try:
            return textwrap.dedent(inspect.getsource(self.code)).rstrip() + "\n"
        except (OSError, TypeError):
            return f"# source of {getattr(self.code, '__name__', 'code')} is not available\n"


@dataclass(frozen=True)
class Lesson:
    number: int
    slug: str
    title: str
    summary: str                        # one line
    steps: tuple
    seed: int = 0

    def __post_init__(self):
        if not re.fullmatch(r"[a-z0-9_]+", self.slug):
            raise ValueError(f"lesson slug must be lowercase words joined by _, got {self.slug!r}")
        if not self.steps:
            raise ValueError("a lesson needs at least one step")

    @property
    def name(self) -> str:
        return f"{self.number:02d}_{self.slug}"


@dataclass
class CheckResult:
    text: str
    ok: bool
    detail: str = ""


@dataclass
class Answer:
    """A question and what the run answered: ``answer`` (a string) and ``why`` (filled)."""

    question: Question
    answer: str
    why: str = ""


@dataclass
class StepRun:
    """One step as it ran: its events are ``trace.events[start:end]``."""

    index: int
    step: Step
    trace: Any
    start: int
    end: int
    values: dict = field(default_factory=dict)
    error: BaseException | None = None   # an exception the step's code did not catch
    checks: list = field(default_factory=list)
    answers: list = field(default_factory=list)   # Answer per question, filled after the step ran

    @property
    def events(self) -> list:
        return self.trace.events[self.start:self.end]

    def of_kind(self, *kinds) -> list:
        return [e for e in self.events if e["kind"] in kinds]

    def focus_index(self) -> int:
        """Absolute index (into ``trace.events``) of the event the step's focus selects, within its
        window when it names one (NOTE [ Memory focus ] 2)."""
        lo, hi = self.focus_window() or (self.start, self.end)
        return select(self.trace.events, self.step.focus.event, lo, hi)

    def focus_window(self) -> tuple | None:
        """The window the focus names as absolute event indices ``(lo, hi)``, or None (NOTE [ Memory focus ] 2)."""
        name = self.step.focus.window
        if name is None:
            return None
        if name != "step":
            for lo, hi, phase in phase_runs(self.trace.events[self.start:self.end]):
                if phase == name:
                    return self.start + lo, self.start + hi + 1
        return self.start, self.end

    def narrative(self) -> str:
        return fill(self.step.narrative, self.values)

    def peak(self, category: str | None = None) -> dict:
        """The step's live-bytes peak (``category=None``: where the app's ``p`` goes) or its
        activation peak (``"activation"``: ``P``), computed from the run as the app does:
        {"at": event index, "bytes", "phase", "live": bytes per category there}."""
        r = Replay(self.trace.events[:self.end], start_of(getattr(self.trace, "meta", None)))
        at, b = r.peak_in(self.start, self.end, category)
        return {"at": at, "bytes": b, "phase": self.trace.events[at].get("phase", "forward"),
                "live": r.live_at(at)}

    @property
    def ok(self) -> bool:
        return self.error is None and all(c.ok for c in self.checks)


class _Missing(dict):
    def __missing__(self, key):
        return "{" + key + "}"


def fill(text: str, values: dict) -> str:
    """Fill ``{name}`` / ``{name:,}`` placeholders; unknown names stay as written."""
    out = []
    for literal, name, spec, conv in _FMT.parse(text):
        out.append(literal)
        if name is None:
            continue
        if name not in values:
            out.append("{" + name + (("!" + conv) if conv else "") + ((":" + spec) if spec else "") + "}")
            continue
        v = values[name]
        if conv == "r":
            v = repr(v)
        out.append(format(v, spec or ""))
    return "".join(out)


_FMT = string.Formatter()


# ---------------------------------------------------------------- selectors
#
# NOTE [ Event selectors ]
# 1. "start" / "end": the step's first / last event.
# 2. "peak": the event after which live bytes (all categories) are highest
#    within the step (the first such event on ties): the live-bytes peak, where
#    the app's `p` goes. "activation peak": where the "activation" category alone
#    is highest (`P` in the app). NOTE [ Memory replay ] rule 6 in replay/memory.py.
# 3. "first <filter>" / "last <filter>" / a bare "<filter>" (= first).
# 4. <filter> is either a kind ("execute", "checkpoint_drop") optionally
#    followed by conditions, or conditions alone; conditions are
#    ``field == literal`` joined by ``and``; a field may be dotted
#    ("node.name", "output.shape"). Literals are Python literals.
#    e.g. "first execute name == 'SinBackward0'", "kind == 'checkpoint_drop'".
# 5. No match falls back to the step's last event (the app still moves).

_COND = re.compile(r"\s*([A-Za-z_][\w.]*)\s*==\s*('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\s]+)\s*")


def parse_selector(sel: str):
    """Parse a selector into (mode, kind, [(field_path, value)])."""
    s = sel.strip()
    if s in ("start", "end", "peak", "activation peak"):
        return (s, None, [])
    mode = "first"
    for m in ("first ", "last "):
        if s.startswith(m):
            mode, s = m.strip(), s[len(m):].strip()
            break
    kind = None
    words = s.split()
    if words and re.fullmatch(r"[a-z_]+", words[0]) and (len(words) == 1 or words[1] != "=="):
        kind, s = words[0], s[len(words[0]):].strip()
    conds = []
    if s:
        for part in re.split(r"\band\b", s):
            m = _COND.fullmatch(part)
            if not m:
                raise ValueError(f"bad event selector {sel!r}: cannot read condition {part.strip()!r}")
            try:
                value = ast.literal_eval(m.group(2))
            except (ValueError, SyntaxError):
                raise ValueError(f"bad event selector {sel!r}: {m.group(2)!r} is not a literal") from None
            conds.append((m.group(1).split("."), value))
    return (mode, kind, conds)


def _get(ev, path):
    for p in path:
        if not isinstance(ev, dict) or p not in ev:
            return _NOPE
        ev = ev[p]
    return ev


_NOPE = object()


def matches(ev: dict, kind, conds) -> bool:
    if kind is not None and ev.get("kind") != kind:
        return False
    return all(_get(ev, path) == value for path, value in conds)


def select(events: list, selector: str, start: int = 0, end: int | None = None) -> int:
    """Absolute index of the event ``selector`` picks within ``events[start:end]``."""
    end = len(events) if end is None else end
    if end <= start:
        return max(0, min(start, len(events) - 1))
    mode, kind, conds = parse_selector(selector)
    if mode == "start":
        return start
    if mode == "end":
        return end - 1
    if mode == "peak":
        return _peak(events, start, end)
    if mode == "activation peak":
        return _peak(events, start, end, "activation")
    rng = range(start, end) if mode == "first" else range(end - 1, start - 1, -1)
    for i in rng:
        if matches(events[i], kind, conds):
            return i
    return end - 1


def _peak(events, start, end, category=None):
    """The app's ``p`` (category None) or ``P`` ("activation") within events [start, end)."""
    return Replay(events[:end]).peak_in(start, end, category)[0]
