"""What glassgrad does not do, said clearly: torch.distributed, torch.onnx, torch.nn.parallel, and the
error for a name it lacks (NOTE [ One process ], NOTE [ No ONNX export ], NOTE [ Parallel on one device ],
NOTE [ Missing names ]).

PyTorch's messages and values are recorded from PyTorch 2.13 on the CPU in
tests/fixtures/missing_features_reference.json (tests/fixtures/make_missing_features_reference.py).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback

import numpy as np
import pytest

import engine as torch
import engine.distributed as dist
import engine.onnx
from engine.torch_names import NAMES

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "missing_features_reference.json"), encoding="utf-8") as _f:
    REF = json.load(_f)

MODULES = {"torch": torch, "torch.nn": torch.nn, "torch.nn.functional": torch.nn.functional,
           "torch.nn.parallel": torch.nn.parallel, "torch.distributed": torch.distributed, "torch.onnx": torch.onnx}


def raised(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return [type(e).__name__, str(e)]
    return None


PROGRAM = '''
import engine as torch
import engine.distributed as dist
import engine.onnx
from engine.nn.parallel import DistributedDataParallel as DDP

distributed = dist.is_available() and dist.is_initialized()
rank = dist.get_rank() if distributed else 0
world_size = dist.get_world_size() if distributed else 1
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
if distributed:
    model = DDP(model)
elif torch.cuda.device_count() > 1:
    model = torch.nn.DataParallel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
for _ in range(3):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
if rank == 0 and not torch.onnx.is_in_onnx_export():
    result = (rank, world_size, loss.item())
'''


def test_a_program_written_for_several_processes_runs_alone():
    scope = {}
    exec(compile(PROGRAM, "program.py", "exec"), scope)  # noqa: S102 - the program under test
    rank, world, loss = scope["result"]
    assert (rank, world) == (0, 1) and np.isfinite(loss)


def test_torch_distributed_is_there_and_says_it_is_not_available():
    assert torch.distributed is dist
    assert (dist.is_available(), dist.is_initialized()) == (False, False)
    assert not any(f() for f in (dist.is_nccl_available, dist.is_gloo_available, dist.is_mpi_available,
                                 dist.is_ucc_available, dist.is_xccl_available))
    with pytest.raises(RuntimeError, match=r"^glassgrad runs in one process: torch.distributed is not available "):
        dist.init_process_group("gloo", rank=0, world_size=1)


def test_torchelastic_launch_is_read_from_the_environment(monkeypatch):
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert dist.is_torchelastic_launched() is False
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "abc")
    assert dist.is_torchelastic_launched() is True


def test_functions_that_need_a_process_group_raise_pytorchs_error():
    for name, want in REF["needs_group"].items():
        assert raised(getattr(dist, name)) == want, name
    assert raised(dist.all_reduce, torch.ones(1)) == REF["all_reduce"]
    assert raised(dist.destroy_process_group) == REF["destroy_process_group"]
    for name in ("broadcast", "all_gather", "reduce", "scatter", "gather", "send", "recv", "all_to_all"):
        assert raised(getattr(dist, name), torch.ones(1)) == REF["all_reduce"], name


def test_distributed_names_have_pytorchs_values():
    assert list(dist.ReduceOp.RedOpType.__members__) == REF["reduce_ops"]
    assert dist.ReduceOp.SUM is dist.ReduceOp.RedOpType.SUM
    assert dist.Backend("GLOO") == REF["backend_gloo"] == dist.Backend.GLOO
    assert raised(dist.Backend, 3) == REF["backend_not_str"]
    assert dist.group.WORLD is REF["group_world"] is dist.GroupMember.WORLD
    assert dist.GroupMember.NON_GROUP_MEMBER == REF["non_group_member"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU path (NOTE [ Parallel on one device ] rule 1)")
def test_data_parallel_on_the_cpu_calls_the_module_as_pytorch_does():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    dp = torch.nn.DataParallel(lin)
    assert torch.nn.DataParallel is torch.nn.parallel.DataParallel
    assert repr(dp) == REF["dp_repr"]
    assert dp.device_ids == REF["dp_device_ids"] and dp.module is lin
    assert list(dp.state_dict()) == REF["dp_state_dict"]
    x = torch.randn(4, 3)
    out = dp(x)
    assert np.array_equal(out.detach().numpy(), lin(x).detach().numpy())
    out.sum().backward()
    assert np.allclose(lin.weight.grad.numpy(), np.tile(x.numpy().sum(0), (2, 1)), rtol=1e-6)
    assert raised(torch.nn.parallel.data_parallel, lin, x) == REF["data_parallel_cpu"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU visible to CuPy")
def test_data_parallel_with_a_gpu_runs_the_module_on_device_0():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    dp = torch.nn.DataParallel(lin)
    cuda0 = torch.device("cuda", 0)
    assert dp.device_ids == [0] and lin.weight.device == cuda0
    x = torch.randn(4, 3)
    out = dp(x)
    assert out.device == cuda0
    assert np.array_equal(out.detach().cpu().numpy(), lin(x.cuda()).detach().cpu().numpy())
    assert torch.nn.parallel.data_parallel(lin, x).device == cuda0
    with pytest.raises(RuntimeError, match=r"^glassgrad runs a module on one device: DataParallel over several"):
        torch.nn.DataParallel(torch.nn.Linear(3, 2), device_ids=[0, 1])


def test_several_devices_and_ddp_are_refused():
    assert sorted(torch.nn.parallel.__all__) == REF["parallel_all"]
    assert raised(torch.nn.parallel.DistributedDataParallel, torch.nn.Linear(3, 2)) == REF["ddp"]
    for name in ("replicate", "scatter", "gather", "parallel_apply"):
        with pytest.raises(RuntimeError, match=rf"^glassgrad runs a module on one device: torch.nn.parallel.{name} "):
            getattr(torch.nn.parallel, name)(torch.ones(2), [0])


def test_onnx_export_raises_the_exporters_error_naming_it(tmp_path):
    assert torch.onnx is engine.onnx and engine.onnx.is_in_onnx_export() is REF["is_in_onnx_export"]
    path = tmp_path / "m.onnx"
    with pytest.raises(RuntimeError) as info:
        torch.onnx.export(torch.nn.Linear(3, 2), (torch.ones(1, 3),), str(path),
                          training=torch.onnx.TrainingMode.EVAL)
    assert type(info.value) is torch.onnx.OnnxExporterError is torch.onnx.errors.OnnxExporterError
    assert str(info.value).startswith("glassgrad does not implement torch.onnx.export: save the weights with "
                                      "torch.save(model.state_dict(), path)")
    assert not path.exists()
    assert [c.__name__ for c in torch.onnx.errors.UnsupportedOperatorError.__mro__[1:4]] == REF["onnx_error_bases"]
    assert {k: v.value for k, v in torch.onnx.TrainingMode.__members__.items()} == REF["training_mode"]
    assert ({k: v.value for k, v in torch.onnx.OperatorExportTypes.__members__.items()}
            == REF["operator_export_types"])


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_a_name_pytorch_lacks_gets_pytorchs_attribute_error(mod):
    assert raised(getattr, MODULES[mod], "no_such_name") == REF["absent"][mod]
    assert not hasattr(MODULES[mod], "no_such_name")
    assert "no_such_name" not in NAMES[mod]


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_a_name_only_pytorch_has_says_glassgrad_does_not_implement_it(mod):
    lacking = [n for n in sorted(NAMES[mod]) if not hasattr(MODULES[mod], n)]
    for name in lacking[:5]:
        with pytest.raises(AttributeError) as info:
            getattr(MODULES[mod], name)
        assert str(info.value) == f"glassgrad does not implement {mod}.{name} yet"
        assert info.value.name == name and info.value.obj is MODULES[mod]


def test_the_recorded_names_are_pytorchs_own():
    torch_names = NAMES["torch"]
    assert {"stft", "jit", "fft", "pi", "Tensor", "float16", "distributed", "onnx"} <= torch_names
    assert not {"os", "math", "Optional", "TYPE_CHECKING"} & torch_names      # PyTorch's imports, not its API
    assert {"SyncBatchNorm", "DataParallel", "parallel"} <= NAMES["torch.nn"]
    assert "torch" not in NAMES["torch.nn.functional"]


def test_the_error_is_raised_at_the_programs_line_with_a_spelling_hint():
    def program():
        x = torch.ones(3)
        return torch.tenser(x)        # a misspelt torch.tensor
    with pytest.raises(AttributeError) as info:
        program()
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-2].name == "program" and frames[-1].filename.endswith(os.path.join("engine", "__init__.py"))
    # the interpreter's own report of an uncaught error adds Python's spelling hint (NOTE [ Missing names ] 5)
    root = os.path.dirname(HERE)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)     # the caller's own entries kept
    res = subprocess.run([sys.executable, "-c", "import engine as torch\ntorch.tenser([1.0])"], capture_output=True,
                         text=True, cwd=root, env=dict(os.environ, PYTHONPATH=path), timeout=60, check=False)
    assert res.stderr.splitlines()[-1] == "AttributeError: module 'torch' has no attribute 'tenser'. Did you mean: 'tensor'?"


def test_dunder_names_are_never_reported_as_pytorch_features():
    with pytest.raises(AttributeError, match=r"^module 'torch.nn' has no attribute '__wrapped__'$"):
        torch.nn.__wrapped__  # noqa: B018
    assert not hasattr(torch, "__path_hooks__")
