"""Memory pictures (matplotlib, imported only when drawing, Agg backend).

``memory_figure(trace)``: live bytes over events, stacked by category, phases
shaded, the live-bytes peak marked with the op that caused it (the activation
peak, a different event, marked apart), memory_reserved above when
the trace has it. ``compare_figure(a, b)``: two traces, one panel each, stacked
by category on the runs' aligned timeline (NOTE [ Two runs ] in replay/diff.py).
Each figure carries its data as ``fig.glassgrad_data`` (Timeline objects).

NOTE [ Drawing reserved memory ]
1. ``reserved`` is the caching allocator model's figure from the trace's events
   (NOTE [ Memory replay ] rule 3, in replay/memory.py); a trace without it draws no reserved line.
2. For small models it dwarfs the live bytes (the first 1 KiB tensor reserves a
   2 MiB segment), and on one linear axis the stacked categories would shrink to a
   sliver. So with ``reserved="auto"`` a reserved peak above ``PANEL_RATIO`` times
   the live peak gets its own panel above the chart: reserved and the live total
   on one scale starting at 0 (how far apart they are is the lesson), a note
   saying how many times larger, and the stacked chart below on its own scale.
   Otherwise it is a dashed line on the chart itself.
3. ``reserved="same"`` forces the one axis, ``"panel"`` the panel, ``"off"`` no
   reserved at all. No log scale: stacked areas on a log axis misstate shares.
"""
from __future__ import annotations

import os
from dataclasses import replace

from engine.trace import safe_text
from replay.diff import align, step_name
from replay.memory import CATEGORIES, Timeline, events_of, timeline
from replay.words import nbytes, unit_for

LABELS = {"parameter": "parameters", "optimizer": "optimizer state", "gradient": "gradients",
          "activation": "activations (saved for backward)", "input": "inputs", "other": "other (outputs, temporaries)"}

# the app's category colours (tui/glassgrad.tcss ``memory--*``): a picture and the app say the same
COLORS = {"parameter": "#4e79a7", "optimizer": "#b07aa1", "gradient": "#59a14f", "activation": "#f28e2b",
          "input": "#9c755f", "other": "#9c9c9c"}
PHASE_COLORS = {"backward": "#fde0dc", "recompute": "#ead7f5", "optimizer": "#e0f2e9"}
PHASE_LABELS = {"backward": "backward phase", "recompute": "recompute (checkpointing)",
                "optimizer": "optimizer step"}
FORMATS = ("png", "svg", "pdf")
RESERVED_LABEL = "reserved (caching allocator model)"
RESERVED_COLOR = "#d62728"
PANEL_RATIO = 4
RESERVED_CHOICES = ("auto", "same", "panel", "off")


def _figure(width=10.0, height=5.0):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _shade_phases(ax, tl: Timeline, names: bool = True):
    """Shade backward/recompute/optimizer spans; name every span wide enough to hold its name."""
    done = set()
    n = max(len(tl.steps), 1)
    for a, b, ph in tl.phases:
        if names and (b - a + 1) / n >= 0.06:
            ax.text((a + b) / 2, 0.985, ph, transform=ax.get_xaxis_transform(), ha="center", va="top",
                    fontsize=8, color="#616161", gid=f"phase:{ph}")
        color = PHASE_COLORS.get(ph)
        if color is None:
            continue
        ax.axvspan(a - 0.5, b + 0.5, color=color, zorder=0, lw=0,
                   label=PHASE_LABELS[ph] if names and ph not in done else None)
        done.add(ph)


def _layout(reserved: str, tls) -> str:
    """NOTE [ Drawing reserved memory ]: "same", "panel" or "off" for these timelines."""
    if reserved not in RESERVED_CHOICES:
        raise ValueError(f"reserved must be one of {', '.join(map(repr, RESERVED_CHOICES))}, not {reserved!r}")
    if reserved == "off" or all(t.reserved is None for t in tls):
        return "off"
    if reserved != "auto":
        return reserved
    live = max(max(t.total + [1]) for t in tls)
    res = max(max(t.reserved or [0]) for t in tls)
    return "panel" if res > PANEL_RATIO * live else "same"


def _axes(fig, layout):
    """(chart axis, reserved panel axis or None); the chart is always ``fig.axes[0]``."""
    if layout != "panel":
        return fig.add_subplot(1, 1, 1), None
    gs = fig.add_gridspec(2, 1, height_ratios=[1, 2.3])   # tight_layout sets the spacing
    ax = fig.add_subplot(gs[1])
    rax = fig.add_subplot(gs[0], sharex=ax)
    rax.tick_params(labelbottom=False)
    return ax, rax


def _reserved_panel(rax, rows, title):
    """NOTE [ Drawing reserved memory ] rule 2: reserved and live totals on one scale from 0.

    ``rows``: [(timeline, label prefix, color of its live total)]; returns the divisor.
    """
    res_max = max(max(t.reserved or [0]) for t, _, _ in rows)
    live_max = max(max(t.total + [1]) for t, _, _ in rows)
    unit, div = unit_for(max(res_max, 1))
    if len(rows) == 1:
        _shade_phases(rax, rows[0][0], names=False)
    for tl, lab, col in rows:
        if tl.reserved is not None:
            rax.step(tl.steps, [v / div for v in tl.reserved], where="post", color=RESERVED_COLOR if not lab else col,
                     lw=1.4, ls="--", label=f"{lab}{RESERVED_LABEL}", gid=f"reserved{':' + lab[:-2] if lab else ''}")
        rax.step(tl.steps, [v / div for v in tl.total], where="post", color=col, lw=1.0,
                 label=f"{lab}allocated (total), same scale", gid=f"total{':' + lab[:-2] if lab else ''}:panel")
    rax.set_ylim(0, res_max / div * 1.45)
    rax.set_ylabel(f"reserved ({unit})")
    ratio = res_max / live_max
    times = f"{ratio:.1f}" if ratio < 10 else f"{ratio:,.0f}"
    rax.text(0.01, 0.95, f"reserved reaches {nbytes(res_max)}, {times}× the live peak "
                         f"({nbytes(live_max)}): the allocator takes whole segments from the device\n"
                         "and keeps freed blocks cached for reuse. Below: live bytes on their own scale.",
             transform=rax.transAxes, ha="left", va="top", fontsize=8, color="#424242", gid="reserved-note")
    rax.legend(loc="center right", bbox_to_anchor=(1.0, 0.38), fontsize=8, framealpha=0.9)
    rax.grid(axis="y", alpha=0.3)
    rax.set_title(title, fontsize=11)
    return div


def memory_figure(trace, *, step: int | None = None, device: str | None = None, title: str | None = None,
                  reserved: str = "auto"):
    """The memory timeline of ``trace`` (a vertical line marks ``step`` when given).

    ``reserved``: "auto", "same", "panel" or "off" (NOTE [ Drawing reserved memory ]).
    """
    tl = timeline(trace, device)
    layout = _layout(reserved, [tl])
    fig = _figure(10.0, 7.4 if layout == "panel" else 5.6)
    ax, rax = _axes(fig, layout)
    top = max(tl.total + (tl.reserved if layout == "same" else []) + [1])
    unit, div = unit_for(top)
    x = tl.steps
    _shade_phases(ax, tl)
    lower = [0.0] * len(x)
    plotted = {}
    for c in CATEGORIES:
        vals = tl.by_category[c]
        if not any(vals):
            continue
        upper = [lo + v / div for lo, v in zip(lower, vals)]
        ax.fill_between(x, lower, upper, step="post", color=COLORS[c], alpha=0.85, lw=0, label=LABELS[c], gid=c)
        plotted[c] = upper
        lower = upper
    if x:
        ax.step(x, [v / div for v in tl.total], where="post", color="#212121", lw=1.0, label="allocated (total)",
                gid="total")
    res_div = div
    if layout == "same":
        ax.step(x, [v / div for v in tl.reserved], where="post", color=RESERVED_COLOR, lw=1.2, ls="--",
                label=RESERVED_LABEL, gid="reserved")
    if tl.peak_step >= 0:
        py = tl.peak_bytes / div
        ax.plot([tl.peak_step], [py], marker="v", color="#b71c1c", ms=9, zorder=5, gid="peak", ls="none")
        text = f"live-bytes peak {nbytes(tl.peak_bytes)} at event {tl.peak_step}"
        if tl.peak_cause:
            text += f"\ncaused by {tl.peak_cause}"
        right = tl.peak_step > 0.6 * max(len(x) - 1, 1)
        ax.annotate(text, (tl.peak_step, py), xytext=(-10 if right else 10, 6), textcoords="offset points",
                    ha="right" if right else "left", va="bottom", fontsize=9, color="#b71c1c",
                    bbox={"boxstyle": "round,pad=0.25", "fc": "white", "ec": "#b71c1c", "lw": 0.6, "alpha": 0.9})
    if tl.act_peak_step >= 0 and tl.act_peak_bytes and "activation" in plotted:
        # the activation peak (NOTE [ Memory replay ] rule 6): the top of the activation band there
        ay = plotted["activation"][tl.act_peak_step]
        ax.plot([tl.act_peak_step], [ay], marker="^", color="#e65100", ms=8, zorder=5, gid="act_peak", ls="none",
                mfc="white", mew=1.5)
        ax.annotate(f"activation peak {nbytes(tl.act_peak_bytes)}", (tl.act_peak_step, ay), xytext=(0, -14),
                    textcoords="offset points", ha="center", va="top", fontsize=8, color="#e65100")
    if step is not None and x:
        s = min(max(step if step >= 0 else len(x) + step, 0), len(x) - 1)
        ax.axvline(s, color="#37474f", lw=1.2, ls=":", gid="step")
        ax.annotate(f"step {s}: {nbytes(tl.total[s])}", (s, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(3, -12), textcoords="offset points", fontsize=8, color="#37474f")
    ax.set_ylim(0, top / div * 1.3)
    ax.set_xlim(-0.5, max(len(x) - 0.5, 0.5))
    ax.set_xlabel("event (trace order)")
    ax.set_ylabel(f"live / reserved memory ({unit})" if layout == "same" else f"live memory ({unit})")
    base = sum(tl.baseline.values())
    sub = f" · {nbytes(base)} already allocated when recording began" if base else ""
    title = title or f"memory timeline on {safe_text(tl.device)} · peak {nbytes(tl.peak_bytes)}{sub}"
    if rax is not None:
        res_div = _reserved_panel(rax, [(tl, "", "#212121")], title)
    else:
        ax.set_title(title, fontsize=11)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=8, ncol=4, frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.glassgrad_data = {"timeline": tl, "unit": unit, "divisor": div, "stacked": plotted,
                          "reserved_layout": layout, "reserved_axes": rax if rax is not None else ax,
                          "reserved_divisor": res_div}
    return fig


def _aligned(tl: Timeline, idx: list) -> Timeline:
    """``tl`` read at the events ``idx``, one per aligned position (NOTE [ Two runs ] rule 3 in replay/diff.py)."""
    def at(v):
        return [v[i] if i < len(v) else 0 for i in idx]
    return replace(tl, steps=list(range(len(idx))), by_category={c: at(v) for c, v in tl.by_category.items()},
                   total=at(tl.total), reserved=None if tl.reserved is None else at(tl.reserved), phases=[])


def _shade_steps(ax, al, side: int, names: bool):
    """The aligned steps on one run's panel: its backward and optimizer steps shaded as the timeline
    shades phases, a step this run lacks hatched (it waits on its last event there)."""
    done = set()
    for (ra, rb, key), u0 in zip(al.segments, al.starts):
        n = max(_span(ra), _span(rb), 1)
        ph = key[1]
        if (ra, rb)[side] is None:
            ax.axvspan(u0 - 0.5, u0 + n - 0.5, facecolor="none", edgecolor="#9e9e9e", hatch="///", lw=0, zorder=0,
                       label=None if "held" in done else "a step this run lacks (it waits)", gid="held")
            done.add("held")
        elif ph in PHASE_COLORS:
            ax.axvspan(u0 - 0.5, u0 + n - 0.5, color=PHASE_COLORS[ph], zorder=0, lw=0,
                       label=None if ph in done else PHASE_LABELS[ph])
            done.add(ph)
        if names and n / max(al.length, 1) >= 0.08:
            ax.text(u0 + (n - 1) / 2, 0.985, step_name(key), transform=ax.get_xaxis_transform(), ha="center",
                    va="top", fontsize=7, color="#616161", gid=f"step:{step_name(key)}")


def _span(run) -> int:
    return 0 if run is None else run[1] - run[0] + 1


def _run_panel(ax, al, side: int, tl: Timeline, row: Timeline, other: Timeline, lab: str, div: float,
               layout: str, peaks: dict) -> dict:
    """One run's panel of ``compare_figure``: ``row`` (its timeline at the aligned positions) stacked by
    category, its total and ``other``'s, its steps shaded, its peaks marked (added to ``peaks`` as
    (aligned position, bytes) under "A" or "B", and "A:activation"...); returns {category: upper edge
    of its band}. Artists' gids name the run by its label (``total:a.jsonl``)."""
    x = row.steps
    _shade_steps(ax, al, side, names=side == 0)
    for lo, hi, ph in tl.phases:        # checkpointing's recompute, inside this run's backward steps
        if ph == "recompute":
            ax.axvspan(al.position(side, lo) - 0.5, al.position(side, hi) + 0.5, color=PHASE_COLORS[ph],
                       zorder=0.5, lw=0, label=PHASE_LABELS[ph], gid="recompute")
    lower, plotted = [0.0] * len(x), {}
    for c in CATEGORIES:
        vals = row.by_category[c]
        if not any(vals):
            continue
        upper = [lo + v / div for lo, v in zip(lower, vals)]
        ax.fill_between(x, lower, upper, step="post", color=COLORS[c], alpha=0.85, lw=0, label=LABELS[c],
                        gid=f"{c}:{lab}")
        plotted[c] = upper
        lower = upper
    if not x:
        return plotted
    ax.step(x, [v / div for v in row.total], where="post", color="#212121", lw=1.0, label="allocated (total)",
            gid=f"total:{lab}")
    ax.step(x, [v / div for v in other.total], where="post", color="#212121", lw=0.8, ls="--", alpha=0.6,
            label="the other run's total", gid=f"other:{lab}")
    if layout == "same" and row.reserved is not None:
        ax.step(x, [v / div for v in row.reserved], where="post", color=RESERVED_COLOR, lw=1.2, ls="--",
                label=RESERVED_LABEL, gid=f"reserved:{lab}")
    if tl.peak_step >= 0:
        px, py = al.position(side, tl.peak_step), tl.peak_bytes / div
        peaks["AB"[side]] = (px, tl.peak_bytes)
        ax.plot([px], [py], marker="v", color="#b71c1c", ms=9, zorder=5, ls="none", gid=f"peak:{lab}")
        right = px > 0.6 * max(len(x) - 1, 1)
        ax.annotate(f"peak {nbytes(tl.peak_bytes)} (event {tl.peak_step})", (px, py),
                    xytext=(-10 if right else 10, 4), textcoords="offset points", ha="right" if right else "left",
                    va="bottom", fontsize=8, color="#b71c1c",
                    bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "#b71c1c", "lw": 0.6, "alpha": 0.9})
    if tl.act_peak_step >= 0 and tl.act_peak_bytes and "activation" in plotted:
        qx = al.position(side, tl.act_peak_step)         # on top of the activation band there
        peaks["AB"[side] + ":activation"] = (qx, tl.act_peak_bytes)
        qy = plotted["activation"][qx]
        ax.plot([qx], [qy], marker="^", color="#e65100", ms=8, zorder=5, ls="none", mfc="white", mew=1.5,
                gid=f"act_peak:{lab}")
        ax.annotate(f"activation peak {nbytes(tl.act_peak_bytes)}", (qx, qy), xytext=(0, -14),
                    textcoords="offset points", ha="center", va="top", fontsize=8, color="#e65100",
                    bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85})
    return plotted


def compare_figure(a, b, labels=("A", "B"), *, device: str | None = None, title: str | None = None,
                   reserved: str = "auto"):
    """Two traces' memory, one panel each, on the runs' aligned timeline (NOTE [ Two runs ] in replay/diff.py).

    Each panel stacks its run's live bytes by category as the memory timeline does, with the
    other run's total as a thin dashed line and its own live-bytes peak marked; both panels
    share the x axis (aligned positions: both runs start and end each step together, as the
    app's diff charts do) and the y scale. ``reserved``: "auto", "same", "panel" or "off"
    (NOTE [ Drawing reserved memory ]; "panel" puts both runs' reserved above the two panels).
    """
    al = align(events_of(a), events_of(b), a, b)
    tls = [timeline(a, device), timeline(b, device)]
    idx = [[al.at(u)[s] for u in range(al.length)] for s in (0, 1)]
    rows = [_aligned(tl, ix) for tl, ix in zip(tls, idx)]
    labels = tuple(safe_text(str(x)) for x in labels)
    layout = _layout(reserved, tls)
    fig = _figure(10.0, 9.6 if layout == "panel" else 7.6)
    gs = fig.add_gridspec(3 if layout == "panel" else 2, 1, height_ratios=[1.2, 2, 2] if layout == "panel" else [1, 1])
    ax_a = fig.add_subplot(gs[-2])
    ax_b = fig.add_subplot(gs[-1], sharex=ax_a, sharey=ax_a)
    rax = fig.add_subplot(gs[0], sharex=ax_a) if layout == "panel" else None
    if rax is not None:
        rax.tick_params(labelbottom=False)
    top = max(max(t.total + (t.reserved or [] if layout == "same" else []) + [1]) for t in tls)
    unit, div = unit_for(top)
    x = list(range(al.length))
    stacked, peaks = {}, {}
    for side, (ax, tl, row, lab) in enumerate(zip((ax_a, ax_b), tls, rows, labels)):
        stacked["AB"[side]] = _run_panel(ax, al, side, tl, row, rows[1 - side], lab, div, layout, peaks)
        ax.set_title(f"{'AB'[side]} · {lab} · {len(tl.total):,} events · peak {nbytes(tl.peak_bytes)}"
                     f" · activation peak {nbytes(tl.act_peak_bytes)}", fontsize=10, loc="left")
        ax.set_ylabel(f"live memory ({unit})")
        ax.grid(axis="y", alpha=0.3)
    ax_a.tick_params(labelbottom=False)
    ax_a.set_ylim(0, top / div * 1.25)
    ax_a.set_xlim(-0.5, max(len(x) - 0.5, 0.5))
    ax_b.set_xlabel("aligned position: both runs' steps matched (forward, backward, optimizer of each iteration)")
    pa, pb = tls[0].peak_bytes, tls[1].peak_bytes
    if title is None:
        qa, qb = tls[0].act_peak_bytes, tls[1].act_peak_bytes
        change = ", ".join(f"{(new - old) / old * 100:+.0f}% {what}" for old, new, what in
                           ((pa, pb, "peak"), (qa, qb, "activation peak")) if old)
        title = f"memory: {labels[0]} vs {labels[1]}" + (f" ({change})" if change else "")
    res_div = div
    if rax is not None:
        res_div = _reserved_panel(rax, [(r, f"{lab}: ", col) for r, lab, col in
                                        zip(rows, labels, ("#1565c0", "#e65100"))], "reserved, both runs")
    fig.suptitle(title, fontsize=11)
    seen = {}
    for ax in (ax_a, ax_b):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    if seen:
        ax_b.legend(list(seen.values()), list(seen), loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8,
                    ncol=4, frameon=False)
    fig.tight_layout()
    fig.glassgrad_data = {"timelines": tls, "aligned": rows, "alignment": al, "events": idx, "unit": unit,
                          "divisor": div, "stacked": stacked, "peaks": peaks, "axes": (ax_a, ax_b),
                          "title": title, "reserved_layout": layout, "reserved_axes": rax, "reserved_divisor": res_div}
    return fig


def save_figure(fig, path) -> str:
    """Write a figure to ``path`` (.png, .svg or .pdf)."""
    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"cannot tell the image format of {path!r}: use a .png, .svg or .pdf file name")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise FileNotFoundError(f"the folder {d!r} for {path!r} does not exist")
    fig.savefig(path, format=fmt)
    return path
