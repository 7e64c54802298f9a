"""The command line: run cases, tally agreement, shrink failures, write the report."""
from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
import time
from collections import Counter, defaultdict

import numpy as np

from .compare import CATEGORIES, compare, primary
from .generate import FAMILIES, family_of, generate
from .runner import CaseTimeout, run
from .shrink import shrink, signature


def jsonable(x, limit=64):
    """Results as JSON: arrays become (at most ``limit``-element) lists."""
    if isinstance(x, np.ndarray):
        flat = x.reshape(-1)
        vals = [None if (isinstance(v, float) and not np.isfinite(v)) else v for v in flat[:limit].tolist()]
        if flat.dtype.kind == "f":
            vals = [repr(float(v)) if not np.isfinite(v) else v for v in flat[:limit].tolist()]
        return vals + (["..."] if flat.size > limit else [])
    if isinstance(x, dict):
        return {k: jsonable(v, limit) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v, limit) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, float) and not np.isfinite(x):
        return repr(x)
    return x


def cluster_key(family, category, findings, tags):
    """Failures that are likely one defect: family, category, first op tag, the first finding's
    text with numbers and names of leaves removed."""
    detail = next((d for c, d in findings if c == category), "")
    detail = re.sub(r"\[[^\]]*\]", "[..]", detail)
    detail = re.sub(r"-?[0-9][0-9.e+-]*", "#", detail)
    detail = re.sub(r"\b[a-zA-Z_][a-zA-Z0-9_]*\.grad\b", "LEAF.grad", detail)[:160]
    return f"{family} | {category} | {tags[0] if tags else ''} | {detail}"


def run_case(program):
    try:
        t = run(program, "torch")
        e = run(program, "engine")
    except CaseTimeout:
        return None, None, [("timeout", "case ran past its time limit outside a phase")]
    return t, e, compare(t, e)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tools.fuzz", description=__doc__)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0, help="index of the first case")
    ap.add_argument("--family", action="append", help="only this family (repeatable); "
                    + ", ".join(FAMILIES))
    ap.add_argument("--shrink", action="store_true", help="shrink each failing case")
    ap.add_argument("--out", help="write every failing case to this JSON file")
    ap.add_argument("--case", type=int, help="run one case, print its program and both results")
    ap.add_argument("--time-limit", type=float, default=0, help="stop starting cases after this many seconds")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--isolate", type=int, default=0, metavar="N",
                    help="run in worker processes of N cases each, so that a native crash (a segfault "
                         "or heap corruption in PyTorch or NumPy) costs one case, not the run")
    ap.add_argument("--engine-root", metavar="DIR",
                    help="import engine from DIR/engine (a fixed snapshot, e.g. from git archive) instead "
                         "of the working tree")
    ap.add_argument("--progress", help=argparse.SUPPRESS)   # a worker writes each case index here
    args = ap.parse_args(argv)
    if args.engine_root:
        root = os.path.abspath(args.engine_root)
        if not os.path.isfile(os.path.join(root, "engine", "__init__.py")):
            ap.error(f"no engine/__init__.py under {root}")
        sys.path.insert(0, root)
    fams = args.family or []
    for f in fams:
        if f not in FAMILIES:
            ap.error(f"unknown family {f!r}; choose from {', '.join(FAMILIES)}")

    if args.case is not None:
        fam = fams[0] if fams else family_of(args.seed, args.case)
        prog, choices = generate(args.seed, args.case, fam)
        t, e, found = run_case(prog)
        print(f"# case {args.case} of seed {args.seed}, family {fam}, choices {choices}")
        print(prog.text(backward=bool(t and t["out_requires_grad"])))
        print("# PyTorch:", json.dumps(jsonable(t), default=str)[:3000])
        print("# engine: ", json.dumps(jsonable(e), default=str)[:3000])
        print("# findings:", found or "none (agree)")
        if found and args.shrink:
            sp, sc, st, se, runs = shrink(fam, choices, signature(primary(found), t, e, found, prog.tags))
            print(f"# shrunk ({runs} runs):")
            print(sp.text(backward=bool(st and st["out_requires_grad"])))
        return 0

    if args.isolate:
        from .isolate import run_isolated
        return run_isolated(args, argv if argv is not None else sys.argv[1:])

    t0 = time.monotonic()
    per_family = defaultdict(Counter)
    cats, all_cats = Counter(), Counter()
    failures = []
    shrunk_per_key = Counter()
    torch_errors = Counter()
    done = 0
    for k in range(args.start, args.start + args.cases):
        if args.time_limit and time.monotonic() - t0 > args.time_limit:
            break
        fam = fams[k % len(fams)] if len(fams) > 1 else (fams[0] if fams else family_of(args.seed, k))
        if args.progress:
            with open(args.progress, "w") as fh:
                fh.write(f"{k} {fam}\n")
        if os.environ.get("GLASSGRAD_FUZZ_ABORT_AT") == str(k):   # to test --isolate
            os.abort()
        prog, choices = generate(args.seed, k, fam)
        t, e, found = run_case(prog)
        done += 1
        per_family[fam]["cases"] += 1
        if t is not None and (t["fwd_error"] or t["bwd_error"]):
            torch_errors[fam] += 1
        cat = primary(found)
        err = e and (e["fwd_error"] or e["bwd_error"])
        if cat is not None and err and err.get("numpy_words") and not err.get("raw"):
            per_family[fam]["numpy_words"] += 1
        if k % 200 == 0:
            gc.collect()
        if cat is None:
            per_family[fam]["agree"] += 1
            continue
        per_family[fam][cat] += 1
        cats[cat] += 1
        for c in {c for c, _ in found}:
            all_cats[c] += 1
        rec = {"seed": args.seed, "index": k, "family": fam, "category": cat,
               "findings": [list(f) for f in found], "tags": prog.tags, "choices": choices,
               "program": prog.text(backward=bool(t and t["out_requires_grad"]))}
        rec["cluster"] = cluster_key(fam, cat, found, prog.tags)
        if args.shrink and t is not None:
            key = rec["cluster"]
            shrunk_per_key[key] += 1
            full = shrunk_per_key[key] <= 2
            sp, sc, st, se, runs = shrink(fam, choices, signature(cat, t, e, found, prog.tags),
                                          budget_runs=150 if full else 30, budget_s=20.0 if full else 4.0)
            rec["shrunk"] = sp.text(backward=bool(st["out_requires_grad"] if st else t["out_requires_grad"]))
            rec["shrunk_choices"] = sc
            rec["shrink_runs"] = runs
            if st is not None:
                t, e = st, se
                rec["findings_shrunk"] = [list(f) for f in compare(st, se)]
        rec["torch"] = jsonable(t)
        rec["engine"] = jsonable(e)
        failures.append(rec)
        if not args.quiet:
            print(f"[{k}] {fam}: {cat}: {next(d for c, d in found if c == cat)[:150]}", file=sys.stderr)

    elapsed = time.monotonic() - t0
    summary = summarize(args.seed, args.start, done, per_family, cats, all_cats, failures, elapsed, torch_errors)
    summary["versions"] = versions()
    print(summary["table"])
    print("PyTorch {torch}, NumPy {numpy}, engine from {engine}".format(**summary["versions"]))
    if args.out:
        write_report(args.out, summary, failures, {f: dict(c) for f, c in per_family.items()}, dict(torch_errors))
    return 0


def write_report(path, summary, failures, per_family, torch_errors):
    with open(path, "w") as fh:
        json.dump({"summary": {k: v for k, v in summary.items() if k != "table"},
                   "counters": {"per_family": per_family, "torch_errors": torch_errors},
                   "failures": failures}, fh, indent=1, default=str)
    print(f"wrote {len(failures)} failing cases to {path}")


def summarize(seed, start, done, per_family, cats, all_cats, failures, elapsed, torch_errors):
    agree = sum(c["agree"] for c in per_family.values())
    lines = [f"seed {seed}, cases {start}..{start + done - 1} ({done} cases, {elapsed:.0f} s)",
             f"agreement: {agree}/{done} = {100.0 * agree / max(done, 1):.2f}%", "",
             f"{'family':<16}{'cases':>7}{'agree':>7}{'%':>8}{'torch err':>10}  top categories"]
    fam_rows = {}
    for fam in FAMILIES:
        c = per_family.get(fam)
        if not c:
            continue
        pct = 100.0 * c["agree"] / max(c["cases"], 1)
        top = ", ".join(f"{k} {v}" for k, v in sorted(((k, v) for k, v in c.items() if k in CATEGORIES),
                                                          key=lambda kv: -kv[1])[:3])
        lines.append(f"{fam:<16}{c['cases']:>7}{c['agree']:>7}{pct:>8.2f}{torch_errors[fam]:>10}  {top}")
        fam_rows[fam] = {"cases": c["cases"], "agree": c["agree"], "percent": round(pct, 2),
                         "torch_errors": torch_errors[fam],
                         "categories": {k: v for k, v in c.items() if k in CATEGORIES},
                         "numpy_words": c["numpy_words"]}
    lines += ["", f"{'category (case counted once, most harmful)':<46}{'cases':>7}{'any':>7}"]
    for cat in CATEGORIES:
        lines.append(f"{cat:<46}{cats[cat]:>7}{all_cats[cat]:>7}")
    nw = sum(c["numpy_words"] for c in per_family.values())
    lines.append(f"(failing cases whose engine error is a deliberate raise in NumPy's or Python's words: {nw})")
    clusters = Counter(f["cluster"] for f in failures)
    lines += ["", f"distinct failure clusters: {len(clusters)}"]
    for key, n in clusters.most_common(25):
        lines.append(f"{n:>5}  {key}")
    return {"table": "\n".join(lines), "seed": seed, "start": start, "cases": done, "agree": agree,
            "percent": round(100.0 * agree / max(done, 1), 3), "seconds": round(elapsed, 1),
            "numpy_words": nw,
            "families": fam_rows, "categories": dict(cats), "categories_any": dict(all_cats),
            "clusters": dict(clusters.most_common())}


def versions():
    """What was compared: PyTorch's and NumPy's versions and where engine came from."""
    import numpy

    from .runner import backend, engine_root
    return {"torch": backend("torch")[0].__version__, "numpy": numpy.__version__, "engine": engine_root()}
