"""Recurrent layers: ``RNN``, ``LSTM`` and ``GRU``, as ``torch.nn`` (their one-step cells are in
rnn_cell.py).

RNN and GRU are built from ordinary ops (linear/addmm, sigmoid, tanh, mul, add, stack, cat, dropout), so
the graph holds one set of gate nodes per time step; a float32 LSTM is one fused node per layer and
direction, as PyTorch's CPU graph (NOTE [ Recurrence unrolled ] 7). The layers
take a padded tensor or a ``PackedSequence`` (NOTE [ Packed recurrence ]); LSTM takes ``proj_size``.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ... import functional as E
from .. import functional as F
from .. import init
from ...backend import dtypes as _dtype
from ..functional.recurrent import mkldnn_rnn_layer
from ..functional.teaching import is_teaching_view
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _index_select
from .module import Module
from .rnn_cell import _gru_step, _lstm_step, _rnn_step


# NOTE [ Recurrence unrolled ]
# 1. A recurrent layer is a Python loop over time steps; each step calls a step function
#    (rnn_cell.py), so a T-step sequence leaves T copies of the cell's nodes (and their saved
#    tensors) in the graph. That is why an RNN's activation memory grows with sequence length.
# 2. As PyTorch's unfused CPU kernel does, a layer first projects the whole input at once
#    (``linear(x, W_ih, b_ih)`` over all steps, one addmm), then per step adds
#    ``linear(h, W_hh, b_hh)``. The cells (``RNNCell`` ...) project input and hidden per call.
#    (A float32 LSTM is one fused node per layer instead: rule 7.)
# 3. Gate order inside the stacked weights is PyTorch's: LSTM (i, f, g, o), GRU (r, z, n),
#    and GRU's candidate is ``n = tanh(x_n + r * (W_hn h + b_hn))``, h' = n + z * (h - n).
# 4. A reverse direction walks the steps backwards and its outputs are put back in time
#    order before being concatenated with the forward direction's along the feature dim.
# 5. Dropout (``dropout=p``) is applied to each layer's output except the last, in training only.
# 6. LSTM with ``proj_size=P`` multiplies each step's ``o * tanh(c)`` by ``weight_hr`` (P, H) (an
#    MmBackward0, as PyTorch's): h and the layer output have P features, c keeps H, and
#    ``weight_hh`` is (4H, P).
# 7. Which graph: as PyTorch's CPU kernels, a float32 LSTM with biases, no projection and a padded
#    input is one MkldnnRnnLayerBackward0 node per layer and direction (NOTE [ Fused LSTM layer ] in
#    engine/ops/nn/rnn_fused.py). Otherwise (GRU; an LSTM in float64, with proj_size or a packed
#    input; the cells) a step is PyTorch's unfused cell: its gates cut with ``unsafe_chunk``
#    (UnsafeSplitBackward0) and finished in place (rnn_cell.py). ``engine.nn.teaching_view()``
#    writes every step out with one out-of-place node per operation instead (NOTE [ Teaching view ]
#    in engine/nn/functional/teaching.py).

# NOTE [ Packed recurrence ]
# 1. With a PackedSequence (NOTE [ Packed layout ] in nn/utils/rnn.py) step t reads the next
#    ``batch_sizes[t]`` rows of ``data``: the first ``batch_sizes[t]`` sequences of the sorted batch.
# 2. Forward direction: when the batch shrinks at step t, the state rows of the sequences that just
#    ended are set aside (a slice) as their final state, and the step runs on the rest; the final
#    state is those pieces concatenated back in batch order (a CatBackward0 when the batch shrank).
# 3. Reverse direction: it starts at the last step with only the sequences that reach it, and as
#    the walk goes back and the batch grows, the initial state rows of the sequences that start
#    their reverse walk there are appended (a cat): each sequence's reverse pass begins at its own end.
# 4. A layer's output is the per-step outputs concatenated (CatBackward0), in the packed layout.
# 5. As PyTorch, ``hx`` is put in sorted order with ``index_select(1, sorted_indices)`` and h_n/c_n
#    back in the caller's order with ``unsorted_indices``; ``batch_first`` does not apply.


def _dtype_name(dt):
    return repr(dt)


def _rows(state, a, b):
    """Rows a:b of a step state (a tensor, or LSTM's (h, c))."""
    return tuple(t[a:b] for t in state) if isinstance(state, tuple) else state[a:b]


def _cat_rows(states):
    if isinstance(states[0], tuple):
        return tuple(E.cat([s[i] for s in states], 0) for i in range(len(states[0])))
    return E.cat(states, 0)


def _out(state):
    return state[0] if isinstance(state, tuple) else state


class RNNBase(Module):
    """Shared construction, checks and the layer/direction/time loop of RNN, LSTM and GRU.

    Parameters are ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``
    (``_reverse`` for the second direction), and LSTM's ``weight_hr_l{k}`` when ``proj_size > 0``, all
    initialised U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)). Input is a padded tensor or a PackedSequence.
    Differs from PyTorch: for a packed LSTM input, ``hx`` sizes are checked with the padded input's messages
    (PyTorch skips the check there and fails later inside its kernel).
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
        gate_size = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gate_size is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size *= hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input_size)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
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

    def check_input(self, input, batch_sizes=None) -> None:
        w = self._flat_weights[0]
        if input.dtype is not w.dtype:
            raise ValueError(f"RNN input dtype ({_dtype_name(input.dtype)}) does not match weight dtype "
                             f"({_dtype_name(w.dtype)}). Convert input: input.to({_dtype_name(w.dtype)}), or "
                             f"convert model: model.to({_dtype_name(input.dtype)})")
        want = 2 if batch_sizes is not None else 3
        if input.dim() != want:
            raise RuntimeError(f"input must have {want} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def get_expected_hidden_size(self, input, batch_sizes=None):
        if batch_sizes is not None:
            mini_batch = batch_sizes[0]
        else:
            mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, self._real_hidden_size)

    @property
    def _real_hidden_size(self):
        return self.proj_size if self.proj_size > 0 else self.hidden_size

    @staticmethod
    def check_hidden_size(hx, expected, msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(msg.format(tuple(expected), list(hx.shape)))

    def _zeros(self, input, batch, size=None):
        return E.zeros(self.num_layers * (2 if self.bidirectional else 1), batch, size or self._real_hidden_size,
                       dtype=input.dtype, device=input.device)

    @staticmethod
    def _unpack_input(input):
        """(data, batch sizes as ints, sorted_indices, unsorted_indices) of a PackedSequence, else None."""
        if not isinstance(input, PackedSequence):
            return None
        return input.data, [int(b) for b in input.batch_sizes.tolist()], input.sorted_indices, \
            input.unsorted_indices

    @staticmethod
    def permute_hidden(hx, permutation):
        """``hx`` with its batch dim put in ``permutation`` order (NOTE [ Packed recurrence ] 5)."""
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(_index_select(h, 1, permutation) for h in hx)
        return _index_select(hx, 1, permutation)

    # -- the loop ----------------------------------------------------------------------------

    def _run(self, input, states, batch_sizes=None):
        """``input`` (T, N, F) time-major, or a packed ``data`` (sum of lengths, F) with ``batch_sizes``
        (ints); ``states`` a list per (layer*D + d) of the step state.

        Returns the last layer's output ((T, N, D*H), or packed) and the final state per (layer, direction).
        """
        num_directions = 2 if self.bidirectional else 1
        finals = []
        x = input
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                w = [getattr(self, name) for name in self._all_weights[k]]
                w_ih, w_hh = w[0], w[1]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                weights = (w_hh, b_hh) + ((w[-1],) if self.proj_size > 0 else ())
                proj = F.linear(x, w_ih, b_ih)                             # NOTE [ Recurrence unrolled ] 2
                walk = self._walk if batch_sizes is None else self._walk_packed
                y, state = walk(proj, states[k], weights, direction == 1, batch_sizes)
                outs.append(y)
                finals.append(state)
            x = outs[0] if num_directions == 1 else E.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, finals

    def _walk(self, proj, state, weights, reverse, batch_sizes=None):
        igates = E.unbind(proj, 0)
        steps = range(len(igates) - 1, -1, -1) if reverse else range(len(igates))
        ys = [None] * len(igates)
        for t in steps:
            state = self._step(igates[t], state, *weights)
            ys[t] = _out(state)
        return E.stack(ys, 0), state

    def _walk_packed(self, proj, init, weights, reverse, batch_sizes):
        """One direction over packed steps (NOTE [ Packed recurrence ] 2-4)."""
        offsets = [0]
        for b in batch_sizes:
            offsets.append(offsets[-1] + b)
        ys = []
        if not reverse:
            state, last, ended = init, batch_sizes[0], []
            for t, b in enumerate(batch_sizes):
                if b < last:
                    ended.append(_rows(state, b, last))
                    state = _rows(state, 0, b)
                last = b
                state = self._step(proj[offsets[t]:offsets[t] + b], state, *weights)
                ys.append(_out(state))
            ended.append(state)
            final = ended[0] if len(ended) == 1 else _cat_rows(ended[::-1])
        else:
            last = batch_sizes[-1]
            state = init if last == batch_sizes[0] else _rows(init, 0, last)
            for t in range(len(batch_sizes) - 1, -1, -1):
                b = batch_sizes[t]
                if b > last:
                    state = _cat_rows([state, _rows(init, last, b)])
                last = b
                state = self._step(proj[offsets[t]:offsets[t] + b], state, *weights)
                ys.append(_out(state))
            ys.reverse()
            final = state
        return (ys[0] if len(ys) == 1 else E.cat(ys, 0)), final

    def _step(self, igates, state, w_hh, b_hh):
        raise NotImplementedError

    def _forward_tensor(self, input, hx, name):
        """Shared RNN/GRU forward (one hidden tensor)."""
        packed = self._unpack_input(input)
        if packed is not None:
            data, batch_sizes, sorted_indices, unsorted_indices = packed
            if hx is None:
                hx = self._zeros(data, batch_sizes[0])
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self.check_input(data, batch_sizes)
            self.check_hidden_size(hx, self.get_expected_hidden_size(data, batch_sizes))
            out, finals = self._run(data, list(E.unbind(hx, 0)), batch_sizes)
            h_n = self.permute_hidden(E.stack(finals, 0), unsorted_indices)
            return PackedSequence(out, input.batch_sizes, sorted_indices, unsorted_indices), h_n
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
            out = out.transpose_(0, 1)          # in place (TransposeBackward1), as PyTorch's unfused kernel
        h_n = E.stack(finals, 0)
        if not is_batched:
            out, h_n = E.squeeze(out, batch_dim), E.squeeze(h_n, 1)
        return out, h_n

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
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
    """LSTM with PyTorch's gate order (i, f, g, o): ``c' = f*c + i*g``, ``h' = o*tanh(c')``, and with
    ``proj_size=P`` ``h' = (o*tanh(c')) W_hr^T`` (NOTE [ Recurrence unrolled ] 6).

    ``forward(input, hx=None)`` with ``hx = (h_0, c_0)`` returns ``(output, (h_n, c_n))``; input a
    padded tensor or a PackedSequence (then output is one too).
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def _step(self, igates, state, w_hh, b_hh, w_hr=None):
        return _lstm_step(igates, state, w_hh, b_hh, w_hr)

    def get_expected_cell_size(self, input, batch_sizes=None):
        h = self.get_expected_hidden_size(input, batch_sizes)
        return h[:2] + (self.hidden_size,)

    def _check_states(self, input, hx, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hx[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hx[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def _use_fused(self, x) -> bool:
        """PyTorch's CPU condition for one MkldnnRnnLayerBackward0 per layer and direction (NOTE [ Recurrence
        unrolled ] 7): float32 on the CPU, biases, no projection, a padded input, not the teaching view."""
        return (x.dtype is _dtype.float32 and x.device.type == "cpu" and self.bias and self.proj_size == 0
                and not is_teaching_view())

    def _run_fused(self, x, hx):
        """Time-major ``x``: (output, h_n, c_n) from one fused node per (layer, direction)."""
        num_directions = 2 if self.bidirectional else 1
        x = x.contiguous()                          # as PyTorch: a strided input is copied (CloneBackward0)
        h0 = [hx[0][k] for k in range(hx[0].shape[0])]            # SelectBackward0 each, as PyTorch
        c0 = [hx[1][k] for k in range(hx[1].shape[0])]
        hs, cs = [], []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                w_ih, w_hh, b_ih, b_hh = (getattr(self, name) for name in self._all_weights[k])
                out, hy, cy = mkldnn_rnn_layer(x, w_ih, w_hh, b_ih, b_hh, h0[k], c0[k], direction == 1,
                                               self.hidden_size, self.num_layers, self.bidirectional, self.training)
                outs.append(out)
                hs.append(hy)
                cs.append(cy)
            x = outs[0] if num_directions == 1 else E.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, E.stack(hs, 0), E.stack(cs, 0)

    def forward(self, input, hx=None):
        packed = self._unpack_input(input)
        if packed is not None:
            data, batch_sizes, sorted_indices, unsorted_indices = packed
            if hx is None:
                hx = (self._zeros(data, batch_sizes[0]), self._zeros(data, batch_sizes[0], self.hidden_size))
            else:
                hx = self.permute_hidden(tuple(hx), sorted_indices)
            self._check_states(data, hx, batch_sizes)
            out, finals = self._run(data, list(zip(E.unbind(hx[0], 0), E.unbind(hx[1], 0))), batch_sizes)
            h_n, c_n = self.permute_hidden((E.stack([s[0] for s in finals], 0), E.stack([s[1] for s in finals], 0)),
                                           unsorted_indices)
            return PackedSequence(out, input.batch_sizes, sorted_indices, unsorted_indices), (h_n, c_n)
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = E.unsqueeze(input, batch_dim)
        if hx is None:
            hx = (self._zeros(input, input.shape[batch_dim]),
                  self._zeros(input, input.shape[batch_dim], self.hidden_size))
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
        self._check_states(input, hx)
        x = E.transpose(input, 0, 1) if self.batch_first else input
        if self._use_fused(x):
            out, h_n, c_n = self._run_fused(x, hx)
            if self.batch_first:
                out = E.transpose(out, 0, 1)
        else:
            out, finals = self._run(x, list(zip(E.unbind(hx[0], 0), E.unbind(hx[1], 0))))
            h_n = E.stack([s[0] for s in finals], 0)
            c_n = E.stack([s[1] for s in finals], 0)
            if self.batch_first:
                out = out.transpose_(0, 1)      # in place (TransposeBackward1), as PyTorch's unfused kernel
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
