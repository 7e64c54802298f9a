"""Memory pictures (matplotlib, imported only when drawing, Agg backend).

``memory_figure(trace)``: live bytes over events, stacked by category, phases
shaded, the live-bytes peak marked with the op that caused it (the activation
peak, a different event, marked apart), memory_reserved above when
the trace has it. ``compare_figure(a, b)``: two traces' totals on one axis.
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

from engine.trace import safe_text
from replay.memory import CATEGORIES, Timeline, timeline
from replay.words import nbytes, unit_for

LABELS = {"parameter": "parameters", "optimizer": "optimizer state", "gradient": "gradients",
          "activation": "activations (saved for backward)", "input": "inputs", "other": "other (outputs, temporaries)"}

COLORS = {"parameter": "#1f77b4", "optimizer": "#9467bd", "gradient": "#2ca02c", "activation": "#ff7f0e",
          "input": "#8c564b", "other": "#bdbdbd"}
PHASE_COLORS = {"backward": "#fde0dc", "recompute": "#ead7f5", "optimizer": "#e0f2e9"}
PHASE_LABELS = {"backward": "backward phase", "recompute": "recompute (checkpointing)",
                "optimizer": "optimizer step"}
FORMATS = ("png", "svg", "pdf")
RESERVED_LABEL = "reserved (caching allocator model)"
RESERVED_COLOR = "#d62728"
PANEL_RATIO = 4
RESERVED_CHOICES = ("auto", "same", "panel", "off")


def _figure(width=10.0, height=5.0):
    from matplotlib.figure import Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg
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
                    bbox=dict(boxstyle="round,pad=0.25", fc="white", ec="#b71c1c", lw=0.6, alpha=0.9))
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


def compare_figure(a, b, labels=("A", "B"), *, device: str | None = None, title: str | None = None,
                   reserved: str = "auto"):
    """Two traces' memory on one axis: total (solid) and activations (dotted) for each, peaks marked.

    ``reserved``: "auto", "same", "panel" or "off" (NOTE [ Drawing reserved memory ]).
    """
    tls = [timeline(a, device), timeline(b, device)]
    labels = tuple(safe_text(str(x)) for x in labels)
    layout = _layout(reserved, tls)
    fig = _figure(10.0, 7.0 if layout == "panel" else 5.0)
    ax, rax = _axes(fig, layout)
    top = max(max(t.total + (t.reserved or [] if layout == "same" else []) + [1]) for t in tls)
    unit, div = unit_for(top)
    colors = ("#1565c0", "#e65100")
    for tl, lab, col in zip(tls, labels, colors):
        ax.step(tl.steps, [v / div for v in tl.total], where="post", color=col, lw=1.4,
                label=f"{lab}: allocated · peak {nbytes(tl.peak_bytes)}", gid=f"total:{lab}")
        ax.step(tl.steps, [v / div for v in tl.by_category["activation"]], where="post", color=col, lw=1.0,
                ls=":", label=f"{lab}: activations saved for backward", gid=f"activation:{lab}")
        if layout == "same" and tl.reserved is not None:
            ax.step(tl.steps, [v / div for v in tl.reserved], where="post", color=col, lw=1.2, ls="--",
                    label=f"{lab}: {RESERVED_LABEL}", gid=f"reserved:{lab}")
        if tl.peak_step >= 0:
            ax.plot([tl.peak_step], [tl.peak_bytes / div], marker="v", color=col, ms=8, ls="none")
    pa, pb = tls[0].peak_bytes, tls[1].peak_bytes
    if title is None:
        change = f" ({(pb - pa) / pa * 100:+.0f}% peak)" if pa else ""
        title = f"memory: {labels[0]} vs {labels[1]}{change}"
    res_div = div
    if rax is not None:
        res_div = _reserved_panel(rax, [(tl, f"{lab}: ", col) for tl, lab, col in zip(tls, labels, colors)], title)
    else:
        ax.set_title(title, fontsize=11)
    ax.set_ylim(0, top / div * 1.2)
    ax.set_xlabel("event (trace order; the traces may differ in length)")
    ax.set_ylabel(f"live memory ({unit})")
    ax.legend(loc="upper left", fontsize=8, framealpha=0.9)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.glassgrad_data = {"timelines": tls, "unit": unit, "divisor": div, "reserved_layout": layout,
                          "reserved_axes": rax if rax is not None else ax, "reserved_divisor": res_div}
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
