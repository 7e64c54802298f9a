"""Generators: elementwise, reductions, matmul, softmax, random graphs, double backward.

A generator takes a ``Builder`` and writes a program whose result is ``out``; it may add more
names to ``b.compare`` (indices, flags) and it sets ``b.backward = False`` when ``out`` has no
gradient to ask for. Options are listed simplest first, because shrinking lowers every draw.
"""
from __future__ import annotations

# unary ops: (expression with {x}, input kind); kinds: normal, positive, unit, prob, nonzero
UNARY = [
    ("{x}.neg()", "normal"), ("torch.abs({x})", "normal"), ("torch.exp({x})", "normal"),
    ("torch.sin({x})", "normal"), ("torch.cos({x})", "normal"), ("torch.tanh({x})", "normal"),
    ("torch.sigmoid({x})", "normal"), ("torch.relu({x})", "normal"), ("torch.square({x})", "normal"),
    ("torch.erf({x})", "normal"), ("torch.atan({x})", "normal"), ("torch.sinh({x})", "normal"),
    ("torch.cosh({x})", "normal"), ("torch.expm1({x})", "normal"), ("torch.floor({x})", "normal"),
    ("torch.ceil({x})", "normal"), ("torch.round({x})", "normal"), ("torch.trunc({x})", "normal"),
    ("torch.frac({x})", "normal"), ("torch.sign({x})", "normal"), ("F.gelu({x})", "normal"),
    ("F.gelu({x}, approximate='tanh')", "normal"), ("F.silu({x})", "normal"),
    ("F.softplus({x})", "normal"), ("F.softplus({x}, beta=2.0, threshold=1.0)", "normal"),
    ("F.elu({x})", "normal"), ("F.leaky_relu({x}, 0.1)", "normal"), ("F.hardtanh({x})", "normal"),
    ("F.mish({x})", "normal"), ("F.softsign({x})", "normal"), ("F.hardswish({x})", "normal"),
    ("F.hardsigmoid({x})", "normal"), ("F.relu6({x})", "normal"), ("F.logsigmoid({x})", "normal"),
    ("F.selu({x})", "normal"), ("F.celu({x}, alpha=0.5)", "normal"), ("torch.clamp({x}, -1.0, 0.5)", "normal"),
    ("{x}.clamp(min=0.25)", "normal"), ("{x}.clamp(max=-0.5)", "normal"), ("{x}.pow(2)", "normal"),
    ("{x}.pow(3)", "normal"), ("{x} ** 0.5", "positive"), ("{x}.pow(-1)", "nonzero"), ("{x}.pow(0)", "normal"),
    ("torch.exp2({x})", "normal"), ("torch.deg2rad({x})", "normal"), ("torch.sinc({x})", "normal"),
    ("torch.logit({x})", "prob"), ("torch.isnan({x})", "normal"), ("torch.isfinite({x})", "normal"),
    ("torch.signbit({x})", "normal"), ("{x}.reciprocal()", "nonzero"), ("torch.log({x})", "positive"),
    ("torch.log2({x})", "positive"), ("torch.log10({x})", "positive"), ("torch.log1p({x})", "positive"),
    ("torch.sqrt({x})", "positive"), ("torch.rsqrt({x})", "positive"), ("torch.lgamma({x})", "positive"),
    ("torch.digamma({x})", "positive"), ("torch.asin({x})", "unit"), ("torch.acos({x})", "unit"),
    ("torch.atanh({x})", "unit"), ("torch.erfinv({x})", "unit"), ("torch.log({x})", "normal"),
    ("torch.sqrt({x})", "normal"), ("F.threshold({x}, 0.5, -1.0)", "normal"), ("F.tanhshrink({x})", "normal"),
    ("F.softshrink({x}, 0.5)", "normal"), ("F.hardshrink({x}, 0.5)", "normal"), ("torch.nan_to_num({x}.log())", "normal"),
    ("torch.erfc({x})", "normal"), ("torch.asinh({x})", "normal"), ("torch.rad2deg({x})", "normal"),
]

BINARY = [
    "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / {b}", "torch.add({a}, {b}, alpha=2)",
    "torch.sub({a}, {b})", "torch.mul({a}, {b})", "torch.div({a}, {b})", "{a} ** {b}",
    "torch.maximum({a}, {b})", "torch.minimum({a}, {b})", "torch.atan2({a}, {b})",
    "{a} // {b}", "{a} % {b}", "torch.fmod({a}, {b})", "torch.remainder({a}, {b})",
    "torch.div({a}, {b}, rounding_mode='floor')", "torch.div({a}, {b}, rounding_mode='trunc')",
    "{a} == {b}", "{a} < {b}", "{a} >= {b}", "torch.ne({a}, {b})", "torch.hypot({a}, {b})",
    "torch.copysign({a}, {b})", "torch.xlogy({a}, {b})", "torch.fmax({a}, {b})",
    "torch.where({a} > {b}, {a}, {b})", "torch.lerp({a}, {b}, 0.25)", "torch.logaddexp({a}, {b})",
    "torch.true_divide({a}, {b})", "{a}.add_({b})", "{a}.mul_({b})", "torch.pow({a}, {b})",
    "torch.logical_and({a}, {b})", "torch.bitwise_and({a}, {b})", "torch.float_power({a}, {b})",
]

SCALARS = ["2", "-1", "0.5", "1.5", "0", "True", "-2.25", "3", "0.0"]


def _float_like(b, shape, dt, kind="normal", base="x"):
    """A leaf of ``shape``: float (with grad), or sometimes an integer or bool tensor."""
    k = b.c.weighted([(12, "float"), (2, "int64"), (1, "bool"), (1, "int32")])
    if k == "float":
        return b.tensor(base, shape, dt, grad=True, kind=kind)
    return b.tensor(base, shape, k, grad=False, kind=kind)


def gen_elementwise(b):
    dt = b.dtype()
    shape = b.shape(0, 3)
    if b.c.chance(0.45):
        expr, kind = b.c.pick(UNARY)
        x = _float_like(b, shape, dt, kind)
        b.tag(expr.split("(")[0].replace("{x}", "x"))
        e = expr.format(x=x)
        if b.c.chance(0.15):
            y = b.name("y")
            b.line(f"{y} = {x} * 1")
            e = expr.format(x=y)
            # the in-place form of the same op, on a non-leaf
            if e.startswith("torch.") and "(" in e and "," not in e and not e.startswith("torch.is"):
                fn = e.split("(")[0].split(".")[-1]
                e = f"{y}.{fn}_()"
        b.line(f"out = {e}")
        return
    op = b.c.pick(BINARY)
    b.tag(op.split("(")[0].replace("{a}", "").replace("{b}", "").strip() or op)
    kind_b = "nonzero" if any(s in op for s in ("/", "%", "fmod", "remainder")) else "normal"
    kind_a = "positive" if ("**" in op or "pow" in op or "xlogy" in op) and b.c.chance(0.7) else "normal"
    a = _float_like(b, shape, dt, kind_a, "a")
    form = b.c.weighted([(6, "tensor"), (3, "scalar"), (2, "zerodim"), (1, "scalar_left")])
    if form == "tensor":
        other = _float_like(b, b.bshape(shape), b.dtype(), kind_b, "b")
    elif form == "zerodim":
        other = _float_like(b, (), b.dtype(), kind_b, "b")
    else:
        other = b.c.pick(SCALARS)
    if form == "scalar_left":
        a, other = other, a
    if "_(" in op:  # in-place on a non-leaf copy of a
        if form == "scalar_left":
            a, other = other, a
        y = b.name("y")
        b.line(f"{y} = {a} * 1" if b.c.chance(0.8) else f"{y} = {a}")
        a = y
    b.line("out = " + op.format(a=a, b=other))


REDUCE_DIM = [  # (method, takes dim tuples, output kind)
    ("sum", True, "v"), ("mean", True, "v"), ("prod", False, "v"), ("amax", True, "v"), ("amin", True, "v"),
    ("max", False, "vi"), ("min", False, "vi"), ("argmax", False, "i"), ("argmin", False, "i"),
    ("std", True, "v"), ("var", True, "v"), ("logsumexp", True, "v"), ("norm", True, "v"),
    ("cumsum", False, "v1"), ("cumprod", False, "v1"), ("median", False, "vi"), ("mode", False, "vi"),
    ("sort", False, "vi1"), ("argsort", False, "i1"), ("all", False, "b"), ("any", False, "b"),
    ("count_nonzero", True, "i"), ("nansum", True, "v"), ("var_mean", True, "vv"), ("std_mean", True, "vv"),
    ("aminmax", False, "vv"), ("cummax", False, "vi1"), ("cummin", False, "vi1"), ("logcumsumexp", False, "v1"),
    ("kthvalue", False, "vik"), ("topk", False, "vik"), ("nanmean", True, "v"), ("softmax", False, "v1"),
    ("diff", False, "v1"),
]


def gen_reduction(b):
    dt = b.dtype()
    shape = b.shape(0, 3, p_empty=0.06)
    name, tuples, kind = b.c.pick(REDUCE_DIM)
    b.tag(name)
    float_in = not (name in ("all", "any") and b.c.chance(0.5))
    if float_in:
        x = _float_like(b, shape, dt, "normal")
    else:
        x = b.tensor("x", shape, "bool", grad=False)
    nd = len(shape)
    args = []
    if name in ("kthvalue", "topk"):
        size = shape[-1] if shape else 1
        args.append(str(b.c.int(1, max(size, 1) + (1 if b.c.chance(0.05) else 0))))
    no_dim_ok = name not in ("cumsum", "cumprod", "softmax", "cummax", "cummin", "logcumsumexp")
    form = b.c.weighted([(3, "dim"), (1 if no_dim_ok else 0, "none"), (1 if tuples else 0, "tuple"),
                         (1, "kw")])
    if form == "dim":
        args.append(str(b.dim(nd)))
    elif form == "tuple":
        dims = sorted({b.dim(nd, p_bad=0.0) for _ in range(b.c.int(1, 2))}) if nd else [0]
        args.append("(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")")
    elif form == "kw":
        args.append(f"dim={b.dim(nd)}")
    if form != "none" and name not in ("cumsum", "cumprod", "sort", "argsort", "softmax", "cummax",
                                        "cummin", "logcumsumexp", "diff") and b.c.chance(0.5):
        args.append("keepdim=" + b.c.pick(["True", "False"]))
    if name in ("std", "var", "var_mean", "std_mean") and b.c.chance(0.4):
        args.append(b.c.pick(["correction=0", "unbiased=False", "correction=2"]))
    if name == "norm" and b.c.chance(0.5):
        args.append("p=" + b.c.pick(["1", "float('inf')", "3", "'fro'", "0"]))
    if name in ("sum", "cumsum", "mean", "prod") and b.c.chance(0.15):
        args.append("dtype=torch.float64")
    if name == "sort" and b.c.chance(0.4):
        args.append("descending=True")
    if name == "softmax" and form == "none":
        args.append("0")
    method = name not in ("var_mean", "std_mean") and b.c.chance(0.7)
    b.line(f"r = {x}.{name}({', '.join(args)})" if method else
           f"r = torch.{name}({', '.join([x] + args)})")
    if kind.startswith("vi") or kind == "vv":
        if form == "none" and name in ("max", "min", "median"):
            b.line("out = r")
        else:
            b.line("out, aux = r")
            b.compare = ["out", "aux"]
            if kind == "vv":
                b.line("out = out + aux")
    else:
        b.line("out = r")
    if kind in ("i", "i1", "b"):
        b.backward = False


def _mm_dims(b):
    return b.c.int(1, 4), b.c.int(1, 4), b.c.int(1, 4)


def _maybe_off(b, n, p=0.06):
    return n + 1 if b.c.chance(p) else n


def gen_matmul(b):
    dt = b.dtype()
    dt2 = dt if not b.c.chance(0.04) else ("float32" if dt == "float64" else "float64")
    m, k, n = _mm_dims(b)
    op = b.c.pick(["mm", "matmul", "bmm", "addmm", "einsum", "at", "dot", "mv", "outer", "linear",
                   "baddbmm", "addmv", "tensordot", "matmul_nd", "inner"])
    b.tag(op)
    if op in ("mm", "at"):
        A = b.tensor("A", (m, k), dt)
        B = b.tensor("B", (_maybe_off(b, k), n), dt2)
        b.line(f"out = torch.mm({A}, {B})" if op == "mm" else f"out = {A} @ {B}")
    elif op == "bmm":
        bs = b.c.int(1, 3)
        A = b.tensor("A", (bs, m, k), dt)
        B = b.tensor("B", (_maybe_off(b, bs) if not b.c.chance(0.05) else 1, _maybe_off(b, k), n), dt2)
        b.line(f"out = torch.bmm({A}, {B})")
    elif op == "matmul":
        ranks = (b.c.int(1, 4), b.c.int(1, 4))
        sa = {1: (k,), 2: (m, k), 3: (b.c.int(1, 3), m, k), 4: (2, 1, m, k)}[ranks[0]]
        kk = _maybe_off(b, k)
        sb = {1: (kk,), 2: (kk, n), 3: (b.c.pick([1, sa[0] if len(sa) == 3 else 2, 3]), kk, n),
              4: (1, 2, kk, n)}[ranks[1]]
        A = b.tensor("A", sa, dt)
        B = b.tensor("B", sb, dt2 if not b.c.chance(0.03) else "int64", grad=True)
        b.line(f"out = torch.matmul({A}, {B})")
    elif op == "matmul_nd":
        A = b.tensor("A", (b.c.int(1, 2), m, k), dt)
        B = b.tensor("B", (k,), dt)
        b.line(f"out = {A}.matmul({B})")
    elif op == "addmm":
        A = b.tensor("A", (m, k), dt)
        B = b.tensor("B", (_maybe_off(b, k), n), dt2)
        bias_shape = b.c.pick([(m, n), (n,), (1, n), (), (m, 1), (_maybe_off(b, n, 0.3),)])
        C = b.tensor("C", bias_shape, dt)
        extra = b.c.pick(["", ", beta=0.5", ", alpha=2", ", beta=0, alpha=1.5"])
        b.line(f"out = torch.addmm({C}, {A}, {B}{extra})")
    elif op == "baddbmm":
        bs = b.c.int(1, 3)
        A = b.tensor("A", (bs, m, k), dt)
        B = b.tensor("B", (bs, _maybe_off(b, k), n), dt2)
        C = b.tensor("C", b.c.pick([(bs, m, n), (m, n), (1, 1, n)]), dt)
        b.line(f"out = torch.baddbmm({C}, {A}, {B}, beta=0.5, alpha=2)")
    elif op == "einsum":
        eq, shapes = b.c.pick([
            ("ij,jk->ik", [(m, k), (k, n)]), ("bij,bjk->bik", [(2, m, k), (2, k, n)]),
            ("i,i->", [(k,), (k,)]), ("ij->ji", [(m, k)]), ("ii->i", [(k, k)]), ("ij,ij->i", [(m, k), (m, k)]),
            ("i,j->ij", [(m,), (n,)]), ("bhij,bhjk->bhik", [(1, 2, m, k), (1, 2, k, n)]),
            ("...ij,...jk->...ik", [(2, m, k), (k, n)]), ("ij->", [(m, k)]), ("ijk->kji", [(m, k, n)]),
            ("ij,kj->ik", [(m, k), (n, k)]), ("ii", [(k, k)]), ("ij,jk", [(m, k), (k, n)]),
            ("ij,jk->ik", [(m, k), (k + 1, n)]), ("b i j, b j k -> b i k", [(2, m, k), (2, k, n)]),
        ])
        names = [b.tensor(c, s, dt) for c, s in zip("ABC", shapes)]
        if b.c.chance(0.3):
            b.line(f"out = torch.einsum('{eq}', [{', '.join(names)}])")
        else:
            b.line(f"out = torch.einsum('{eq}', {', '.join(names)})")
    elif op == "dot":
        A = b.tensor("A", (k,), dt)
        B = b.tensor("B", (_maybe_off(b, k),), dt2)
        b.line(f"out = torch.dot({A}, {B})")
    elif op == "inner":
        A = b.tensor("A", (m, k), dt)
        B = b.tensor("B", (_maybe_off(b, k),), dt2)
        b.line(f"out = torch.inner({A}, {B})")
    elif op == "mv":
        A = b.tensor("A", (m, k), dt)
        B = b.tensor("B", (_maybe_off(b, k),), dt2)
        b.line(f"out = torch.mv({A}, {B})")
    elif op == "addmv":
        A = b.tensor("A", (m, k), dt)
        B = b.tensor("B", (k,), dt2)
        C = b.tensor("C", b.c.pick([(m,), (), (1,)]), dt)
        b.line(f"out = torch.addmv({C}, {A}, {B}, beta=2)")
    elif op == "outer":
        A = b.tensor("A", (m,), dt)
        B = b.tensor("B", (n,) if not b.c.chance(0.05) else (n, 1), dt2)
        b.line(f"out = torch.outer({A}, {B})")
    elif op == "tensordot":
        A = b.tensor("A", (m, k, 2), dt)
        B = b.tensor("B", (k, 2, n), dt2)
        b.line(f"out = torch.tensordot({A}, {B}, dims={b.c.pick(['2', '([1, 2], [0, 1])', '0'])})")
    else:  # linear
        batch = b.c.pick([(m,), (), (2, m)])
        X = b.tensor("X", batch + (k,), dt)
        W = b.tensor("W", (n, _maybe_off(b, k)), dt2)
        bias = b.tensor("bias", (n,), dt) if b.c.chance(0.6) else "None"
        b.line(f"out = F.linear({X}, {W}, {bias})")


def gen_softmax(b):
    dt = b.dtype()
    shape = b.shape(0, 3, p_empty=0.05)
    x = b.tensor("x", shape, dt)
    nd = len(shape)
    fn = b.c.pick(["F.softmax", "F.log_softmax", "torch.softmax", "torch.log_softmax", "method",
                   "F.softmin", "log_method", "nn.Softmax"])
    b.tag(fn)
    d = b.dim(max(nd, 1))
    extra = ", dtype=torch.float64" if b.c.chance(0.1) else ""
    if fn == "method":
        b.line(f"out = {x}.softmax({d}{extra})")
    elif fn == "log_method":
        b.line(f"out = {x}.log_softmax(dim={d}{extra})")
    elif fn == "nn.Softmax":
        b.line(f"out = nn.Softmax(dim={d})({x})")
    elif fn.startswith("F.") and b.c.chance(0.06):
        b.line(f"out = {fn}({x})")   # implicit dim: PyTorch warns and picks one
    else:
        b.line(f"out = {fn}({x}, dim={d}{extra})")
    if b.c.chance(0.3):
        b.line("out = out * out" if b.c.chance(0.5) else "out = out.sum(-1 if out.dim() else 0)")


GRAPH_UNARY = ["torch.tanh({})", "torch.sigmoid({})", "torch.exp({} * 0.5)", "torch.relu({})", "{} * {}",
               "{} * 2.5", "torch.sin({})", "F.gelu({})", "{}.abs()", "{} - 1.0", "torch.log1p({}.abs())",
               "{}.clamp(-1, 1)", "{}.pow(2)", "F.softplus({})", "{}.detach()", "-{}", "{}.sqrt()"]


def gen_graph(b):
    """A chain of several ops over one or two leaves, with intermediates used more than once."""
    dt = b.dtype()
    shape = list(b.shape(1, 3, p_empty=0.0))
    x = b.tensor("x", tuple(shape), dt)
    vals = [x]
    shapes = {x: tuple(shape)}
    w = b.tensor("w", tuple(shape), dt) if b.c.chance(0.5) else None
    if w:
        vals.append(w)
        shapes[w] = tuple(shape)
    nops = b.c.int(2, 6)
    cur = x
    for i in range(nops):
        nm = f"h{i}"
        op = b.c.weighted([(6, "unary"), (3, "binary"), (2, "reduce"), (2, "matmul"), (2, "view"),
                           (1, "softmax"), (1, "cat"), (1, "inplace"), (1, "index")])
        b.tag(op)
        if op == "unary":
            b.line(f"{nm} = " + b.c.pick(GRAPH_UNARY).format(cur, cur))
        elif op == "binary":
            other = b.c.pick(vals)
            sym = b.c.pick(['+', '*', '-'])
            same = shapes.get(other) == tuple(shape)
            b.line(f"{nm} = {cur} {sym} {other}" if same else f"{nm} = {cur} {sym} {other}.sum()")
        elif op == "reduce":
            d = b.c.int(0, len(shape) - 1)
            r = b.c.pick(["sum", "mean", "amax", "logsumexp", "std", "norm"])
            b.line(f"{nm} = {cur} - {cur}.{r}({d}, keepdim=True)" if r != "norm" else
                   f"{nm} = {cur} / ({cur}.norm(dim={d}, keepdim=True) + 1)")
        elif op == "matmul":
            k = b.c.int(1, 3)
            W = b.tensor("W", (shape[-1], k), dt)
            b.line(f"{nm} = {cur} @ {W}")
            shape[-1] = k
        elif op == "view":
            if len(shape) >= 2 and b.c.chance(0.5):
                b.line(f"{nm} = {cur}.transpose(0, -1)")
                shape[0], shape[-1] = shape[-1], shape[0]
            else:
                b.line(f"{nm} = {cur}.reshape(-1).reshape({tuple(shape)})")
        elif op == "softmax":
            b.line(f"{nm} = F.log_softmax({cur}, dim=-1)" if b.c.chance(0.5) else f"{nm} = {cur}.softmax(-1)")
        elif op == "cat":
            b.line(f"{nm} = torch.cat([{cur}, {cur} * 2], dim=-1)")
            shape[-1] *= 2
        elif op == "inplace":
            b.line(f"{nm} = {cur} * 1")
            b.line(f"{nm}.{b.c.pick(['mul_(2)', 'add_(1)', 'clamp_(-1, 1)', 'relu_()', 'sigmoid_()'])}")
        else:
            b.line(f"{nm} = {cur}[..., :1] * {cur}")
        vals.append(nm)
        shapes[nm] = tuple(shape)
        cur = nm
    if b.c.chance(0.3):
        b.line(f"out = {cur}.sum() + {b.c.pick(vals)}.mean()")
    else:
        b.line(f"out = {cur}")


DOUBLE = [  # (expression of x (and w), kind)
    ("torch.tanh({x})", "normal"), ("torch.sigmoid({x})", "normal"), ("torch.exp({x})", "normal"),
    ("torch.sin({x})", "normal"), ("{x} * {x} * {x}", "normal"), ("{x} ** 3", "normal"),
    ("torch.log({x})", "positive"), ("torch.sqrt({x})", "positive"), ("F.softplus({x})", "normal"),
    ("F.gelu({x})", "normal"), ("F.silu({x})", "normal"), ("F.elu({x})", "normal"),
    ("torch.softmax({x}, -1)", "normal"), ("F.log_softmax({x}, -1)", "normal"), ("{x} @ {x}.t()", "normal"),
    ("{x} * {w}", "normal"), ("({x} * {w}).sum(-1)", "normal"), ("{x}.norm()", "nonzero"),
    ("torch.logsumexp({x}, -1)", "normal"), ("torch.cos({x}) * {w}", "normal"), ("{x}.pow(2).mean()", "normal"),
    ("F.mse_loss({x}, {w})", "normal"), ("torch.relu({x}) * {x}", "normal"), ("torch.atan({x})", "normal"),
    ("torch.reciprocal({x})", "nonzero"), ("{x}.prod(-1)", "normal"), ("torch.erf({x})", "normal"),
    ("F.layer_norm({x}, {x}.shape[-1:])", "normal"), ("{x}.std(-1)", "normal"), ("torch.cumsum({x} * {x}, -1)", "normal"),
    ("F.cross_entropy({x}, torch.zeros({x}.shape[0], dtype=torch.long))", "normal"), ("{x}.max(-1)[0] * {x}.sum()", "normal"),
    ("torch.abs({x}) ** 1.5", "nonzero"), ("torch.lgamma({x})", "positive"), ("F.logsigmoid({x})", "normal"),
]


def gen_double_backward(b):
    dt = b.dtype(p32=0.2)
    shape = b.shape(2, 2, p_empty=0.0) if b.c.chance(0.6) else b.shape(1, 1, p_empty=0.0)
    expr, kind = b.c.pick(DOUBLE)
    b.tag(expr.split("(")[0])
    x = b.tensor("x", shape, dt, kind=kind)
    w = None
    if "{w}" in expr:
        w = b.tensor("w", shape, dt)
    b.line(f"y = {expr.format(x=x, w=w)}")
    form = b.c.pick(["weighted", "grad_outputs", "both"])
    if form == "weighted":
        b.line(f"g = torch.autograd.grad((y * torch.linspace(0.5, 1.5, y.numel(), dtype=y.dtype).reshape(y.shape)).sum(), {x}, create_graph=True)[0]")
    elif form == "grad_outputs":
        b.line(f"g, = torch.autograd.grad(y, {x}, grad_outputs=torch.ones_like(y), create_graph=True)")
    else:
        tgt = f"[{x}, {w}]" if w else f"[{x}]"
        b.line(f"gs = torch.autograd.grad(y.sum(), {tgt}, create_graph=True)")
        b.line("g = gs[0] + gs[-1]")
    b.line("out = g" if b.c.chance(0.6) else "out = (g * g).sum()")
