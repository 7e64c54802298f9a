"""Generators: indexing (get and set), gather/scatter, views, in-place on views and saved tensors."""
from __future__ import annotations

import numpy as np


def _index_expr(b, x, shape):
    """A subscript for a tensor of ``shape``: basic, advanced, masks, None, Ellipsis, mixed."""
    nd = len(shape)
    kind = b.c.weighted([(4, "int"), (4, "slice"), (3, "adv"), (2, "mask"), (2, "mixed"),
                         (1, "none"), (1, "ellipsis"), (1, "zerodim"), (1, "list"), (1, "bool")])
    b.tag("index_" + kind)
    if nd == 0 and kind not in ("none", "ellipsis", "bool", "mask"):
        kind = "ellipsis"
    if kind == "int":
        i = b.c.int(-shape[0], max(shape[0] - 1, 0)) if shape[0] else 0
        if b.c.chance(0.05):
            i = shape[0]
        return f"[{i}]" if nd == 1 or b.c.chance(0.5) else f"[{i}, {b.c.int(0, max(shape[1] - 1, 0))}]"
    if kind == "slice":
        parts = []
        for d in range(b.c.int(1, nd)):
            s = shape[d]
            lo = b.c.pick(["", "1", "-2", "0", str(s)])
            hi = b.c.pick(["", "-1", "2", str(s + 3)])
            st = b.c.pick(["", ":2", ":3", ":-1" if b.c.chance(0.2) else ":1"] if b.c.chance(0.3) else [""])
            parts.append(f"{lo}:{hi}{st}")
        return "[" + ", ".join(parts) + "]"
    if kind == "adv":
        idx = b.index("i", (b.c.int(0, 4),) if b.c.chance(0.8) else (2, 2), shape[0], p_bad=0.05)
        if b.c.chance(0.3) and shape[0]:
            idx = b.index("i", (b.c.int(1, 3),), shape[0], low=-shape[0])
        if nd >= 2 and b.c.chance(0.4):
            j = b.index("j", (1,) if b.c.chance(0.5) else (2,), shape[1])
            return f"[{idx}, {j}]" if b.c.chance(0.5) else f"[:, {j}]"
        return f"[{idx}]"
    if kind == "mask":
        if b.c.chance(0.5):
            return f"[{b.mask('m', shape)}]"
        if b.c.chance(0.3):
            return f"[{x} > 0]"
        return f"[{b.mask('m', shape[:1])}]"
    if kind == "mixed":
        if nd >= 3:
            i = b.index("i", (2,), shape[0])
            j = b.index("j", (2,), shape[2])
            return b.c.pick([f"[{i}, :, {j}]", f"[:, 1:, {j}]", f"[..., {j}]", f"[{i}, 0]"])
        if nd == 2:
            i = b.index("i", (b.c.int(1, 3),), shape[1])
            return b.c.pick([f"[1:, {i}]", f"[0, {i}]", f"[None, :, {i}]", f"[-1, ..., {i}]"])
        return "[None, ..., ::2]"
    if kind == "none":
        return b.c.pick(["[None]", "[..., None]", "[:, None]" if nd else "[None, None]"])
    if kind == "ellipsis":
        return b.c.pick(["[...]", "[..., 0]" if nd else "[..., None]", "[0, ...]" if nd else "[()]"])
    if kind == "zerodim":
        return f"[torch.tensor({b.c.int(0, max(shape[0] - 1, 0))})]"
    if kind == "list":
        return f"[[{', '.join(str(b.c.int(0, max(shape[0] - 1, 0))) for _ in range(b.c.int(1, 3)))}]]"
    return b.c.pick(["[True]", "[False]"])


def gen_indexing(b):
    dt = b.dtype()
    shape = b.shape(0, 3, p_empty=0.04)
    x = b.tensor("x", shape, dt)
    sub = _index_expr(b, x, shape)
    if b.c.chance(0.5):
        b.line(f"out = {x}{sub}")
        if b.c.chance(0.3):
            b.line("out = out * 2")
        return
    b.tag("setitem")
    b.line(f"y = {x} * 1" if b.c.chance(0.9) else f"y = {x}")
    form = b.c.pick(["scalar", "tensor", "index_put", "masked_fill", "inplace_view"])
    if form == "scalar":
        val = b.c.pick(["0.0", "1.5", "-2", "float('inf')"])
        b.line(f"y{sub} = {val}")
    elif form == "tensor":
        b.line(f"sel = y{sub}")
        vshape = b.c.pick(["sel.shape", "sel.shape[-1:]", "()", "(1,)"])
        v = b.name("v")
        b.inputs.append(f"{v} = None")
        b.line(f"{v} = torch.linspace(-1.0, 1.0, int(torch.Size({vshape}).numel()), dtype=torch.{dt}).reshape({vshape}).requires_grad_()")
        b.leaves.append(v)
        b.line(f"y{sub} = {v} * 3")
    elif form == "index_put":
        if not shape or not shape[0]:
            b.line("y[...] = 2.0")
        else:
            idx = b.index("i", (b.c.int(1, 4),), shape[0])
            acc = b.c.pick(["True", "False"])
            vals = b.tensor("v", (1,) + tuple(shape[1:]), dt)
            b.line(f"y.index_put_(({idx},), {vals}, accumulate={acc})")
            if acc == "False":  # duplicates would make the result order-dependent
                b.inputs[-2] = b.inputs[-2].replace("tensor([", "tensor(sorted(set([", 1).replace("], dtype=torch.int64)", "])), dtype=torch.int64)", 1)
    elif form == "masked_fill":
        m = b.mask("m", b.bshape(shape, p_bad=0.03))
        b.line(f"y = y.masked_fill({m}, {b.c.pick(['0.0', '-1e9', '2.5'])})" if b.c.chance(0.6)
               else f"y.masked_fill_({m}, 0.5)")
    else:
        b.line(f"sel = y{sub}")
        b.line("sel.mul_(2)")
    b.line("out = y")


def _dup_free_index(b, shape, dim, size_along):
    """Index for scatter without a reduce: distinct along ``dim`` (duplicates are order-dependent)."""
    rng = np.random.default_rng(len(b.inputs) * 7919 + int(np.prod(shape) if shape else 1))
    if not shape:
        return b.index("idx", (), size_along)
    if size_along == 0:
        return b.index("idx", shape, 1)
    moved = np.moveaxis(np.zeros(shape, dtype=np.int64), dim, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    for r in range(flat.shape[0]):
        flat[r] = rng.permutation(size_along)[:moved.shape[-1]]
    vals = np.moveaxis(flat.reshape(moved.shape), -1, dim)
    name = b.name("idx")
    b.inputs.append(f"{name} = torch.tensor({vals.tolist()!r}, dtype=torch.int64)")
    return name


def gen_gather_scatter(b):
    dt = b.dtype()
    shape = b.shape(1, 3)
    nd = len(shape)
    d = b.dim(nd, p_bad=0.02)
    dd = d % nd if -nd <= d < nd else 0
    op = b.c.pick(["gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
                   "take", "take_along_dim", "masked_select", "index_copy", "index_fill", "scatter_value",
                   "masked_scatter", "put"])
    b.tag(op)
    x = b.tensor("x", shape, dt)
    ishape = tuple(b.c.int(1, s) if s else 0 for s in shape)
    if b.c.chance(0.05):
        ishape = tuple(s + 1 for s in shape)
    size = shape[dd]
    if op == "gather":
        idx = b.index("idx", ishape, size, p_bad=0.04)
        b.line(f"out = torch.gather({x}, {d}, {idx})" if b.c.chance(0.5) else f"out = {x}.gather({d}, {idx})")
    elif op == "take_along_dim":
        idx = b.index("idx", ishape, size, p_bad=0.03)
        b.line(f"out = torch.take_along_dim({x}, {idx}, dim={d})")
    elif op in ("scatter", "scatter_value"):
        ishape = tuple(min(a, bb) for a, bb in zip(ishape, shape))
        idx = _dup_free_index(b, ishape, dd, size)
        if op == "scatter":
            src = b.tensor("src", ishape, dt)
            b.line(f"out = torch.scatter({x}, {d}, {idx}, {src})" if b.c.chance(0.6)
                   else f"out = ({x} * 1).scatter_({d}, {idx}, {src})")
        else:
            b.line(f"out = {x}.scatter({d}, {idx}, {b.c.pick(['0.5', '-2.0'])})")
    elif op == "scatter_add":
        idx = b.index("idx", ishape, size, p_bad=0.04)
        src = b.tensor("src", ishape if not b.c.chance(0.3) else shape, dt)
        b.line(f"out = torch.scatter_add({x}, {d}, {idx}, {src})")
    elif op == "scatter_reduce":
        idx = b.index("idx", ishape, size)
        src = b.tensor("src", ishape, dt)
        red = b.c.pick(["sum", "prod", "mean", "amax", "amin"])
        b.line(f"out = {x}.scatter_reduce({d}, {idx}, {src}, reduce='{red}', include_self={b.c.pick(['True', 'False'])})")
    elif op == "index_select":
        idx = b.index("idx", (b.c.int(0, 4),) if b.c.chance(0.9) else (), size, p_bad=0.04)
        b.line(f"out = torch.index_select({x}, {d}, {idx})")
    elif op == "index_add":
        n = b.c.int(1, 4)
        idx = b.index("idx", (n,), size, p_bad=0.03)
        sshape = list(shape)
        sshape[dd] = n
        src = b.tensor("src", tuple(sshape), dt)
        b.line(f"out = {x}.index_add({d}, {idx}, {src}, alpha=2)")
    elif op == "index_copy":
        n = min(size, b.c.int(1, 3))
        sshape = list(shape)
        sshape[dd] = n
        name = b.name("idx")
        perm = np.random.default_rng(size * 31 + n).permutation(max(size, 1))[:n].tolist()
        b.inputs.append(f"{name} = torch.tensor({perm!r}, dtype=torch.int64)")
        src = b.tensor("src", tuple(sshape), dt)
        b.line(f"out = {x}.index_copy({d}, {name}, {src})")
    elif op == "index_fill":
        idx = b.index("idx", (b.c.int(1, 3),), size)
        b.line(f"out = {x}.index_fill({d}, {idx}, -1.5)")
    elif op == "take":
        n = int(np.prod(shape))
        idx = b.index("idx", ishape, n, low=-n, p_bad=0.04)
        b.line(f"out = torch.take({x}, {idx})")
    elif op == "put":
        n = int(np.prod(shape))
        idx = b.index("idx", (b.c.int(1, 3),), n)
        b.line(f"out = ({x} * 1).put_({idx}, torch.ones({idx}.shape, dtype=torch.{dt}), accumulate=True)")
    elif op == "masked_select":
        m = b.mask("m", b.bshape(shape, p_bad=0.03))
        b.line(f"out = torch.masked_select({x}, {m})" if b.c.chance(0.5) else f"out = {x}.masked_select({m})")
    else:  # masked_scatter
        m = b.mask("m", shape)
        src = b.tensor("src", shape, dt)
        b.line(f"out = {x}.masked_scatter({m}, {src})")


def _view_op(b, cur, shape):
    """One view op on ``cur`` of ``shape``: (expression, new shape or None when unknown, is_multi)."""
    nd = len(shape)
    op = b.c.pick(["view", "reshape", "transpose", "permute", "narrow", "expand", "split", "chunk",
                   "unbind", "squeeze", "unsqueeze", "flatten", "unflatten", "movedim", "t", "diagonal",
                   "unfold", "select", "T", "view_neg", "contiguous", "mT", "swapaxes"])
    if op in ("t", "mT", "diagonal") and nd < 2 and b.c.chance(0.8):
        op = "T"
    b.tag(op)
    n = int(np.prod(shape)) if shape else 1
    if op in ("view", "reshape"):
        tgt = b.c.pick([(n,), (-1,), (1, n), (n, 1), (-1, 1), tuple(reversed(shape)), (2, -1), (n + 1,)])
        new = tuple(n // max(1, -int(np.prod(tgt))) if t == -1 else t for t in tgt) if -1 in tgt else tgt
        return f"{cur}.{op}({', '.join(map(str, tgt))})", (new if int(np.prod(new)) == n and not (
            -1 in tgt and n % 2 and 2 in tgt) else None), False
    if op == "view_neg":
        return f"{cur}.view(-1)", (n,), False
    if op == "contiguous":
        return f"{cur}.contiguous()", shape, False
    if nd == 0:
        return f"{cur}.unsqueeze({b.c.pick([0, -1, 1])})", (1,), False
    d0, d1 = b.dim(nd), b.dim(nd)
    a0, a1 = d0 % nd if -nd <= d0 < nd else None, d1 % nd if -nd <= d1 < nd else None
    if op in ("transpose", "swapaxes", "movedim"):
        new = None
        if a0 is not None and a1 is not None:
            s = list(shape)
            if op == "movedim":
                v = s.pop(a0)
                s.insert(a1, v)
            else:
                s[a0], s[a1] = s[a1], s[a0]
            new = tuple(s)
        return f"{cur}.{op}({d0}, {d1})", new, False
    if op == "permute":
        perm = list(np.random.default_rng(nd * 13 + b.c.int(0, 5)).permutation(nd))
        if b.c.chance(0.05):
            perm = perm[:-1]
        new = tuple(shape[p] for p in perm) if len(perm) == nd else None
        return f"{cur}.permute({', '.join(map(str, perm))})" if b.c.chance(0.5) else f"{cur}.permute({tuple(map(int, perm))})", new, False
    if op in ("t", "T", "mT"):
        new = tuple(reversed(shape)) if op != "mT" else (tuple(shape[:-2]) + (shape[-1], shape[-2]) if nd >= 2 else None)
        return (f"{cur}.t()" if op == "t" else f"{cur}.{op}"), (new if (op != "t" or nd <= 2) else None), False
    if op == "narrow":
        size = shape[a0] if a0 is not None else 1
        start = b.c.int(-size, size) if size else 0
        length = b.c.int(0, size + 1)
        ok = a0 is not None and (start % max(size, 1) if start < 0 else start) + length <= size
        new = tuple(length if i == a0 else s for i, s in enumerate(shape)) if ok else None
        return f"{cur}.narrow({d0}, {start}, {length})", new, False
    if op == "expand":
        tgt = [b.c.pick([s, -1] if s != 1 else [3, -1, 1]) for s in shape]
        if b.c.chance(0.3):
            tgt = [2] + tgt
        if b.c.chance(0.05):
            tgt[-1] = shape[-1] + 1
        new = tuple(shape[i - (len(tgt) - nd)] if t == -1 else t for i, t in enumerate(tgt))
        return f"{cur}.expand({', '.join(map(str, tgt))})", new, False
    if op in ("split", "chunk"):
        k = b.c.int(0 if b.c.chance(0.03) else 1, 3)
        if op == "split" and b.c.chance(0.3) and a0 is not None:
            first = b.c.int(0, shape[a0])
            k = f"[{first}, {shape[a0] - first + (1 if b.c.chance(0.05) else 0)}]"
        return f"{cur}.{op}({k}, {d0})", None, True
    if op == "unbind":
        return f"{cur}.unbind({d0})", None, True
    if op == "squeeze":
        if b.c.chance(0.3):
            return f"{cur}.squeeze()", tuple(s for s in shape if s != 1), False
        new = tuple(s for i, s in enumerate(shape) if not (i == a0 and s == 1)) if a0 is not None else None
        return f"{cur}.squeeze({d0})", new, False
    if op == "unsqueeze":
        d = b.c.int(-nd - 1, nd)
        s = list(shape)
        s.insert(d if d >= 0 else nd + 1 + d, 1)
        return f"{cur}.unsqueeze({d})", tuple(s), False
    if op == "flatten":
        return f"{cur}.flatten({b.c.pick([0, -1, 1 if nd > 1 else 0, -nd])})", None, False
    if op == "unflatten":
        size = shape[a0] if a0 is not None else 1
        sizes = b.c.pick([(1, size), (size, 1), (-1, 1), (2, -1)])
        return f"{cur}.unflatten({d0}, {sizes})", None, False
    if op == "diagonal":
        return f"{cur}.diagonal({b.c.pick([0, 1, -1])})" if nd >= 2 else f"{cur}.diagonal()", None, False
    if op == "unfold":
        size = shape[a0] if a0 is not None else 1
        return f"{cur}.unfold({d0}, {b.c.int(1, max(size, 1))}, {b.c.int(1, 2)})", None, False
    i = b.c.int(-shape[a0], shape[a0] - 1) if a0 is not None and shape[a0] else 0
    return f"{cur}.select({d0}, {i})", tuple(s for j, s in enumerate(shape) if j != a0) if a0 is not None and shape[a0] else None, False


def gen_views(b):
    dt = b.dtype()
    shape = b.shape(0, 3, p_empty=0.03)
    x = b.tensor("x", shape, dt)
    cur, cur_shape = x, shape
    if b.c.chance(0.5):
        b.line(f"y = {x} * 1")
        cur = "y"
    for i in range(b.c.int(1, 3)):
        expr, new, multi = _view_op(b, cur, cur_shape)
        v = f"v{i}"
        if multi:
            b.line(f"parts = {expr}")
            b.line("n = len(parts)")
            b.compare = ["out", "n"]
            pick = b.c.pick(["0", "-1"])
            b.line(f"{v} = parts[{pick}]")
            new = None
        else:
            b.line(f"{v} = {expr}")
        cur, cur_shape = v, new
        if new is None:
            break
    if b.c.chance(0.35):
        b.line(f"out = {cur} * torch.linspace(1.0, 2.0, {cur}.numel(), dtype=torch.{dt}).reshape({cur}.shape)")
    else:
        b.line(f"out = {cur}")
    if b.c.chance(0.3):
        # strides of size-1 dims carry no meaning (PyTorch's own is_contiguous ignores them)
        b.line("meta = (out.is_contiguous(), [s for s, n in zip(out.stride(), out.shape) if n > 1])")
        b.compare = b.compare + ["meta"]


SAVING = [  # ops that save their input or output for backward
    "{y}.sin()", "{y} * {w}", "{y}.exp()", "torch.relu({y})", "torch.sigmoid({y})", "{y}.pow(2)",
    "torch.tanh({y})", "{y} @ {w}.t()" , "{y}.sum() * {y}", "{y}.div({w})", "{y}.cos()", "{y} + {w}",
    "{y} * 2", "{y}.clone()", "{y}.abs()", "{y}.max()", "{y}[0]", "F.softmax({y}, -1)",
]
INPLACE = ["mul_(2)", "add_(1)", "zero_()", "copy_({w})", "clamp_(-0.5, 0.5)", "relu_()", "sigmoid_()",
           "exp_()", "fill_(1.0)", "neg_()", "sub_({w}, alpha=2)", "masked_fill_({w} > 0, 0.0)", "tanh_()",
           "div_(2)", "pow_(2)", "__setitem__(0, 1.0)"]


def gen_inplace(b):
    """In-place ops on tensors saved for backward, on views, on leaves, and after detach."""
    dt = b.dtype()
    shape = b.shape(1, 2, lo=2, hi=3, p_empty=0.0)
    x = b.tensor("x", shape, dt)
    w = b.tensor("w", shape, dt, grad=b.c.chance(0.5))
    ip = b.c.pick(INPLACE).format(w=w)
    b.tag(ip.split("(")[0])
    form = b.c.pick(["saved", "view_then_base", "base_then_view", "detach", "leaf", "no_grad_leaf",
                     "multi_view", "expand", "view_detach", "data", "chain"])
    b.tag(form)
    if form == "saved":
        b.line(f"y = {x} * 1" if b.c.chance(0.8) else f"y = {x}.exp()")
        sv = b.c.pick(SAVING).format(y="y", w=w)
        b.line(f"z = {sv}")
        b.line(f"{'y' if b.c.chance(0.7) else 'z'}.{ip}")
        b.line("out = z")
    elif form == "view_then_base":
        b.line(f"y = {x} * 1")
        b.line(f"v = y{b.c.pick(['[0]', '[:, :1]' if len(shape) > 1 else '[1:]', '.view(-1)', '.t()' if len(shape) == 2 else '[...]', '.transpose(0, -1)', '.unsqueeze(0)', '.narrow(0, 0, 1)', '.diagonal()' if len(shape) == 2 else '[::2]', '.squeeze()', '.expand_as(y)'])}")
        b.line(f"v.{ip}")
        b.line(b.c.pick(["out = y", "out = v", "out = y * v.sum()"]))
    elif form == "base_then_view":
        b.line(f"y = {x} * 1")
        b.line(f"v = y{b.c.pick(['[0]', '.view(-1)', '[..., :1]', '.transpose(0, -1)'])}")
        b.line(f"y.{ip}")
        b.line(b.c.pick(["out = v", "out = v * y.sum()"]))
    elif form == "detach":
        b.line(f"y = {x} * 2")
        b.line("d = y.detach()")
        b.line(f"d.{ip}")
        b.line("out = y * y")
    elif form == "view_detach":
        b.line(f"y = {x} * 1")
        b.line(f"y.view({int(np.prod(shape))}).detach().{ip}")
        b.line("out = y * 3")
    elif form == "leaf":
        b.line(f"{x}.{ip}")
        b.line(f"out = {x} * 2")
    elif form == "no_grad_leaf":
        b.line("with torch.no_grad():")
        b.line(f"    {x}.{ip}")
        b.line(f"out = {x} * {x}")
    elif form == "multi_view":
        b.line(f"y = {x} * 1")
        b.line(f"p = y.{b.c.pick(['chunk(2)', 'split(1)', 'unbind(0)', 'chunk(1)', 'split(5)'])}")
        b.line(f"p[0].{ip}")
        b.line("out = y")
    elif form == "expand":
        b.line(f"y = ({x} * 1)[:1].expand({', '.join(map(str, shape))})")
        b.line(f"y.{ip}")
        b.line("out = y")
    elif form == "data":
        b.line(f"y = {x} * 1")
        b.line("z = y.sin()")
        b.line(f"y.data.{ip}")
        b.line("out = z")
    else:  # a chain of in-place ops whose result is the output
        b.line(f"y = {x} * 1")
        b.line(f"out = y.{ip}.mul_(3).{b.c.pick(['add_(1)', 'sigmoid_()', 'exp_()', 'abs_()', 'sin_()'])}")
    if b.c.chance(0.3):
        b.line("ver = out._version")
        b.compare = ["out", "ver"]
