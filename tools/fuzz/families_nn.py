"""Generators: losses, convolution and pooling, normalisation."""
from __future__ import annotations


def gen_loss(b):
    dt = b.dtype()
    n = b.c.int(1, 4) if not b.c.chance(0.04) else 0
    c = b.c.int(2, 4)
    red = b.c.pick(["'mean'", "'sum'", "'none'"])
    loss = b.c.pick(["mse", "l1", "cross_entropy", "nll", "bce", "smooth_l1", "huber", "bce_logits",
                     "kl_div", "module_mse", "cross_entropy_probs", "soft_margin", "poisson_nll",
                     "cosine_embedding", "margin_ranking", "gaussian_nll"])
    b.tag(loss)
    if b.c.chance(0.7):
        r = f", reduction={red}"
    else:
        r = ""
    if loss in ("mse", "l1", "smooth_l1", "huber", "module_mse", "soft_margin"):
        ishape = b.c.pick([(n,), (n, c), (n, 1), ()])
        tshape = b.c.weighted([(6, ishape), (2, (n,)), (2, (n, 1)), (1, (1,)), (1, (c, n))])
        x = b.tensor("x", ishape, dt)
        t = b.tensor("t", tshape, dt if not b.c.chance(0.05) else ("float32" if dt == "float64" else "float64"),
                     grad=loss != "soft_margin" and b.c.chance(0.3), kind="unit" if loss == "soft_margin" else "normal")
        extra = {"smooth_l1": b.c.pick(["", ", beta=0.5", ", beta=2.0"]),
                 "huber": b.c.pick(["", ", delta=0.5"])}.get(loss, "")
        if loss == "module_mse":
            b.line(f"out = nn.MSELoss({r[2:]})({x}, {t})")
        else:
            b.line(f"out = F.{loss}_loss({x}, {t}{r}{extra})")
    elif loss in ("cross_entropy", "nll"):
        form = b.c.pick(["nc", "c", "ncd"])
        ishape = {"nc": (n, c), "c": (c,), "ncd": (n, c, b.c.int(1, 3))}[form]
        tshape = {"nc": (n,), "c": (), "ncd": (n, ishape[-1])}[form]
        if b.c.chance(0.05):
            tshape = (n, 1)
        x = b.tensor("x", ishape, dt)
        t = b.index("t", tshape, c, p_bad=0.04)
        extra = ""
        if b.c.chance(0.25):
            extra += f", weight={b.tensor('wt', (c,), dt, grad=False, kind='positive')}"
        if b.c.chance(0.2):
            extra += f", ignore_index={b.c.pick([0, 1, -1])}"
        if loss == "cross_entropy" and b.c.chance(0.2):
            extra += ", label_smoothing=0.1"
        inp = x if loss == "cross_entropy" else f"F.log_softmax({x}, {1 if form != 'c' else 0})"
        b.line(f"out = F.{'cross_entropy' if loss == 'cross_entropy' else 'nll_loss'}({inp}, {t}{r}{extra})")
    elif loss == "cross_entropy_probs":
        x = b.tensor("x", (n, c), dt)
        t = b.tensor("t", (n, c) if not b.c.chance(0.05) else (n, c + 1), dt, grad=False, kind="prob")
        ls = ", label_smoothing=0.2" if b.c.chance(0.3) else ""
        b.line(f"out = F.cross_entropy({x}, {t}{r}{ls})")
    elif loss in ("bce", "bce_logits"):
        ishape = b.c.pick([(n,), (n, c), (n, 1)])
        tshape = b.c.weighted([(6, ishape), (1, (n,)), (1, (n, 1))])
        x = b.tensor("x", ishape, dt, kind="prob" if loss == "bce" else "normal")
        t = b.tensor("t", tshape, dt, grad=False, kind="prob")
        extra = ""
        if b.c.chance(0.2):
            extra += f", weight={b.tensor('wt', ishape[-1:], dt, grad=False, kind='positive')}"
        if loss == "bce_logits" and b.c.chance(0.2):
            extra += f", pos_weight={b.tensor('pw', ishape[-1:], dt, grad=False, kind='positive')}"
        fn = "binary_cross_entropy" if loss == "bce" else "binary_cross_entropy_with_logits"
        b.line(f"out = F.{fn}({x}, {t}{r}{extra})")
    elif loss == "kl_div":
        x = b.tensor("x", (n, c), dt)
        lt = b.c.chance(0.3)
        t = b.tensor("t", (n, c), dt, grad=False, kind="normal" if lt else "prob")
        red2 = b.c.pick(["'batchmean'", "'sum'", "'mean'", "'none'"])
        b.line(f"out = F.kl_div(F.log_softmax({x}, -1), {t}, reduction={red2}, log_target={lt})")
    elif loss == "poisson_nll":
        x = b.tensor("x", (n, c), dt)
        t = b.tensor("t", (n, c), dt, grad=False, kind="positive")
        b.line(f"out = F.poisson_nll_loss({x}, {t}{r}, log_input={b.c.pick(['True', 'False'])})")
    elif loss == "gaussian_nll":
        x = b.tensor("x", (n, c), dt)
        t = b.tensor("t", (n, c), dt, grad=False)
        v = b.tensor("var", b.c.pick([(n, c), (n, 1), (n,)]), dt, kind="positive")
        b.line(f"out = F.gaussian_nll_loss({x}, {t}, {v}{r})")
    elif loss == "cosine_embedding":
        x = b.tensor("x", (n, c), dt)
        y = b.tensor("y", (n, c), dt)
        t = b.tensor("t", (n,), "float64" if dt == "float64" else "float32", grad=False)
        b.line(f"out = F.cosine_embedding_loss({x}, {y}, torch.sign({t}){r})")
    else:  # margin_ranking
        x = b.tensor("x", (n,), dt)
        y = b.tensor("y", (n,), dt)
        t = b.tensor("t", (n,), dt, grad=False)
        b.line(f"out = F.margin_ranking_loss({x}, {y}, torch.sign({t}), margin=0.5{r})")


def gen_conv_pool(b):
    dt = b.dtype()
    two = b.c.chance(0.5)
    n, cin = b.c.int(1, 2), b.c.int(1, 3)
    sp = (b.c.int(1, 5), b.c.int(1, 5)) if two else (b.c.int(1, 7),)
    batched = not b.c.chance(0.1)
    xshape = ((n,) if batched else ()) + (cin,) + sp
    x = b.tensor("x", xshape, dt)
    op = b.c.pick(["conv", "max_pool", "avg_pool", "adaptive_avg", "adaptive_max", "conv_transpose",
                   "conv_pad", "max_pool_idx", "lp_pool", "pad", "interpolate"])
    b.tag(op + ("2d" if two else "1d"))
    nd = "2d" if two else "1d"
    k = b.c.int(1, 3)
    ks = k if b.c.chance(0.6) or not two else (k, b.c.int(1, 3))
    stride = b.c.pick(["", ", stride=2", ", stride=1", ", stride=3"])
    if op in ("conv", "conv_pad", "conv_transpose"):
        groups = b.c.pick([1, 1, cin]) if op != "conv_transpose" else 1
        cout = b.c.int(1, 3) * groups
        cin_w = cin // groups if not b.c.chance(0.05) else cin + 1
        wshape = ((cout, cin_w) if op != "conv_transpose" else (cin, cout)) + ((k, k) if two else (k,))
        w = b.tensor("w", wshape, dt)
        bias = b.tensor("bias", (cout,), dt) if b.c.chance(0.6) else "None"
        extra = stride
        if op == "conv_pad":
            extra = b.c.pick([", padding=1", ", padding='same'", ", padding='valid'", ", padding=2, dilation=2",
                              ", padding=(1, 0)" if two else ", padding=1, stride=2"])
        if groups > 1:
            extra += f", groups={groups}"
        fn = f"F.conv{nd}" if op != "conv_transpose" else f"F.conv_transpose{nd}"
        if op == "conv_transpose" and b.c.chance(0.3):
            extra = extra.replace(stride, "") + ", output_padding=1, stride=2"
        b.line(f"out = {fn}({x}, {w}, {bias}{extra})")
    elif op in ("max_pool", "max_pool_idx"):
        pad = b.c.pick(["", ", padding=1", ", padding=2"])
        cm = b.c.pick(["", ", ceil_mode=True"])
        # PyTorch 2.13 corrupts its heap (double free) in max_pool2d's backward when a dilated
        # window is larger than the input, e.g. x (2,1,1,2), kernel 2, padding=1, dilation=2: keep
        # dilation to windows that fit
        fits = min(sp) >= 2 * (k - 1) + 1 and not pad
        dil = ", dilation=2" if fits and b.c.chance(0.15) else ""
        if op == "max_pool_idx":
            b.line(f"out, idx = F.max_pool{nd}({x}, {ks}{stride}{pad}{cm}{dil}, return_indices=True)")
            b.compare = ["out", "idx"]
        else:
            b.line(f"out = F.max_pool{nd}({x}, {ks}{stride}{pad}{cm}{dil})")
    elif op == "avg_pool":
        pad = b.c.pick(["", ", padding=1"])
        extra = b.c.pick(["", ", ceil_mode=True", ", count_include_pad=False"])
        b.line(f"out = F.avg_pool{nd}({x}, {ks}{stride}{pad}{extra})")
    elif op == "lp_pool":
        b.line(f"out = F.lp_pool{nd}({x}.abs() + 0.5, 2, {ks}{stride})")
    elif op in ("adaptive_avg", "adaptive_max"):
        osz = b.c.int(1, 4)
        if two and b.c.chance(0.3):
            osz = f"({osz}, None)"
        b.line(f"out = F.{op}_pool{nd}({x}, {osz})")
    elif op == "pad":
        mode = b.c.pick(["'constant'", "'reflect'", "'replicate'", "'circular'"])
        pads = b.c.pick(["(1, 1)", "(0, 2)", "(2, 1, 1, 0)" if two else "(1, 0)", "(-1, 1)", "(3, 3)"])
        b.line(f"out = F.pad({x}, {pads}, mode={mode})")
    else:
        mode = b.c.pick(["'nearest'", "'linear'" if not two else "'bilinear'", "'nearest-exact'",
                         "'bicubic'" if two else "'nearest'"])
        ac = ", align_corners=True" if "linear" in mode and b.c.chance(0.4) else ""
        sz = b.c.pick(["scale_factor=2", f"size={b.c.int(1, 6)}", "scale_factor=1.5"])
        b.line(f"out = F.interpolate({x}, {sz}, mode={mode}{ac})")


def gen_norm(b):
    dt = b.dtype()
    op = b.c.pick(["layer_norm", "batch_norm", "group_norm", "normalize", "instance_norm", "rms_norm",
                   "module_layer_norm", "module_batch_norm", "local_response_norm"])
    b.tag(op)
    if op in ("layer_norm", "module_layer_norm", "rms_norm"):
        shape = b.shape(1, 3, p_empty=0.02)
        x = b.tensor("x", shape, dt)
        k = b.c.int(1, len(shape))
        ns = tuple(shape[-k:])
        if b.c.chance(0.05):
            ns = tuple(s + 1 for s in ns)
        if op == "module_layer_norm":
            aff = b.c.pick(["", ", elementwise_affine=False", ", bias=False"])
            b.line(f"m = nn.LayerNorm({list(ns)}{aff}).to(torch.{dt})")
            b.line(f"out = m({x})")
            if not aff:
                b.leaves += ["m.weight", "m.bias"]
            return
        w = b.tensor("w", ns, dt) if b.c.chance(0.5) else "None"
        bias = b.tensor("bias", ns, dt) if b.c.chance(0.5) and op == "layer_norm" else "None"
        eps = b.c.pick(["", ", eps=1e-3"])
        if op == "layer_norm":
            b.line(f"out = F.layer_norm({x}, {list(ns)}, {w}, {bias}{eps})")
        else:
            b.line(f"out = F.rms_norm({x}, {list(ns)}, {w}{eps})")
        return
    if op in ("batch_norm", "module_batch_norm", "instance_norm"):
        n, c = b.c.int(1, 3), b.c.int(1, 3)
        rest = b.c.pick([(), (b.c.int(1, 3),), (2, 2)] if op != "instance_norm" else [(3,), (2, 2), (b.c.int(1, 3),)])
        x = b.tensor("x", (n, c) + rest, dt)
        training = b.c.pick(["True", "False"])
        if op == "module_batch_norm":
            kind = {0: "1d", 1: "1d", 2: "2d"}[len(rest)]
            b.line(f"m = nn.BatchNorm{kind}({c}).to(torch.{dt})")
            if training == "False":
                b.line("m.eval()")
            b.line(f"out = m({x})")
            b.line("stats = (m.running_mean, m.running_var, m.num_batches_tracked)")
            b.leaves += ["m.weight", "m.bias"]
            b.compare = ["out", "stats"]
            return
        if op == "instance_norm":
            b.line(f"out = F.instance_norm({x}{', eps=1e-3' if b.c.chance(0.3) else ''})")
            return
        rm = b.tensor("rm", (c,), dt, grad=False)
        rv = b.tensor("rv", (c,), dt, grad=False, kind="positive")
        w = b.tensor("w", (c,), dt) if b.c.chance(0.6) else "None"
        bias = b.tensor("bias", (c,), dt) if b.c.chance(0.6) else "None"
        if b.c.chance(0.1):
            rm, rv = "None", "None"
            training = "True"
        mom = b.c.pick(["", ", momentum=0.5", ", eps=1e-3"])
        b.line(f"out = F.batch_norm({x}, {rm}, {rv}, {w}, {bias}, training={training}{mom})")
        if rm != "None":
            b.line(f"stats = ({rm}, {rv})")
            b.compare = ["out", "stats"]
        return
    if op == "group_norm":
        n = b.c.int(1, 2)
        g = b.c.int(1, 2)
        c = g * b.c.int(1, 2) + (1 if b.c.chance(0.05) else 0)
        x = b.tensor("x", (n, c, b.c.int(1, 3)), dt)
        w = b.tensor("w", (c,), dt) if b.c.chance(0.5) else "None"
        b.line(f"out = F.group_norm({x}, {g}, {w})")
        return
    if op == "local_response_norm":
        x = b.tensor("x", (b.c.int(1, 2), b.c.int(1, 4), b.c.int(1, 3)), dt)
        b.line(f"out = F.local_response_norm({x}, {b.c.int(1, 3)})")
        return
    shape = b.shape(1, 3, p_empty=0.03)
    x = b.tensor("x", shape, dt, kind="normal" if not b.c.chance(0.1) else "positive")
    p = b.c.pick(["", ", p=1.0", ", p=3", ", p=float('inf')"])
    b.line(f"out = F.normalize({x}{p}, dim={b.dim(len(shape))})")
