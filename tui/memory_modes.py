"""The memory panel's four views and the window they share.

NOTE [ Memory views ]
1. The memory panel shows one view at a time; ``m`` cycles: the chart (live bytes by
   category), lifetimes (one band per storage), holders (who holds the bytes: by module, op
   or line, or each module's forward/backward figures) and the allocator (segments and
   blocks). Each follows the cursor. ``m`` gives the view it shows the keyboard, so the
   view's own keys (the holders' ``b s c``, the lifetimes' ``↑ ↓ enter``) work at once; the
   cursor's keys belong to the screen and work from every panel.
2. A window is a range of events every view shows: ``a`` marks its start at the cursor, ``e``
   its end; ``W`` steps through the presets (each lesson step, forward, backward, each
   recompute, each optimizer step: replay/windows.py), from the outermost one that holds the
   cursor when no window is chosen; dragging across the chart (or the lifetimes' bands) with the
   mouse chooses one too; ``x`` clears it. The chart and the lifetimes draw only the window,
   the holders table reads the window's peak.
3. A trace about files keeps its records panel; the views return with the graph.
4. Enter on a holders row marks its storages' bands in the lifetimes view (``▸`` before the label,
   the largest selected), lights every graph node that made or saved one of them (NOTE [ Graph
   marks ] rule 5) and selects the node that made (or saved) the largest. Both marks stay until
   escape (``clear_holders_row``) or another row.
5. A lesson step's focus may open a view, a window, the holders table's rows and select a band
   or a row (NOTE [ Memory focus ] in lessons/_format.py): ``apply_focus``, one notice for all.
6. A view ``m`` showed names in the footer its own keys, then ``W`` (window) and ``m`` (next
   view): tui/window_keys.py binds the window's keys again on each, shown, each calling the
   screen's action. The chart adds none: a lesson focuses it often, and the footer's room at
   80 columns goes to the lesson's ``] Next step``.
"""
from __future__ import annotations

from replay.windows import clamp, presets

from .allocator_view import AllocatorView
from .holders_view import HoldersView
from .lifetimes_view import LifetimesView
from .memory_view import MemoryView

MODES = ("chart", "lifetimes", "holders", "allocator")
IDS = {"chart": "#memory", "lifetimes": "#lifetimes", "holders": "#holders", "allocator": "#allocator"}
TITLES = {
    "lifetimes": ["Lifetimes · one band per storage (m: next view)", "Lifetimes (m: next view)", "Lifetimes"],
    "holders": ["Holders · who holds the bytes (b s c; m: next view)", "Holders (m: next view)", "Holders"],
    "allocator": ["Allocator · segments and blocks (m: next view)", "Allocator (m: next view)", "Allocator"],
}


def compose(model):
    """The three views beside the chart, hidden until ``m`` shows one (rule 1)."""
    lv = LifetimesView(model, id="lifetimes")
    hv = HoldersView(model, lv.lifetimes, lv.work.status, id="holders")
    av = AllocatorView(model, id="allocator")
    for w, mode in ((lv, "lifetimes"), (hv, "holders"), (av, "allocator")):
        w.border_title = TITLES[mode][0]
        w.display = False
        yield w


def next_mode(mode: str) -> str:
    return MODES[(MODES.index(mode) + 1) % len(MODES)]


def show(screen, mode: str, say: bool = True) -> None:
    """Rule 1 (and 3): display the view ``mode`` names in the memory panel's place."""
    files = screen.query_one("#records").display
    for m, sel in IDS.items():
        screen.query_one(sel).display = (m == mode) and not files
    i = screen.model.clamp(screen.index)
    holders = screen.query_one(IDS["holders"])
    unmoved = holders.index == i
    push_index(screen, i)
    if mode == "holders" and unmoved:     # its index did not change, so it did not fill itself
        holders.refill()
    if mode != "chart":
        from .fit import fit_title
        w = screen.query_one(IDS[mode])
        w.border_title = fit_title(TITLES[mode], w.size.width or 200)
    if say:
        notice(screen, f"Memory panel: {mode} (m: next view)", 2)


def push_index(screen, i: int) -> None:
    """The cursor reaches the view on screen (the holders table rebuilds only when shown)."""
    for mode in ("lifetimes", "allocator", "holders"):
        w = screen.query_one(IDS[mode])
        if w.display or mode != "holders":
            w.index = i


def notice(screen, text: str, timeout: float) -> None:
    """One notice for the memory panel's latest key: it takes the place of those still shown
    (pressing ``m`` or ``W`` quickly stacks no toasts over the events). Keys that arrive
    together leave the last one's notice alone, posted after the screen's next refresh:
    Textual mounts a toast after the call that asked for it, so an earlier toast of the same
    burst was not yet there to be cleared, and stayed."""
    screen._notice_seq = seq = screen._notice_seq + 1

    def post() -> None:
        if seq == screen._notice_seq:           # a later key of the burst has its own notice
            screen.app.clear_notifications()
            screen.notify(text, timeout=timeout)

    screen.call_after_refresh(post)


def set_window(screen, window, say: bool = True) -> None:
    for sel in ("#lifetimes", "#holders", "#allocator"):
        screen.query_one(sel).window = window
    if window is not None and say:
        lo, hi = window
        peak_i, peak_b = screen.model.memory.peak_in(lo, hi)
        from replay.words import nbytes
        label, screen._preset_label = screen._preset_label, None
        name = f"Window: {label} (#{lo}–#{hi - 1})" if label else f"Window #{lo}–#{hi - 1}"
        notice(screen, f"{name}: peak {nbytes(peak_b)} at event #{peak_i}", 4)


def mark(screen, which: str, i: int):
    """Rule 2's ``a``/``e``: the window with one end moved to the cursor."""
    marks = screen._window_marks
    marks[0 if which == "start" else 1] = i
    lo, hi = marks
    if lo is None or hi is None:
        notice(screen, f"Window {which} at #{i}; now press {'e' if which == 'start' else 'a'} at the other end.", 4)
        return screen.window
    w = clamp(lo, hi, len(screen.model))
    return (w.lo, w.hi)


def show_holders_row(screen, storages: list) -> None:
    """Rule 4: a holders row's storages marked in the lifetimes view (its largest one selected), the
    graph nodes that made or saved them lit and the one that made (or saved) the largest selected."""
    lv = screen.query_one("#lifetimes", LifetimesView)
    lts = [lt for lt in lv.lifetimes() or () if lt.storage in set(storages)]
    if not lts:
        return
    biggest = max(lts, key=lambda lt: lt.bytes)
    lv.highlight = frozenset(storages)
    nodes = screen.model.nodes
    lit = {_maker_node(screen.model.events, lt) for lt in lts} | {n for lt in lts for _, n, _, _ in lt.saved_by}
    screen.query_one("#graph").lit = frozenset(n for n in lit if n in nodes)
    top = lv.shown_bands().top
    if biggest in top:
        lv.selected = top.index(biggest)
    node = None
    for lt in sorted(lts, key=lambda lt: -lt.bytes):
        node = _maker_node(screen.model.events, lt) or next(
            (n for _, n, _, _ in lt.saved_by if n in screen.model.nodes), None)
        if node in screen.model.nodes:
            break
    if node in screen.model.nodes:
        screen.selected = node
    from replay.words import nbytes
    screen.notify(f"{len(lts)} storage{'s' if len(lts) != 1 else ''}, {nbytes(sum(lt.bytes for lt in lts))}: "
                  "their bands are marked in the lifetimes view, the nodes that made or saved them lit in the graph"
                  + (", the node that made the largest selected" if node in screen.model.nodes else "")
                  + " (escape clears)", timeout=4)


def clear_holders_row(screen) -> None:
    """Rule 4: escape unmarks the chosen row's bands and nodes."""
    screen.query_one("#lifetimes", LifetimesView).highlight = frozenset()
    screen.query_one("#graph").lit = frozenset()


def _maker_node(events, lt):
    """The node whose op made the storage, or (made in backward) the node executing then; None for
    what no node made (an optimizer's state, an op without grad)."""
    if lt.made_at is None:
        return None
    ev = events[lt.made_at]
    node = ev.get("node")
    if ev.get("kind") == "op":
        return node.get("id") if isinstance(node, dict) else node
    if ev.get("kind") != "alloc" or ev.get("phase") != "backward":     # NOTE [ Storage lifetimes ] rule 5
        return None
    for j in range(lt.made_at, -1, -1):
        if events[j].get("kind") == "execute":
            return events[j].get("node")
    return None


def apply_focus(screen, run) -> None:
    """Rule 5: the view, window, holders rows and selection lesson step ``run``'s focus names."""
    f = run.step.focus
    w = run.focus_window()
    if w is not None or (screen.window is not None and screen.window == getattr(screen, "_focus_window", None)):
        screen._focus_window = w                 # None: the window an earlier step's focus chose goes
        screen.set_reactive(type(screen).window, w)
        set_window(screen, w, say=False)
        screen._memory_window()
    if f.view is None and w is None:
        return
    mode = f.view or screen.memory_mode
    if f.view is not None:
        screen.set_reactive(type(screen).memory_mode, f.view)
        show(screen, f.view, say=False)
    i = screen.model.clamp(screen.index)
    if f.view == "holders":
        hv = screen.query_one("#holders", HoldersView)
        hv.by, hv.sort_by, hv.category = f.group or "op", "total", f.category
        hv.refill()
        if hv.holder_rows and hv.by != "module phases":
            hv.move_cursor(row=max(range(len(hv.holder_rows)), key=lambda k: (hv.holder_rows[k].own, -k)))
    if f.view == "lifetimes":
        screen.call_after_refresh(select_largest, screen, (w or (run.start,))[0], i)
    window = "" if not screen.window else f", window #{screen.window[0]}–#{screen.window[1] - 1}"
    keys = "m: next view" + (", x: clear the window" if screen.window else "")
    notice(screen, f"Memory panel: {mode} at event #{i}{window} ({keys})", 4)


def select_largest(screen, lo: int, i: int) -> None:
    """Rule 5's band: the largest storage alive after event ``i`` among those made from event ``lo`` on."""
    lv = screen.query_one("#lifetimes", LifetimesView)
    top = lv.shown_bands().top
    mine = [lt for lt in top if lt.alive_at(i) and lt.start >= lo]
    if mine:
        lv.selected = top.index(min(mine, key=lambda lt: (-lt.bytes, lt.start)))


def next_preset(screen):
    """Rule 2's ``W``: the next preset window after the current one (wrapping); with none chosen, the
    first that holds the cursor (the outermost), else the first after it."""
    n = len(screen.model)
    cached = getattr(screen, "_presets", None)
    if cached is None or cached[0] != n:           # made once per length (a million events: a fraction of a second)
        ps = presets(screen.model.events)
        cached = screen._presets = (n, ps, [(p.lo, p.hi) for p in ps])
    _, ps, keys = cached
    if not ps:
        screen.notify("This trace has no steps, phases or regions to pick.", timeout=3)
        return screen.window
    cur = screen.window
    if cur in keys:
        k = (keys.index(cur) + 1) % len(ps)
    else:
        i = screen.model.clamp(screen.index)
        k = next((j for j, (lo, hi) in enumerate(keys) if lo <= i < hi),
                 next((j for j, (lo, _) in enumerate(keys) if lo > i), 0))
    screen._preset_label = ps[k].label          # set_window names it in its one notice
    return keys[k]


__all__ = ["MODES", "MemoryView", "apply_focus", "clear_holders_row", "compose", "mark", "next_mode", "next_preset", "push_index",
           "select_largest", "set_window", "show", "show_holders_row"]
