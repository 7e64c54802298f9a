"""One step of a recurrence: the step functions of the Elman RNN, LSTM and GRU (gate order and formulas:
NOTE [ Recurrence unrolled ] in rnn.py) and the cells ``RNNCell``, ``LSTMCell``, ``GRUCell``, which run one
step per call."""
from __future__ import annotations

import math

from ... import functional as E
from .. import functional as F
from .. import init
from ..functional.recurrent import unsafe_chunk
from ..functional.teaching import is_teaching_view
from ..parameter import Parameter
from .module import Module


def _rnn_step(igates, h, w_hh, b_hh, act):
    return act(igates + F.linear(h, w_hh, b_hh))


def _lstm_step(igates, state, w_hh, b_hh, w_hr=None):
    """PyTorch's unfused CPU LSTM cell, op for op (a float64, projected or packed LSTM and ``LSTMCell``):
    the hidden projection plus the input's, in place, cut with ``unsafe_chunk`` and finished in place.
    The teaching view writes it out (NOTE [ Teaching view ])."""
    if is_teaching_view():
        return _lstm_step_written_out(igates, state, w_hh, b_hh, w_hr)
    h, c = state
    i, f, g, o = unsafe_chunk(F.linear(h, w_hh, b_hh).add_(igates), 4, 1)
    i, f, g, o = i.sigmoid_(), f.sigmoid_(), g.tanh_(), o.sigmoid_()
    c = (f * c).add_(i * g)
    h = o * c.tanh()
    return (h if w_hr is None else F.linear(h, w_hr)), c     # NOTE [ Recurrence unrolled ] 6


def _lstm_step_written_out(igates, state, w_hh, b_hh, w_hr=None):
    """The LSTM step with one out-of-place node per operation (NOTE [ Teaching view ])."""
    h, c = state
    gates = igates + F.linear(h, w_hh, b_hh)
    i, f, g, o = E.chunk(gates, 4, 1)
    i, f, g, o = E.sigmoid(i), E.sigmoid(f), E.tanh(g), E.sigmoid(o)
    c = f * c + i * g
    h = o * E.tanh(c)
    return (h if w_hr is None else F.linear(h, w_hr)), c     # NOTE [ Recurrence unrolled ] 6


def _gru_step(igates, h, w_hh, b_hh):
    """PyTorch's CPU GRU cell, op for op (NOTE [ Recurrence unrolled ] 3 in rnn.py): the gates cut with
    ``unsafe_chunk`` (UnsafeSplitBackward0) and finished in place; the teaching view writes it out."""
    if is_teaching_view():
        return _gru_step_written_out(igates, h, w_hh, b_hh)
    i_r, i_z, i_n = unsafe_chunk(igates, 3, 1)
    h_r, h_z, h_n = unsafe_chunk(F.linear(h, w_hh, b_hh), 3, 1)
    r = h_r.add_(i_r).sigmoid_()
    z = h_z.add_(i_z).sigmoid_()
    n = i_n.add(h_n.mul_(r)).tanh_()
    return (h - n).mul_(z).add_(n)


def _gru_step_written_out(igates, h, w_hh, b_hh):
    """The GRU step with one out-of-place node per operation (NOTE [ Teaching view ])."""
    i_r, i_z, i_n = E.chunk(igates, 3, 1)
    h_r, h_z, h_n = E.chunk(F.linear(h, w_hh, b_hh), 3, 1)
    r = E.sigmoid(i_r + h_r)
    z = E.sigmoid(i_z + h_z)
    n = E.tanh(i_n + r * h_n)
    return n + z * (h - n)


class RNNCellBase(Module):
    """``weight_ih`` (chunks*H, H_in), ``weight_hh`` (chunks*H, H), ``bias_ih``/``bias_hh`` (chunks*H)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(E.empty(num_chunks * hidden_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(E.empty(num_chunks * hidden_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(E.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(E.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, name, input, hx):
        """Checks dims (PyTorch's words), adds the batch dim to unbatched input/state, checks sizes."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = () if hx is None else (hx if isinstance(hx, tuple) else (hx,))
        for idx, h in enumerate(states):
            if h.dim() not in (1, 2):
                what = f"hx[{idx}]" if name == "LSTMCell" else "hidden"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = E.unsqueeze(input, 0)
            states = tuple(E.unsqueeze(h, 0) for h in states)
        if not states:
            z = E.zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
            states = (z, z) if name == "LSTMCell" else (z,)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        for idx, h in enumerate(states):
            if input.shape[0] != h.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{idx} batch size "
                                   f"{h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{idx} has inconsistent hidden_size: got {h.shape[1]}, expected "
                                   f"{self.hidden_size}")
        return input, states, is_batched


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or ReLU); returns h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (h,), is_batched = self._prepare("RNNCell", input, hx)
        if self.nonlinearity == "tanh":
            act = E.tanh
        elif self.nonlinearity == "relu":
            act = E.relu
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = _rnn_step(F.linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh, act)
        return ret if is_batched else E.squeeze(ret, 0)


class LSTMCell(RNNCellBase):
    """One LSTM step; ``forward(input, (h, c))`` returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, state, is_batched = self._prepare("LSTMCell", input, hx)
        h, c = _lstm_step(F.linear(input, self.weight_ih, self.bias_ih), state, self.weight_hh, self.bias_hh)
        return (h, c) if is_batched else (E.squeeze(h, 0), E.squeeze(c, 0))


class GRUCell(RNNCellBase):
    """One GRU step; returns h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), is_batched = self._prepare("GRUCell", input, hx)
        ret = _gru_step(F.linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return ret if is_batched else E.squeeze(ret, 0)
