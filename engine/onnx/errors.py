"""``torch.onnx.errors``: the ONNX exporter's exception types, as PyTorch defines them."""
from __future__ import annotations


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter; glassgrad raises it for every export (NOTE [ No ONNX export ])."""


class UnsupportedOperatorError(OnnxExporterError):
    """Raised when an operator is unsupported by the exporter."""
