"""Lesson 17: half the bytes. float16 and bfloat16, autocast's casts and what they save, the weight-cast
cache, gradients in float32, and why GradScaler exists."""
import engine as torch
import engine.nn.functional as F
from engine import nn
from lessons._facts import nbytes, nodes, saved_bytes
from lessons._format import Check, Focus, Lesson, Question, Step
from replay.memory import Replay, start_of

BATCH, IN, HIDDEN, OUT = 64, 256, 512, 10


def _parts(run):
    """The step's events cut after each backward_end: [(lo, hi)] absolute ranges, one per backward."""
    ends = [run.start + i + 1 for i, e in enumerate(run.events) if e["kind"] == "backward_end"]
    return list(zip([run.start] + ends[:-1], ends))


def _casts(events) -> list:
    """The op events of the casts (``to``), in order."""
    return [e for e in events if e["kind"] == "op" and e["op"] == "to_dtype"]


# ---- 1. two bytes an element ---------------------------------------------------------------------------
def three_dtypes(s):
    s.act = torch.randn(BATCH, HIDDEN)              # an activation, float32
    copies = {"bf16": s.act.to(torch.bfloat16), "f16": s.act.to(torch.float16)}
    out = {"f32_size": s.act.element_size(), "f32_bytes": s.act.nbytes}
    for short, c in copies.items():
        out[f"{short}_size"], out[f"{short}_bytes"] = c.element_size(), c.nbytes
        info = torch.finfo(c.dtype)
        out[f"{short}_eps"], out[f"{short}_max"] = info.eps, info.max
    out["f32_eps"], out["f32_max"] = torch.finfo(torch.float32).eps, torch.finfo(torch.float32).max
    big = torch.tensor(70000.0)
    out["big_bf16"], out["big_f16"] = big.bfloat16().item(), big.half().item()
    out["one_plus_bf16"] = (torch.tensor(1.0).bfloat16() + 0.001).item()   # 1 + 0.001 in bfloat16
    return out


def three_dtypes_facts(run):
    casts = _casts(run.events)
    by_dtype = {e["output"]["dtype"]: e["output"]["bytes"] for e in casts if e["output"]["shape"] == [BATCH, HIDDEN]}
    allocs = {e["storage"]: e["bytes"] for e in run.of_kind("alloc")}
    alloc_bf16 = allocs.get(next(e["output"]["storage"] for e in casts if e["output"]["dtype"] == "bfloat16"))
    return {"trace_bf16": by_dtype.get("bfloat16"), "trace_f16": by_dtype.get("float16"),
            "alloc_bf16": alloc_bf16, "alloc_bf16_text": nbytes(alloc_bf16), "n": BATCH * HIDDEN, "f32_trace": next(e["bytes"] for e in run.of_kind("alloc")),
            "big_f16_text": str(run.values["big_f16"]), "big_bf16_text": f"{run.values['big_bf16']:,.0f}"}


# ---- 2. autocast in a forward ---------------------------------------------------------------------------
def autocast_forward(s):
    s.model = nn.Sequential(nn.Linear(IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, OUT))
    s.x = torch.randn(BATCH, IN)
    s.target = torch.randint(0, OUT, (BATCH,))
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        h = s.model[1](s.model[0](s.x))               # Linear, ReLU
        logits = s.model[2](h)                         # Linear
        s.loss = F.cross_entropy(logits, s.target)     # log_softmax + nll_loss, on the float32 list
    return {"h_dtype": str(h.dtype), "logits_dtype": str(logits.dtype), "loss_dtype": str(s.loss.dtype),
            "weight_dtype": str(s.model[0].weight.dtype)}


def _dtype_rows(run):
    rows = ["| node | output dtype | saves |", "| --- | --- | --- |"]
    for e in run.of_kind("op"):
        n = e.get("node")
        if not n:
            continue
        what = ", ".join(f"{x['name']} {x['dtype']}" for x in n["saved"]) or "nothing"
        rows.append(f"| {n['name']} | {e['output']['dtype']} | {what} |")
    return "\n".join(rows)


def _weight_cast(run, name):
    return next(e for e in _casts(run.events) if e["inputs"][0]["name"] == name)


def autocast_forward_facts(run):
    ns = list(nodes(run.events).values())
    w0 = _weight_cast(run, "0.weight")
    weight_storage = w0["inputs"][0]["storage"]
    freed = {e["storage"] for e in run.of_kind("free")}
    return {"table": _dtype_rows(run), "n_tocopy": sum(n["name"] == "ToCopyBackward0" for n in ns),
            "w0_copy_bytes": w0["output"]["bytes"], "w0_bytes": w0["inputs"][0]["bytes"],
            "weight_kept": weight_storage not in freed,
            "w2_saved": next(x["bytes"] for n in ns if n["name"] == "AddmmBackward0" for x in n["saved"]
                             if x["name"] == "mat2")}


def _ops_dtypes(run):
    ops = [(e["node"]["name"], e["output"]["dtype"]) for e in run.of_kind("op") if e.get("node")]
    want = {("AddmmBackward0", "bfloat16"), ("ReluBackward0", "bfloat16"), ("LogSoftmaxBackward0", "float32"),
            ("NllLossBackward0", "float32")}
    return want <= set(ops), ops


# ---- 3. the saved bytes, node by node ---------------------------------------------------------------------
def compare(s):
    s.model.zero_grad()
    F.cross_entropy(s.model(s.x), s.target).backward()             # float32
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        loss = F.cross_entropy(s.model(s.x), s.target)              # bfloat16 autocast
    loss.backward()


def _saving_nodes(events):
    return [n for n in nodes(events).values() if n["saved"]]


def compare_facts(run):
    evs = run.trace.events
    (a0, a1), (b0, b1) = _parts(run)[:2]
    f32, amp = _saving_nodes(evs[a0:a1]), _saving_nodes(evs[b0:b1])
    rows = ["| node | float32 | bf16 autocast |", "| --- | ---: | ---: |"]
    for n32, n16 in zip(f32, amp):
        rows.append(f"| {n32['name']} | {saved_bytes(n32):,} | {saved_bytes(n16):,} |")
    t32, t16 = sum(map(saved_bytes, f32)), sum(map(saved_bytes, amp))
    rows.append(f"| total | {t32:,} | {t16:,} |")
    kept32 = sum(x["bytes"] for n in amp for x in n["saved"] if x["dtype"] != "bfloat16")
    r = Replay(evs[:run.end], start_of(getattr(run.trace, "meta", None)))
    p32, p16 = r.peak_in(a0, a1, "activation"), r.peak_in(b0, b1, "activation")
    base32, base16 = r.live_at(a0).get("activation", 0), r.live_at(b0).get("activation", 0)
    return {"table": "\n".join(rows), "total32": t32, "total16": t16, "ratio": f"{t16 / t32:.3f}",
            "pairs_match": [n["name"] for n in f32] == [n["name"] for n in amp],
            "kept32": kept32, "half_of_rest": (t32 - kept32) // 2, "bf16_saved": t16 - kept32,
            "peak32_at": p32[0], "peak16_at": p16[0],
            "peak32": p32[1] - base32, "peak16": p16[1] - base16}


# ---- 4. the weight-cast cache -------------------------------------------------------------------------
def weight_cache(s):
    square = nn.Linear(HIDDEN, HIDDEN)
    h = torch.randn(BATCH, HIDDEN)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        square(square(h)).float().sum().backward()               # the same Linear twice
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16, cache_enabled=False):
        square(square(h)).float().sum().backward()               # the same, with no cache


def weight_cache_facts(run):
    out = {}
    for key, (lo, hi) in zip(("cached", "uncached"), _parts(run)):
        part = run.trace.events[lo:hi]
        out[f"{key}_w"] = sum(e["inputs"][0]["name"] == "weight" for e in _casts(part))
        out[f"{key}_nodes"] = sum(n["name"] == "ToCopyBackward0" for n in nodes(part).values())
        out[f"{key}_bytes"] = sum(e["output"]["bytes"] for e in _casts(part) if e["inputs"][0]["name"] == "weight")
    return out


# ---- 5. gradients -----------------------------------------------------------------------------------------
def gradients(s):
    s.model.zero_grad()
    F.cross_entropy(s.model(s.x), s.target).backward()
    g32 = s.model[0].weight.grad.clone()
    s.model.zero_grad()
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        loss = F.cross_entropy(s.model(s.x), s.target)
    loss.backward()
    g = s.model[0].weight.grad
    return {"grad_dtype": str(g.dtype), "grad_bytes": g.nbytes,
            "rel_diff": ((g - g32).norm() / g32.norm()).item()}


def gradients_facts(run):
    lo, hi = _parts(run)[1]
    part = run.trace.events[lo:hi]
    executed = [e["name"] for e in part if e["kind"] == "execute"]
    acc = [e for e in part if e["kind"] == "accumulate"]
    return {"n_tocopy_run": executed.count("ToCopyBackward0"), "acc_bytes": sum(e["bytes"] for e in acc),
            "n_acc": len(acc)}


# ---- 6. GradScaler ----------------------------------------------------------------------------------------
def grad_scaler(s):
    tiny = torch.tensor(1e-8)
    out = {"smallest_f16": torch.tensor(2.0 ** -24).half().item(),  # float16's smallest (subnormal) number
           "tiny_f16": tiny.half().item(),                        # underflows
           "scaled_f16": (tiny * 65536).half().item()}            # survives
    scaler = torch.amp.GradScaler("cpu")
    opt = torch.optim.SGD(s.model.parameters(), lr=0.1)
    for inject in (False, True):
        opt.zero_grad()
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            loss = F.cross_entropy(s.model(s.x), s.target)
        scaler.scale(loss).backward()                 # every gradient is multiplied by the scale
        key = "bad" if inject else "good"
        out[f"scale_{key}"] = scaler.get_scale()
        out[f"scaled_grad_{key}"] = s.model[2].bias.grad[1:].abs().max().item()
        if inject:
            s.model[2].bias.grad[0] = float("inf")    # an overflow, injected
        scaler.unscale_(opt)                          # divide by the scale, look for inf/NaN
        out[f"grad_{key}"] = s.model[2].bias.grad[1:].abs().max().item()
        before = s.model[2].weight.detach().clone()
        scaler.step(opt)                              # skipped when an inf was found
        out[f"moved_{key}"] = (s.model[2].weight - before).abs().max().item()
        scaler.update()                               # halves the scale after a skip
        out[f"after_{key}"] = scaler.get_scale()
    return out


LESSON = Lesson(
    number=17,
    slug="mixed_precision",
    title="Half the bytes: mixed precision",
    summary="float16 and bfloat16, autocast's casts and what they save, the weight-cast cache, GradScaler.",
    steps=(
        Step(
            title="A bfloat16 number is 2 bytes",
            narrative="""\
The same {n:,}-element activation, three ways: float32 takes
{f32_size} bytes an element ({f32_bytes:,} B), bfloat16 and float16 take
{bf16_size} ({bf16_bytes:,} B and {f16_bytes:,} B). The trace says the
same: the `to` ops' outputs are {trace_bf16:,} B and {trace_f16:,} B, and
the bfloat16 copy's `alloc` is {alloc_bf16:,} B ({alloc_bf16_text} in the event log).

What the bytes cost, from `torch.finfo`:

| dtype | eps (gap after 1.0) | max |
| --- | ---: | ---: |
| float32 | {f32_eps:.3g} | {f32_max:.3g} |
| bfloat16 | {bf16_eps:.3g} | {bf16_max:.3g} |
| float16 | {f16_eps:.3g} | {f16_max:.3g} |

bfloat16 keeps float32's 8 exponent bits, so its **range** is float32's and
70,000 becomes {big_bf16_text}; it keeps only 8 bits of mantissa, so 1 + 0.001
is {one_plus_bf16} in bfloat16. float16 has more mantissa but 5 exponent bits:
70,000 becomes **{big_f16_text}**.

Read the code: `engine/backend/dtypes.py` (the dtypes and their sizes) and
`engine/backend/low_precision.py`, NOTE [ Low-precision results ] 1.""",
            code=three_dtypes,
            facts=three_dtypes_facts,
            focus=Focus("memory", "first op op == 'to_dtype'"),
            checks=(
                Check("a bfloat16 and a float16 element are 2 bytes; float32's are 4",
                      lambda r: (r.values["bf16_size"], r.values["f16_size"], r.values["f32_size"]) == (2, 2, 4)),
                Check("the trace's casts allocate {trace_bf16:,} B: half of float32's {f32_bytes:,} B",
                      lambda r: r.values["trace_bf16"] == r.values["trace_f16"] == r.values["alloc_bf16"]
                      == r.values["f32_bytes"] // 2 == 2 * r.values["n"]),
                Check("bfloat16 has float32's range, float16 overflows to inf at 70,000",
                      lambda r: r.values["big_f16"] == float("inf") and abs(r.values["big_bf16"] - 70000) < 300
                      and r.values["bf16_max"] > 1e38 and r.values["f16_max"] == 65504.0),
                Check("bfloat16's eps is {bf16_eps}: 1 + 0.001 rounds back to 1",
                      lambda r: r.values["bf16_eps"] == 2 ** -7 and r.values["one_plus_bf16"] == 1.0),
            ),
        ),
        Step(
            title="Autocast casts, op by op",
            questions=(
                Question("How many bytes does the bfloat16 copy of the first Linear's 512 × 256 weight take?",
                         lambda r: nbytes(r.values["w0_copy_bytes"]),
                         (nbytes(512 * 256), nbytes(512 * 256 * 2), nbytes(512 * 256 * 4)),
                         "2 bytes for each of its 131,072 numbers; the float32 weight is {w0_bytes:,} B."),
                Question("Does the float32 weight go away while autocast runs?",
                         lambda r: "no: both are alive" if r.values["weight_kept"] else "yes: the copy replaces it",
                         ("yes: the copy replaces it", "no: both are alive"),
                         "The float32 weight is the parameter the optimizer updates (the master weight); "
                         "the bfloat16 copy is made from it and lives beside it."),
            ),
            narrative="""\
Inside `torch.autocast(device_type="cpu", dtype=torch.bfloat16)` each op on
PyTorch's CPU lists has its inputs cast first. The Linear layers (`addmm`)
run in bfloat16; `log_softmax` and `nll_loss` (what `cross_entropy` is) are
on the float32 list. Every cast is a real `to` op, a **ToCopyBackward0**
node ({n_tocopy} here):

{table}

The hidden activation is {h_dtype}, the logits {logits_dtype}, the loss
{loss_dtype}. The parameters stay {weight_dtype}: these **master weights**
are what the optimizer updates. Their bfloat16 copies ({w0_copy_bytes:,} B
for the first weight) are what the matmuls read, and what backward keeps:
the second Linear saves its weight's copy as `mat2`, {w2_saved:,} B.

Read the code: `engine/amp/__init__.py`, NOTE [ Mixed precision ] 2, 3 and
4; the lists: `engine/amp/op_lists.py`; the cast each op asks for:
`engine/backend/low_precision.py`, NOTE [ Low-precision results ] 3.""",
            code=autocast_forward,
            facts=autocast_forward_facts,
            focus=Focus("graph", "first op node.name == 'ToCopyBackward0'"),
            checks=(
                Check("addmm and relu give bfloat16, log_softmax and nll_loss float32", _ops_dtypes),
                Check("the first weight's copy is {w0_copy_bytes:,} B, half of its {w0_bytes:,} B",
                      lambda r: r.values["w0_copy_bytes"] * 2 == r.values["w0_bytes"] == IN * HIDDEN * 4),
                Check("the parameters stay float32, and no weight storage is freed",
                      lambda r: r.values["weight_dtype"].endswith("float32") and r.values["weight_kept"]),
                Check("{n_tocopy} ToCopyBackward0 nodes: 2 weights, 2 biases, the logits into cross_entropy",
                      lambda r: r.values["n_tocopy"] == 5),
            ),
        ),
        Step(
            title="What backward keeps: about half",
            narrative="""\
The same forward and backward twice: in float32, then under bfloat16
autocast. The bytes each node saved for backward:

{table}

{total16:,} B against {total32:,} B: a ratio of {ratio}, not 0.5. The
ops on the float32 list keep float32 tensors (log_softmax's result, the
loss's), and the int64 targets stay 8 bytes each: {kept32:,} B saved by
the autocast run are not bfloat16. Everything else halves:
{bf16_saved:,} B of bfloat16 saves.

The activation peak (key `P` goes to the highest one, the float32 run's,
event #{peak32_at}): {peak32:,} B above where that run began, against
{peak16:,} B for the autocast run (event #{peak16_at}).

Read the code: `engine/amp/__init__.py`, NOTE [ Mixed precision ] 3;
`engine/core/graph.py`, NOTE [ Saved tensors ] 1.""",
            code=compare,
            facts=compare_facts,
            focus=Focus("memory", "activation peak"),
            checks=(
                Check("the same nodes save, in the same order, in both runs", lambda r: r.values["pairs_match"]),
                Check("saved bytes: {total32:,} B in float32, {total16:,} B under autocast",
                      lambda r: r.values["total16"] < r.values["total32"] // 2 + r.values["kept32"]
                      and r.values["total16"] > r.values["total32"] // 2),
                Check("what is not bfloat16 ({kept32:,} B) is why the ratio is {ratio}, not 0.5",
                      lambda r: r.values["bf16_saved"] + r.values["kept32"] == r.values["total16"]),
                Check("the activation peak (P) is the float32 run's: {peak32:,} B against {peak16:,} B",
                      lambda r: r.values["peak16"] < r.values["peak32"] and r.values["peak32_at"] < r.values["peak16_at"]),
            ),
        ),
        Step(
            title="One weight, one cast",
            narrative="""\
A 512 × 512 Linear used twice in one autocast region: its weight is cast
**once** ({cached_w} cast, {cached_bytes:,} B of bfloat16), and the copy is reused
by the second call. With `cache_enabled=False` it is cast {uncached_w}
times ({uncached_bytes:,} B). The graph says so too: {cached_nodes}
ToCopyBackward0 nodes against {uncached_nodes}. The cache is emptied when the
outermost region exits (rule 5 below).

Read the code: `engine/amp/__init__.py`, NOTE [ Mixed precision ] 5.""",
            code=weight_cache,
            facts=weight_cache_facts,
            focus=Focus("graph", "first op node.name == 'ToCopyBackward0'"),
            checks=(
                Check("with the cache the weight is cast once, without it twice",
                      lambda r: (r.values["cached_w"], r.values["uncached_w"]) == (1, 2)),
                Check("{cached_nodes} ToCopyBackward0 nodes with the cache, {uncached_nodes} without",
                      lambda r: r.values["uncached_nodes"] - r.values["cached_nodes"] == 2),
                Check("the cached copy is {cached_bytes:,} B, 2 bytes a number",
                      lambda r: r.values["cached_bytes"] == HIDDEN * HIDDEN * 2
                      and r.values["uncached_bytes"] == 2 * r.values["cached_bytes"]),
            ),
        ),
        Step(
            title="Gradients come back in float32",
            narrative="""\
Backward runs the same graph down. Each ToCopyBackward0 casts its gradient
back to its input's dtype ({n_tocopy_run} of them ran), so the weight's
gradient is {grad_dtype}, {grad_bytes:,} B, like the parameter: the
optimizer updates float32 numbers. It differs from the float32 run's
gradient by {rel_diff:.1e} (relative): the forward computed in bfloat16.

Read the code: `engine/amp/__init__.py`, NOTE [ Mixed precision ] 3;
`engine/backend/low_precision.py`, NOTE [ Low-precision results ] 1 and 4.""",
            code=gradients,
            facts=gradients_facts,
            focus=Focus("graph", "first execute name == 'ToCopyBackward0'"),
            checks=(
                Check("the gradient is {grad_dtype}, {grad_bytes:,} B",
                      lambda r: r.values["grad_dtype"].endswith("float32") and r.values["grad_bytes"] == IN * HIDDEN * 4),
                Check("the {n_acc} accumulated gradients are {acc_bytes:,} B: the parameters' size",
                      lambda r: r.values["acc_bytes"] == 4 * (IN * HIDDEN + HIDDEN + HIDDEN * OUT + OUT)
                      and r.values["n_acc"] == 4),
                Check("backward ran the cast nodes and the gradient differs a little: {rel_diff:.1e}",
                      lambda r: r.values["n_tocopy_run"] >= 4 and 0 < r.values["rel_diff"] < 0.1),
            ),
        ),
        Step(
            title="Why GradScaler",
            narrative="""\
float16's smallest number is {smallest_f16:.3g}: a gradient of 1e-8 in float16 is
**{tiny_f16}**, gone. Multiplied by 65,536 first it is {scaled_f16:.3g}, and
survives. That is GradScaler: `scaler.scale(loss)` multiplies the loss by
the scale ({scale_good:,.0f}), so every gradient comes out multiplied too
(the last bias's largest: {scaled_grad_good:.3g}); `unscale_` divides them
back ({grad_good:.3g}) and looks for inf and NaN.

A good step: the weights moved by up to {moved_good:.3g}, the scale stays
{after_good:,.0f}. Then an inf is injected into a gradient: `step` is
**skipped** (the weights moved by {moved_bad}) and `update()` halves the
scale to **{after_bad:,.0f}**.

Read the code: `engine/amp/grad_scaler.py`; `engine/amp/__init__.py`,
NOTE [ Mixed precision ] 6, 7, 8 and 9.""",
            code=grad_scaler,
            focus=Focus("log", "last optimizer_step"),
            checks=(
                Check("1e-8 is 0 in float16; scaled by 65,536 it is {scaled_f16:.3g}",
                      lambda r: r.values["tiny_f16"] == 0.0 < r.values["smallest_f16"] < r.values["scaled_f16"]
                      and abs(r.values["scaled_f16"] - 65536e-8) < 1e-6),
                Check("the gradients came out scaled by {scale_good:,.0f}",
                      lambda r: r.values["scale_good"] == 65536.0
                      and abs(r.values["scaled_grad_good"] / 65536.0 - r.values["grad_good"]) <= 1e-6),
                Check("the good step moved the weights; the step with an inf did not",
                      lambda r: r.values["moved_good"] > 0 and r.values["moved_bad"] == 0.0),
                Check("update() halved the scale after the skip: {after_good:,.0f} to {after_bad:,.0f}",
                      lambda r: r.values["after_good"] == 65536.0 and r.values["after_bad"] == 32768.0),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
