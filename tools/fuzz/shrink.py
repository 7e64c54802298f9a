"""Shrinking: edit a failing case's choice sequence while it keeps failing the same way.

Every edit makes the sequence smaller in shortlex order (shorter, or as long with a lower value
somewhere), so shrinking always ends. Because generators order their options simplest first, a
lower draw means a smaller size, fewer ops, the plainer of two forms. Passes, repeated while one
of them helps: delete a span of 1-8 draws, set a draw to 0, halve it, lower it by one.
"""
from __future__ import annotations

import time

from .compare import compare, primary
from .generate import replay
from .runner import CaseTimeout, run


def signature(category, t, e, findings, tags):
    """What must stay the same while shrinking: the category, the first op, the exception types,
    and for a grad_fn difference the two names."""
    def et(r):
        err = r["fwd_error"] or r["bwd_error"]
        return None if err is None else err["type"]
    detail = ""
    if category == "different grad_fn name":
        detail = next(d for c, d in findings if c == category).split(":", 1)[1]
    return (category, tags[0] if tags else "", et(t), et(e), detail)


def evaluate(program):
    """(torch result, engine result, signature) of ``program``; signature None when they agree."""
    try:
        t = run(program, "torch")
        e = run(program, "engine")
    except CaseTimeout:
        return None, None, None
    found = compare(t, e)
    cat = primary(found)
    return t, e, (None if cat is None else signature(cat, t, e, found, program.tags))


def shrink(family, choices, target_sig, budget_runs=150, budget_s=20.0):
    """The smallest (program, choices, torch result, engine result) with ``target_sig``."""
    best = list(choices)
    best_prog, _ = replay(family, best)
    best_t = best_e = None
    runs, t0 = 0, time.monotonic()
    seen = set()

    def attempt(cand):
        nonlocal best, best_prog, best_t, best_e, runs
        prog, drawn = replay(family, cand)
        key = tuple(drawn)
        if key in seen or (len(drawn), drawn) >= (len(best), best):
            return False
        seen.add(key)
        runs += 1
        t, e, sig = evaluate(prog)
        if sig != target_sig:
            return False
        best, best_prog, best_t, best_e = drawn, prog, t, e
        return True

    def out_of_budget():
        return runs >= budget_runs or time.monotonic() - t0 > budget_s

    improved = True
    while improved and not out_of_budget():
        improved = False
        for span in (8, 4, 2, 1):
            i = 0
            while i + span <= len(best) and not out_of_budget():
                if attempt(best[:i] + best[i + span:]):
                    improved = True
                else:
                    i += 1
        i = 0
        while i < len(best) and not out_of_budget():
            v = best[i]
            for nv in (0, v // 2, v - 1):
                if 0 <= nv < v and attempt(best[:i] + [nv] + best[i + 1:]):
                    improved = True
                    break
            i += 1
    return best_prog, best, best_t, best_e, runs
