"""``engine.onnx``: importable as ``torch.onnx``; glassgrad writes no ONNX files.

NOTE [ No ONNX export ]
1. ``export``, ``register_custom_op_symbolic`` and ``unregister_custom_op_symbolic``
   raise ``OnnxExporterError`` (a RuntimeError, as in PyTorch) whose message names the
   function and says how to get the model to PyTorch's exporter: ``torch.save`` writes
   PyTorch's checkpoint format, which PyTorch loads.
2. ``is_in_onnx_export()`` is False, so a module that asks runs its ordinary forward.
3. ``TrainingMode`` and ``OperatorExportTypes`` exist with PyTorch's members, so a call
   that names them reaches ``export`` and its clear error.
"""
from __future__ import annotations

import enum

from . import errors
from .errors import OnnxExporterError

__all__ = ["OnnxExporterError", "OperatorExportTypes", "TrainingMode", "errors", "export", "is_in_onnx_export",
           "register_custom_op_symbolic", "unregister_custom_op_symbolic"]

_HOW = ("save the weights with torch.save(model.state_dict(), path) (PyTorch's file format), "
        "load them into the same model on PyTorch, and export it there")


class TrainingMode(enum.Enum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.Enum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def is_in_onnx_export() -> bool:
    """False: glassgrad never exports (NOTE [ No ONNX export ] rule 2)."""
    return False


def export(model, args=(), f=None, **kwargs):
    """Raises OnnxExporterError: glassgrad does not implement torch.onnx.export (rule 1)."""
    raise OnnxExporterError(f"glassgrad does not implement torch.onnx.export: {_HOW}")


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    raise OnnxExporterError(f"glassgrad does not implement torch.onnx.register_custom_op_symbolic: {_HOW}")


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    raise OnnxExporterError(f"glassgrad does not implement torch.onnx.unregister_custom_op_symbolic: {_HOW}")


def __getattr__(name):
    from ..missing import missing
    raise missing("torch.onnx", name)   # NOTE [ Missing names ] in engine/missing.py
