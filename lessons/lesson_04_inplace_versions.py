"""Lesson 4: in-place operations and version counters: the error, and why it protects you."""
import engine as torch

from lessons._format import Check, Focus, Lesson, Step


def versions(s):
    a = torch.ones(3)
    start = a._version
    a.add_(1)                                # in place: same storage, version + 1
    after_add = a._version
    a.mul_(2)
    return {"start": start, "after_add": after_add, "after_mul": a._version, "a": a.tolist()}


def version_facts(run):
    evs = run.of_kind("version")
    return {"n_version": len(evs), "bumps": ", ".join(f"{e['op']} -> {e['version']}" for e in evs)}


def the_error(s):
    s.x = torch.randn(4, requires_grad=True)
    y = s.x.exp()                            # ExpBackward0 saves its result y (exp' = exp)
    saved_version = y._version
    y.add_(1)                                # ... and now y is changed in place
    try:
        y.sum().backward()
        message = "no error"
    except RuntimeError as err:
        message = str(err)
    return {"saved_version": saved_version, "now_version": y._version,
            "message": message.split(" Hint:")[0]}


def why(s):
    y = s.x.exp()
    y.sum().backward()
    right = s.x.grad.clone()                 # exp'(x) = exp(x)
    wrong = s.x.exp() + 1                    # what the saved (modified) y would have given
    return {"right": [round(v, 4) for v in right.tolist()],
            "wrong": [round(v, 4) for v in wrong.tolist()],
            "off_by": round((wrong - right).abs().max().item(), 6)}


def safe_inplace(s):
    h = s.x * 2                              # MulBackward0 keeps the scalar 2, not h
    before = torch.memory.memory_allocated()
    h.relu_()                                # in place on a tensor no node saved: fine
    after = torch.memory.memory_allocated()
    s.x.grad = None
    h.sum().backward()
    return {"grad": [round(v, 4) for v in s.x.grad.tolist()], "grew_by": after - before,
            "expected": [2.0 if v > 0 else 0.0 for v in s.x.tolist()]}


def data_slips_past(s):
    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = x.exp()                              # saves y, at version 0
    y.data.add_(1)                           # .data: same storage, a counter of its own
    y.sum().backward()                       # no error ...
    silent = x.grad.tolist()
    right = x.detach().exp().tolist()        # ... but exp'(x) = exp(x) is not what came out
    y2 = x.exp()
    y2.detach().add_(1)                      # detach() shares y2's counter
    try:
        y2.sum().backward()
        caught = "no error"
    except RuntimeError as err:
        caught = str(err).split(" Hint:")[0]
    return {"silent": [round(v, 4) for v in silent], "right": [round(v, 4) for v in right],
            "y_version": y._version, "caught": caught}


def _message(run):
    m = run.values["message"]
    return ("modified by an inplace operation" in m and "is at version 1; expected version 0" in m), m[:80]


LESSON = Lesson(
    number=4,
    slug="inplace_versions",
    title="In-place operations and version counters",
    summary="Every storage counts its in-place changes; backward checks the count of what it saved.",
    steps=(
        Step(
            title="Every in-place op bumps a version",
            narrative="""\
An in-place op (`add_`, `mul_`, `relu_`, `x[i] = v`...) writes into the
tensor's existing storage instead of allocating a new one. Each one adds 1 to
the storage's **version counter**: `a._version` went {start} → {after_add}
→ {after_mul} ({bumps}), and `a` is now {a}. No new memory was allocated
for the results.

Read the code: `engine/core/tensor.py`, NOTE [ Version counters ] 1 and 2;
`engine/core/dispatch.py`, NOTE [ Dispatch ] 5; the bump itself,
`bump_version` in `engine/core/inplace.py`.""",
            code=versions,
            facts=version_facts,
            focus=Focus("log", "first version"),
            checks=(
                Check("two in-place ops gave versions 1 and 2 ({bumps})",
                      lambda r: [e["version"] for e in r.of_kind("version")] == [1, 2]),
                Check("a._version is {after_mul}", lambda r: r.values["after_mul"] == 2),
            ),
        ),
        Step(
            title="The error",
            narrative="""\
`y = x.exp()` saved `y` for backward, at version {saved_version}. Then
`y.add_(1)` changed it: version {now_version}. When backward unpacks the
saved `y`, it compares versions and refuses:

> {message}

The node remembers the version of everything it saves; any mismatch at
unpack time is this error.

Read the code: `engine/core/graph.py`, NOTE [ Saved tensors ] 2;
`engine/core/tensor.py`, NOTE [ Version counters ] 1.""",
            code=the_error,
            focus=Focus("log", "first version"),
            checks=(Check("backward raised PyTorch's in-place error", _message),
                    Check("y went from version 0 to 1",
                          lambda r: (r.values["saved_version"], r.values["now_version"]) == (0, 1))),
        ),
        Step(
            title="Why it protects you",
            narrative="""\
ExpBackward0 computes the gradient as `grad * result`. With the right
result the gradient is **{right}**; from the modified one it would have been
**{wrong}**, off by up to {off_by}, and nothing would have told you. The
version check turns a silently wrong gradient into an error.

Read the code: the `exp` row in `engine/core/primitives.py` (its backward
is `grad * result`); `engine/core/graph.py`, NOTE [ Saved tensors ] 2.""",
            code=why,
            focus=Focus("graph", "first execute"),
            checks=(Check("the two gradients differ by exactly 1 (= what add_ added)",
                          lambda r: abs(r.values["off_by"] - 1.0) < 1e-4),),
        ),
        Step(
            title="In place is fine when nothing saved it",
            narrative="""\
`h = x * 2` keeps only the number 2, not `h`, so `h.relu_()` may change `h`
in place: backward works and `x.grad` is {grad} (2 where x > 0). The result
lives in h's own storage (memory_allocated grew by {grew_by} B across
`relu_`, where `h = h.relu()` would have kept a second 16 B tensor):
in-place ops save memory when they are safe, and the version counter
tells you when they are not.

Read the code: the `mul` row in `engine/core/primitives.py`;
`engine/core/dispatch.py`, NOTE [ Dispatch ] 2, 4 and 5; the write into
the target's own array: `_write_inplace` in `engine/core/inplace.py`.""",
            code=safe_inplace,
            focus=Focus("memory", "first op op == 'relu'"),
            checks=(Check("x.grad is {expected}", lambda r: r.values["grad"] == r.values["expected"]),
                    Check("relu_ kept no new memory ({grew_by} B)", lambda r: r.values["grew_by"] == 0)),
        ),
        Step(
            title="`.data` slips past the check",
            narrative="""`y.data` is `y`'s storage with a version counter of its own, so
`y.data.add_(1)` changes the values ExpBackward0 saved while `y._version`
stays {y_version}. Backward runs without a word and gives **{silent}**
where exp'(x) is **{right}**: the silently wrong gradient the counter exists
to prevent. `y.detach()` shares the counter, so the same change made
through it is caught:

> {caught}

To change values outside autograd use `with torch.no_grad():` or `detach()`:
the counter still sees those changes. `.data` hides them.

Read the code: `data` and `detach` in `engine/core/tensor.py`, NOTE
[ Version counters ] 2 and 3.""",
            code=data_slips_past,
            focus=Focus("log", "first version"),
            checks=(Check("backward through .data raised nothing and y stayed at version 0",
                          lambda r: r.values["y_version"] == 0),
                    Check("the gradient is exp(x) + 1, off by exactly what add_ added",
                          lambda r: all(abs(a - b - 1.0) < 1e-3
                                        for a, b in zip(r.values["silent"], r.values["right"]))),
                    Check("detach().add_ made backward raise the in-place error",
                          lambda r: "is at version 1; expected version 0" in r.values["caught"])),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
