"""Kernels that need more than one array-API call (im2col for conv2d), and the op-table rows that
live beside their kernels: norm (batch norm), pool, activation, loss, pad, tensor_ops (roll,
scatter, conv1d, random draws). engine/derivatives.py imports them, so OPS holds every row."""
