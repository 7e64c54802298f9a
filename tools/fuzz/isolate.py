"""``--isolate N``: the run split over worker processes, restarted past a native crash.

PyTorch 2.13 has at least one heap corruption reachable from a small program (see
families_nn.gen_conv_pool), and a glibc abort kills the whole process. Each worker runs ``N`` cases
and writes its report; the index of the case it is on is in a progress file, so when a worker dies
by a signal the parent records that case as a "crash" and starts a new worker after it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict


def _strip(argv, names):
    """``argv`` without the options in ``names`` (and their values)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a.split("=", 1)[0] in names:
            skip = "=" not in a and a not in ("--shrink", "--quiet")
            continue
        out.append(a)
    return out


def _read(path):
    with open(path) as fh:
        return fh.read()


class _Tally:
    """The merged counters and failures of the workers' reports."""

    def __init__(self):
        self.per_family, self.torch_errors = defaultdict(Counter), Counter()
        self.cats, self.all_cats, self.failures, self.done = Counter(), Counter(), [], 0

    def add_report(self, path):
        part = json.loads(_read(path))
        for fam, c in part["counters"]["per_family"].items():
            self.per_family[fam].update(c)
        self.torch_errors.update(part["counters"]["torch_errors"])
        self.add_failures(part["failures"])
        self.done += part["summary"]["cases"]

    def add_failures(self, failures):
        self.failures += failures
        for f in failures:
            self.cats[f["category"]] += 1
            for c in {c for c, _ in f["findings"]}:
                self.all_cats[c] += 1


def run_isolated(args, argv):
    from .cli import summarize, versions, write_report
    base = _strip(argv, {"--isolate", "--start", "--cases", "--out", "--progress", "--time-limit"})
    t0 = time.monotonic()
    tally = _Tally()
    k, end = args.start, args.start + args.cases
    with tempfile.TemporaryDirectory() as tmp:
        prog_path, out_path = os.path.join(tmp, "progress"), os.path.join(tmp, "part.json")

        def worker(start, n, progress=True):
            for p in (prog_path, out_path):
                if os.path.exists(p):
                    os.remove(p)
            cmd = [sys.executable, "-m", "tools.fuzz", *base, "--start", str(start), "--cases", str(n),
                   "--out", out_path, "--quiet"] + (["--progress", prog_path] if progress else [])
            return subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False).returncode

        while k < end:
            if args.time_limit and time.monotonic() - t0 > args.time_limit:
                break
            n = min(args.isolate, end - k)
            rc = worker(k, n)
            if rc == 0 and os.path.exists(out_path):
                tally.add_report(out_path)
                k += n
                print(f"cases {k - args.start}/{args.cases}: {len(tally.failures)} failing so far", file=sys.stderr)
                continue
            # the worker died: record the case in its progress file as a crash, rerun the cases
            # before it in a new worker (their results died with the process), go on after it
            line = _read(prog_path).split() if os.path.exists(prog_path) else [str(k), "?"]
            bad, fam = int(line[0]), line[1]
            print(f"worker died (return code {rc}) at case {bad} ({fam})", file=sys.stderr)
            if bad > k and worker(k, bad - k, progress=False) == 0:
                tally.add_report(out_path)
            tally.per_family[fam]["cases"] += 1
            tally.per_family[fam]["crash"] += 1
            tally.done += 1
            tally.add_failures([{
                "seed": args.seed, "index": bad, "family": fam, "category": "crash",
                "findings": [["crash", f"the process died with return code {rc}"]],
                "cluster": f"{fam} | crash | return code {rc}",
                "program": f"python -m tools.fuzz --seed {args.seed} --case {bad} --family {fam}"}])
            k = bad + 1
    summary = summarize(args.seed, args.start, tally.done, tally.per_family, tally.cats, tally.all_cats,
                        tally.failures, time.monotonic() - t0, tally.torch_errors)
    summary["versions"] = versions()
    print(summary["table"])
    print("PyTorch {torch}, NumPy {numpy}, engine from {engine}".format(**summary["versions"]))
    if args.out:
        write_report(args.out, summary, tally.failures, {f: dict(c) for f, c in tally.per_family.items()},
                     dict(tally.torch_errors))
    return 0
