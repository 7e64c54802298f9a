"""engine.nn: module registry, parameters, state dicts, hooks, modes, layers."""
from __future__ import annotations

import math

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F


def _mlp():
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1)))


# ---- Parameter ---------------------------------------------------------------------------
def test_parameter_is_leaf_tensor_sharing_storage_with_category_parameter():
    t = engine.zeros(3)
    assert t._storage.category == "input"
    p = nn.Parameter(t)
    assert isinstance(p, engine.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p._storage is t._storage
    assert p._storage.category == "parameter"
    assert nn.Parameter(engine.zeros(2), requires_grad=False).requires_grad is False


def test_parameter_repr():
    assert repr(nn.Parameter(engine.ones(2))) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"


def test_parameter_ops_return_plain_tensors():
    p = nn.Parameter(engine.ones(2))
    y = p * 2
    assert type(y) is engine.Tensor and y.grad_fn.name() == "MulBackward0"


# ---- registry and traversal ----------------------------------------------------------------
def test_named_parameters_children_modules():
    m = _mlp()
    assert [n for n, _ in m.named_parameters()] == ["0.weight", "0.bias", "2.0.weight", "2.0.bias"]
    assert [n for n, _ in m.named_children()] == ["0", "1", "2"]
    assert [n for n, _ in m.named_modules()] == ["", "0", "1", "2", "2.0"]
    assert len(list(m.parameters())) == 4
    assert sum(p.numel() for p in m.parameters()) == 2 * 3 + 3 + 3 + 1


def test_shared_parameter_listed_once():
    lin = nn.Linear(2, 2)
    m = nn.Sequential(lin, lin)
    assert [n for n, _ in m.named_parameters()] == ["0.weight", "0.bias"]


def test_custom_module_attributes_and_errors():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 3)
            self.scale = nn.Parameter(engine.ones(1))
            self.register_buffer("steps", engine.zeros(1))
            self.register_buffer("tmp", engine.zeros(2), persistent=False)
            self.note = "plain attribute"

        def forward(self, x):
            return self.fc1(x) * self.scale

    n = Net()
    assert [k for k, _ in n.named_parameters()] == ["scale", "fc1.weight", "fc1.bias"]
    assert [k for k, _ in n.named_buffers()] == ["steps", "tmp"]
    assert list(n.state_dict()) == ["scale", "steps", "fc1.weight", "fc1.bias"]
    assert n.note == "plain attribute"
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'missing'"):
        n.missing
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'scale' "
                                        r"\(torch.nn.Parameter or None expected\)"):
        n.scale = engine.ones(1)
    del n.fc1
    assert [k for k, _ in n.named_parameters()] == ["scale"]


def test_parameter_display_names_on_first_call():
    inner = nn.Linear(2, 2)
    inner(engine.ones(1, 2))
    assert inner.weight._gg_name == "weight"
    model = nn.Sequential(nn.ReLU(), inner)
    model(engine.ones(1, 2))
    assert inner.weight._gg_name == "1.weight" and inner.bias._gg_name == "1.bias"
    inner(engine.ones(1, 2))  # a named submodule keeps the outer names
    assert inner.weight._gg_name == "1.weight"
    other = nn.Sequential(nn.Linear(2, 2))
    list(other.named_parameters())
    assert other[0].weight._gg_name == "0.weight"


def test_parameter_name_reaches_trace_leaf_event():
    model = nn.Sequential(nn.Linear(2, 1))
    with engine.record() as tr:
        model(engine.ones(1, 2)).sum().backward()
    names = {e["tensor"]["name"] for e in tr.events if e["kind"] == "leaf"}
    assert {"0.weight", "0.bias"} <= names


# ---- Sequential / ModuleList / ModuleDict ---------------------------------------------------
def test_sequential_indexing_len_iter_append():
    m = _mlp()
    assert len(m) == 3 and isinstance(m[0], nn.Linear) and isinstance(m[-1], nn.Sequential)
    assert [type(x).__name__ for x in m] == ["Linear", "ReLU", "Sequential"]
    sl = m[:2]
    assert isinstance(sl, nn.Sequential) and len(sl) == 2 and sl[0] is m[0]
    m.append(nn.Tanh())
    assert len(m) == 4 and [n for n, _ in m.named_children()][-1] == "3"
    with pytest.raises(IndexError, match="index 9 is out of range"):
        m[9]
    del m[1]
    assert [n for n, _ in m.named_children()] == ["0", "1", "2"]
    assert isinstance(m[1], nn.Sequential)


def test_modulelist_and_moduledict():
    ml = nn.ModuleList([nn.Linear(2, 2), nn.ReLU()])
    ml.append(nn.Linear(2, 1))
    assert len(ml) == 3 and [n for n, _ in ml.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    md = nn.ModuleDict({"enc": nn.Linear(2, 2), "act": nn.GELU()})
    assert list(md.keys()) == ["enc", "act"] and "enc" in md
    assert [n for n, _ in md.named_parameters()] == ["enc.weight", "enc.bias"]
    assert repr(md) == "ModuleDict(\n  (enc): Linear(in_features=2, out_features=2, bias=True)\n" \
                       "  (act): GELU(approximate='none')\n)"


def test_repr_matches_pytorch():
    assert repr(_mlp()) == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n"
                            "  (2): Sequential(\n    (0): Linear(in_features=3, out_features=1, bias=True)\n  )\n)")
    assert repr(nn.LayerNorm(4)) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"
    assert repr(nn.Conv2d(1, 2, 3)) == "Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))"
    assert repr(nn.Conv2d(1, 2, (3, 3), stride=2, padding=1, bias=False)) == \
        "Conv2d(1, 2, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)"
    assert repr(nn.Embedding(3, 4, padding_idx=0)) == "Embedding(3, 4, padding_idx=0)"
    assert repr(nn.Dropout(0.1)) == "Dropout(p=0.1, inplace=False)"
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert repr(nn.MultiheadAttention(8, 2, batch_first=True)) == \
        "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)\n)"


# ---- state dict ----------------------------------------------------------------------------
def test_state_dict_round_trip_shares_nothing_after_load():
    a, b = _mlp(), _mlp()
    sd = a.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "2.0.weight", "2.0.bias"]
    assert all(not v.requires_grad for v in sd.values())
    assert sd["0.weight"]._storage is a[0].weight._storage          # a view of the parameter, as in PyTorch
    res = b.load_state_dict(sd)
    assert repr(res) == "<All keys matched successfully>" and res.missing_keys == [] and res.unexpected_keys == []
    for (n1, p1), (n2, p2) in zip(a.named_parameters(), b.named_parameters()):
        assert n1 == n2 and np.array_equal(p1.detach().numpy(), p2.detach().numpy())
        assert p1._storage is not p2._storage
    x = engine.randn(5, 2)
    assert np.array_equal(a(x).detach().numpy(), b(x).detach().numpy())


def test_load_state_dict_errors_in_pytorchs_words():
    m = _mlp()
    sd = dict(m.state_dict())
    sd["foo"] = engine.ones(1)
    del sd["0.bias"]
    sd["0.weight"] = engine.ones(4, 4)
    with pytest.raises(RuntimeError) as ei:
        m.load_state_dict(sd)
    assert str(ei.value) == (
        'Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: "0.bias". \n\t'
        'Unexpected key(s) in state_dict: "foo". \n\tsize mismatch for 0.weight: copying a param with shape '
        "torch.Size([4, 4]) from checkpoint, the shape in current model is torch.Size([3, 2]).")
    with pytest.raises(RuntimeError) as ei:
        m.load_state_dict({"0.weight": 3}, strict=False)
    assert str(ei.value) == ('Error(s) in loading state_dict for Sequential:\n\tWhile copying the parameter named '
                             '"0.weight", expected torch.Tensor or Tensor-like object from checkpoint but received '
                             "<class 'int'>")
    res = m.load_state_dict({"0.weight": engine.zeros(3, 2), "extra": engine.ones(1)}, strict=False)
    assert res.missing_keys == ["0.bias", "2.0.weight", "2.0.bias"] and res.unexpected_keys == ["extra"]
    assert float(m[0].weight.detach().abs().sum()) == 0.0


def test_load_state_dict_copies_in_place_and_bumps_version():
    m = nn.Linear(2, 2)
    w = m.weight
    v0 = w._version
    m.load_state_dict({"weight": engine.ones(2, 2), "bias": engine.zeros(2)})
    assert m.weight is w and w._version == v0 + 1
    assert w.detach().numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]


# ---- hooks ---------------------------------------------------------------------------------
def test_forward_hooks_pre_hooks_and_removal():
    m = nn.Linear(2, 2)
    calls = []

    def pre(mod, args):
        calls.append(("pre", mod is m, tuple(args[0].shape)))
        return (args[0] * 0,)

    def post(mod, args, out):
        calls.append(("post", float(args[0].detach().abs().sum())))
        return out + 100

    h1 = m.register_forward_pre_hook(pre)
    h2 = m.register_forward_hook(post)
    out = m(engine.ones(1, 2))
    assert calls == [("pre", True, (1, 2)), ("post", 0.0)]
    assert np.allclose(out.detach().numpy(), m.bias.detach().numpy() + 100)
    h1.remove()
    h2.remove()
    out = m(engine.ones(1, 2))
    assert len(calls) == 2
    assert np.allclose(out.detach().numpy(),
                       m.weight.detach().numpy().sum(1) + m.bias.detach().numpy())


def test_forward_hook_with_kwargs():
    m = nn.Linear(2, 2)
    seen = []
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(sorted(kwargs)), with_kwargs=True)
    m(input=engine.ones(1, 2))
    assert seen == [["input"]]


# ---- modes, apply, zero_grad, to ------------------------------------------------------------
def test_train_eval_with_dropout():
    engine.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    assert m.training and m[1].training
    x = engine.ones(64, 4)
    y1 = m(x).detach().numpy()
    assert (y1 == 0).sum() > 0                                   # some dropped
    kept = y1[y1 != 0]
    full = (m[0](x).detach().numpy() * 2.0)
    assert np.allclose(np.sort(kept), np.sort(full[y1 != 0]))    # survivors scaled by 1/(1-p)
    m.eval()
    assert not m.training and not m[1].training
    y2 = m(x).detach().numpy()
    assert np.array_equal(y2, m[0](x).detach().numpy())
    m.train()
    assert m[1].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")


def test_zero_grad_set_to_none_and_zeroing():
    m = nn.Linear(3, 1)
    m(engine.ones(2, 3)).sum().backward()
    g = m.weight.grad
    m.zero_grad(set_to_none=False)
    assert m.weight.grad is g and float(g.abs().sum()) == 0.0
    m.zero_grad()
    assert m.weight.grad is None and m.bias.grad is None


def test_apply_requires_grad_and_double():
    m = _mlp()
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Sequential", "Sequential"]
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    w = m[0].weight
    m.double()
    assert m[0].weight is w and w.dtype is engine.float64 and w._storage.category == "parameter"
    assert m(engine.ones(1, 2, dtype=engine.float64)).dtype is engine.float64
    m.float()
    assert w.dtype is engine.float32
    assert m.to("cpu") is m
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        m.to(engine.int64)


# ---- layers --------------------------------------------------------------------------------
def test_linear_init_bounds():
    engine.manual_seed(1)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert w.shape == (300, 400) and b.shape == (300,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.98 * bound                     # fills the range
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound    # uniform's std
    assert repr(nn.Linear(2, 3, bias=False)) == "Linear(in_features=2, out_features=3, bias=False)"
    assert nn.Linear(2, 3, bias=False).bias is None


def test_linear_forward_matches_numpy_and_is_addmm():
    lin = nn.Linear(3, 2)
    x = engine.randn(4, 3)
    y = lin(x)
    assert y.grad_fn.name() == "AddmmBackward0"
    ref = x.numpy() @ lin.weight.detach().numpy().T + lin.bias.detach().numpy()
    assert np.allclose(y.detach().numpy(), ref, atol=1e-6)


def test_init_functions():
    t = engine.empty(50, 40)
    nn.init.xavier_uniform_(t)
    a = math.sqrt(6 / 90)
    assert np.abs(t.numpy()).max() <= a
    nn.init.constant_(t, 0.5)
    assert set(t.numpy().ravel().tolist()) == {0.5}
    nn.init.zeros_(t)
    assert not t.numpy().any()
    nn.init.ones_(t)
    assert t.numpy().all()
    nn.init.uniform_(t, -2, -1)
    assert t.numpy().max() <= -1 and t.numpy().min() >= -2
    nn.init.normal_(t, 3.0, 0.01)
    assert abs(t.numpy().mean() - 3.0) < 0.01
    nn.init.kaiming_uniform_(t, nonlinearity="relu")
    assert np.abs(t.numpy()).max() <= math.sqrt(6 / 40)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        nn.init.xavier_uniform_(engine.empty(3))


def test_activations_and_flatten():
    x = engine.tensor([[-1.0, 0.5], [2.0, -3.0]])
    assert nn.ReLU()(x).tolist() == [[0.0, 0.5], [2.0, 0.0]]
    assert np.allclose(nn.Tanh()(x).numpy(), np.tanh(x.numpy()))
    assert np.allclose(nn.Sigmoid()(x).numpy(), 1 / (1 + np.exp(-x.numpy())))
    assert np.allclose(nn.Softmax(dim=1)(x).numpy().sum(1), 1.0)
    assert nn.Identity(3, k=1)(x) is x
    assert nn.GELU()(x).grad_fn is None
    assert tuple(nn.Flatten()(engine.ones(2, 3, 4)).shape) == (2, 12)


def test_layernorm_embedding_conv_losses():
    ln = nn.LayerNorm(4)
    y = ln(engine.randn(3, 4))
    assert np.allclose(y.detach().numpy().mean(-1), 0, atol=1e-6)
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
    emb = nn.Embedding(5, 3, padding_idx=0)
    assert emb.weight.detach().numpy()[0].tolist() == [0.0, 0.0, 0.0]
    assert tuple(emb(engine.tensor([[0, 4]])).shape) == (1, 2, 3)
    conv = nn.Conv2d(1, 2, 3, padding=1)
    assert tuple(conv(engine.randn(1, 1, 5, 5)).shape) == (1, 2, 5, 5)
    logits, target = engine.tensor([[2.0, 0.0], [0.0, 1.0]]), engine.tensor([0, 1])
    expected = np.mean([-np.log(np.exp(2) / (np.exp(2) + 1)), -np.log(np.e / (np.e + 1))])
    assert np.isclose(nn.CrossEntropyLoss()(logits, target).item(), expected)
    assert nn.MSELoss()(engine.tensor([1.0, 3.0]), engine.tensor([0.0, 0.0])).item() == 5.0
    assert nn.MSELoss(reduction="sum")(engine.tensor([1.0, 3.0]), engine.tensor([0.0, 0.0])).item() == 10.0


def test_multihead_attention_matches_pytorch():
    # Expected numbers from PyTorch 2.13:
    #   a = nn.MultiheadAttention(4, 2, batch_first=True)
    #   with torch.no_grad():
    #       for i, (n, p) in enumerate(a.named_parameters()):
    #           p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float64) * 0.7 + i).reshape(p.shape))
    #   x = torch.cos(torch.arange(12, dtype=torch.float64) * 0.3).reshape(1, 3, 4).float()
    #   o, w = a(x, x, x, attn_mask=torch.triu(torch.ones(3, 3, dtype=torch.bool), 1))
    a = nn.MultiheadAttention(4, 2, batch_first=True)
    assert [n for n, _ in a.named_parameters()] == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                                     "out_proj.bias"]
    with engine.no_grad():
        for i, (_, p) in enumerate(a.named_parameters()):
            p.copy_(engine.sin(engine.arange(p.numel(), dtype=engine.float64) * 0.7 + i).reshape(p.shape))
    x = engine.cos(engine.arange(12, dtype=engine.float64) * 0.3).reshape(1, 3, 4).float()
    mask = engine.tensor(np.triu(np.ones((3, 3), bool), 1))
    o, w = a(x, x, x, attn_mask=mask)
    exp_o = [[[-1.5282831192016602, 0.3465877175331116, -0.933771014213562, -1.8358399868011475],
              [-1.1936498880386353, 0.04982215166091919, -0.7091658115386963, -1.9623303413391113],
              [-1.287529468536377, 0.022267639636993408, -0.563361406326294, -2.209536552429199]]]
    exp_w = [[[1.0, 0.0, 0.0], [0.8458150625228882, 0.1541849672794342, 0.0],
              [0.8548457622528076, 0.12213719636201859, 0.02301708795130253]]]
    assert np.allclose(o.detach().numpy(), exp_o, atol=1e-5)
    assert np.allclose(w.detach().numpy(), exp_w, atol=1e-6)
    o2, w2 = a(x, x, x, attn_mask=mask, is_causal=True, need_weights=False)   # is_causal: a hint only
    assert w2 is None and np.allclose(o2.detach().numpy(), exp_o, atol=1e-5)
    with pytest.raises(RuntimeError, match=r"^Need attn_mask if specifying the is_causal hint\. You may use the "
                       r"Transformer module method `generate_square_subsequent_mask` to create this mask\.$"):
        a(x, x, x, is_causal=True)
    _, wh = a(x, x, x, average_attn_weights=False)
    assert tuple(wh.shape) == (1, 2, 3, 3)


def test_transformer_block_backward_reaches_every_parameter():
    engine.manual_seed(0)
    blk = nn.TransformerBlock(8, 2, causal=True)
    x = engine.randn(2, 5, 8, requires_grad=True)
    out = blk(x)
    assert tuple(out.shape) == (2, 5, 8)
    out.pow(2).mean().backward()
    names = [n for n, _ in blk.named_parameters()]
    assert names[:2] == ["ln1.weight", "ln1.bias"] and "mlp.2.weight" in names
    assert all(p.grad is not None and p.grad.shape == p.shape for p in blk.parameters())
    # causal: the first position's output depends only on the first input position
    x2 = x.detach().clone()
    x2[:, 1:] = 0.0
    assert np.allclose(blk(x2).detach().numpy()[:, 0], out.detach().numpy()[:, 0], atol=1e-5)


def test_functional_is_still_exported():
    assert nn.functional is F and callable(F.linear)


def test_linear_weight_grad_contiguous_exact_and_counted_once():
    lin = nn.Linear(5, 4)
    x = engine.randn(3, 5)
    g = engine.randn(3, 4)
    lin(x).backward(g)
    wg = lin.weight.grad
    assert wg.is_contiguous() and wg.stride() == (5, 1)              # laid out as the weight, as in PyTorch
    assert np.allclose(wg.numpy(), g.numpy().T @ x.numpy(), atol=1e-6)
    assert wg._storage.category == "gradient" and wg._storage.nbytes == 4 * 4 * 5
    assert np.allclose(lin.bias.grad.numpy(), g.numpy().sum(0), atol=1e-6)
    lin.weight.grad = None
    lin(x).backward(g)                                             # a second backward: same numbers
    assert np.allclose(lin.weight.grad.numpy(), wg.numpy())
    nb = nn.Linear(5, 4, bias=False)
    nb(x).backward(g)
    assert nb.weight.grad.is_contiguous()
    assert np.allclose(nb.weight.grad.numpy(), g.numpy().T @ x.numpy(), atol=1e-6)


def test_init_draws_in_place_without_engine_temporaries():
    # uniform_/normal_ write the drawn values into the parameter: building a layer peaks at its own bytes
    import engine.memory as memory
    before = memory.memory_allocated()
    memory.reset_peak_memory_stats()
    layer = engine.nn.Linear(64, 32)
    own = (64 * 32 + 32) * 4
    assert memory.memory_allocated() - before == own
    assert memory.max_memory_allocated() - before == own
    assert layer.weight._version == 1 and layer.bias._version == 1


def test_blocks_called_one_by_one_are_named_from_the_model_that_holds_them():
    # NOTE [ Parameter display names ] 5: the outer model is never called itself
    model = nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.ReLU()) for _ in range(3)])
    h = engine.randn(2, 4)
    for block in model:
        h = block(h)
    assert [p._gg_name for p in model.parameters()] == ["0.0.weight", "0.0.bias", "1.0.weight", "1.0.bias",
                                                         "2.0.weight", "2.0.bias"]
    with engine.record() as tr:
        model[1](h)
    named = {i["name"] for e in tr.events if e["kind"] == "op" for i in e["inputs"] if i["name"]}
    assert named == {"1.0.bias", "1.0.weight"}     # what the pictures and the app label the leaves with
    alone = nn.Linear(2, 2)
    alone(engine.randn(1, 2))
    assert alone.weight._gg_name == "weight"


def test_module_list_repr_collapses_runs_of_equal_children_as_pytorch():
    # PyTorch 2.13 prints exactly this
    ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)])
    assert repr(ml) == ("ModuleList(\n"
                        "  (0-1): 2 x Linear(in_features=2, out_features=2, bias=True)\n"
                        "  (2): ReLU()\n"
                        "  (3): Linear(in_features=2, out_features=2, bias=True)\n"
                        ")")
    assert repr(nn.ModuleList()) == "ModuleList()"
