"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their one-step cells, as ``torch.nn``.

Built from ordinary ops (linear/addmm, sigmoid, tanh, mul, add, stack, cat, dropout), so the
graph holds one set of gate nodes per time step: see NOTE [ Recurrence unrolled ].
"""
from __future__ import annotations

import math
import numbers
import warnings

from .. import functional as E
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

# NOTE [ Recurrence unrolled ]
# 1. A recurrent layer is a Python loop over time steps; each step calls the cell function
#    below, so a T-step sequence leaves T copies of the cell's nodes (and their saved
#    tensors) in the graph. That is why an RNN's activation memory grows with sequence length.
# 2. As PyTorch's unfused CPU kernel does, a layer first projects the whole input at once
#    (``linear(x, W_ih, b_ih)`` over all steps, one addmm), then per step adds
#    ``linear(h, W_hh, b_hh)``. The cells (``RNNCell`` ...) project input and hidden per call.
#    (PyTorch's float32 CPU path records a whole layer as one fused MkldnnRnnLayerBackward0
#    node; glassgrad keeps the ordinary nodes so each step's saved tensors can be seen.)
# 3. Gate order inside the stacked weights is PyTorch's: LSTM (i, f, g, o), GRU (r, z, n),
#    and GRU's candidate is ``n = tanh(x_n + r * (W_hn h + b_hn))``, h' = n + z * (h - n).
# 4. A reverse direction walks the steps backwards and its outputs are put back in time
#    order before being concatenated with the forward direction's along the feature dim.
# 5. Dropout (``dropout=p``) is applied to each layer's output except the last, in training only.


def _rnn_step(igates, h, w_hh, b_hh, act):
    return act(igates + F.linear(h, w_hh, b_hh))


def _lstm_step(igates, state, w_hh, b_hh):
    h, c = state
    gates = igates + F.linear(h, w_hh, b_hh)
    i, f, g, o = E.chunk(gates, 4, 1)
    i, f, g, o = E.sigmoid(i), E.sigmoid(f), E.tanh(g), E.sigmoid(o)
    c = f * c + i * g
    return o * E.tanh(c), c


def _gru_step(igates, h, w_hh, b_hh):
    i_r, i_z, i_n = E.chunk(igates, 3, 1)
    h_r, h_z, h_n = E.chunk(F.linear(h, w_hh, b_hh), 3, 1)
    r = E.sigmoid(i_r + h_r)
    z = E.sigmoid(i_z + h_z)
    n = E.tanh(i_n + r * h_n)
    return n + z * (h - n)


def _dtype_name(dt):
    return repr(dt)


class RNNBase(Module):
    """Shared construction, checks and the layer/direction/time loop of RNN, LSTM and GRU.

    Parameters are ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``
    (``_reverse`` for the second direction), all initialised U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
    Differs from PyTorch: no PackedSequence input, no LSTM ``proj_size``.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size > 0:
            raise NotImplementedError("glassgrad's LSTM has no proj_size (projections); use proj_size=0")
        gate_size = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gate_size is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size *= hidden_size
        num_directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input_size)),
                          ("weight_hh_l{}{}", (gate_size, hidden_size))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                names = []
                for fmt, shape in shapes:
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(E.empty(*shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters grouped per (layer, direction), as PyTorch's ``all_weights``."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op (PyTorch packs weights for cuDNN here; glassgrad has nothing to pack)."""

    # -- checks (PyTorch's messages) --------------------------------------------------------

    def check_input(self, input) -> None:
        w = self._flat_weights[0]
        if input.dtype is not w.dtype:
            raise ValueError(f"RNN input dtype ({_dtype_name(input.dtype)}) does not match weight dtype "
                             f"({_dtype_name(w.dtype)}). Convert input: input.to({_dtype_name(w.dtype)}), or "
                             f"convert model: model.to({_dtype_name(input.dtype)})")
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def get_expected_hidden_size(self, input):
        mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, self.hidden_size)

    @staticmethod
    def check_hidden_size(hx, expected, msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(msg.format(tuple(expected), list(hx.shape)))

    def _zeros(self, input, batch):
        return E.zeros(self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size,
                       dtype=input.dtype, device=input.device)

    # -- the loop ----------------------------------------------------------------------------

    def _run(self, input, states):
        """``input`` (T, N, F) time-major; ``states`` a list per (layer*D + d) of the step state.

        Returns the last layer's output (T, N, D*H) and the final state per (layer, direction).
        """
        num_directions = 2 if self.bidirectional else 1
        finals = []
        x = input
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                names = self._all_weights[k]
                w_ih, w_hh = getattr(self, names[0]), getattr(self, names[1])
                b_ih, b_hh = (getattr(self, names[2]), getattr(self, names[3])) if self.bias else (None, None)
                igates = E.unbind(F.linear(x, w_ih, b_ih), 0)           # NOTE [ Recurrence unrolled ] 2
                steps = range(len(igates) - 1, -1, -1) if direction == 1 else range(len(igates))
                state = states[k]
                ys = [None] * len(igates)
                for t in steps:
                    state = self._step(igates[t], state, w_hh, b_hh)
                    ys[t] = state[0] if isinstance(state, tuple) else state
                outs.append(E.stack(ys, 0))
                finals.append(state)
            x = outs[0] if num_directions == 1 else E.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, finals

    def _step(self, igates, state, w_hh, b_hh):
        raise NotImplementedError

    def _forward_tensor(self, input, hx, name):
        """Shared RNN/GRU forward (one hidden tensor)."""
        if input.dim() not in (2, 3):
            tail = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = E.unsqueeze(input, batch_dim)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = E.unsqueeze(hx, 1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        if hx is None:
            hx = self._zeros(input, input.shape[batch_dim])
        self.check_input(input)
        self.check_hidden_size(hx, self.get_expected_hidden_size(input))
        x = E.transpose(input, 0, 1) if self.batch_first else input
        out, finals = self._run(x, list(E.unbind(hx, 0)))
        if self.batch_first:
            out = E.transpose(out, 0, 1)
        h_n = E.stack(finals, 0)
        if not is_batched:
            out, h_n = E.squeeze(out, batch_dim), E.squeeze(h_n, 1)
        return out, h_n

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ReLU).

    ``forward(input, hx=None)`` returns ``(output, h_n)``; input is (T, N, H_in), or
    (N, T, H_in) with ``batch_first=True``, or unbatched (T, H_in); h_n is (D*num_layers, N, H).
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def _step(self, igates, h, w_hh, b_hh):
        return _rnn_step(igates, h, w_hh, b_hh, E.tanh if self.mode == "RNN_TANH" else E.relu)

    def forward(self, input, hx=None):
        return self._forward_tensor(input, hx, "RNN")


class LSTM(RNNBase):
    """LSTM with PyTorch's gate order (i, f, g, o): ``c' = f*c + i*g``, ``h' = o*tanh(c')``.

    ``forward(input, hx=None)`` with ``hx = (h_0, c_0)`` returns ``(output, (h_n, c_n))``.
    ``proj_size > 0`` raises NotImplementedError.
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def _step(self, igates, state, w_hh, b_hh):
        return _lstm_step(igates, state, w_hh, b_hh)

    def forward(self, input, hx=None):
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = E.unsqueeze(input, batch_dim)
        if hx is None:
            z = self._zeros(input, input.shape[batch_dim])
            hx = (z, z)
        else:
            h0, c0 = hx
            if is_batched:
                if h0.dim() != 3 or c0.dim() != 3:
                    raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                       f"({h0.dim()}-D, {c0.dim()}-D) tensors")
            else:
                if h0.dim() != 2 or c0.dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                       f"({h0.dim()}-D, {c0.dim()}-D) tensors")
                hx = (E.unsqueeze(h0, 1), E.unsqueeze(c0, 1))
        self.check_input(input)
        expected = self.get_expected_hidden_size(input)
        self.check_hidden_size(hx[0], expected, "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hx[1], expected, "Expected hidden[1] size {}, got {}")
        x = E.transpose(input, 0, 1) if self.batch_first else input
        states = list(zip(E.unbind(hx[0], 0), E.unbind(hx[1], 0)))
        out, finals = self._run(x, states)
        if self.batch_first:
            out = E.transpose(out, 0, 1)
        h_n = E.stack([s[0] for s in finals], 0)
        c_n = E.stack([s[1] for s in finals], 0)
        if not is_batched:
            out, h_n, c_n = E.squeeze(out, batch_dim), E.squeeze(h_n, 1), E.squeeze(c_n, 1)
        return out, (h_n, c_n)


class GRU(RNNBase):
    """GRU with PyTorch's gate order (r, z, n): ``n = tanh(W_in x + b_in + r*(W_hn h + b_hn))``,
    ``h' = (1 - z)*n + z*h``. ``forward(input, hx=None)`` returns ``(output, h_n)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def _step(self, igates, h, w_hh, b_hh):
        return _gru_step(igates, h, w_hh, b_hh)

    def forward(self, input, hx=None):
        return self._forward_tensor(input, hx, "GRU")


# -- cells ------------------------------------------------------------------------------------

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


__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
