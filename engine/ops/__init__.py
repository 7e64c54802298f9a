"""Kernels that need more than one array-API call (im2col for the convolutions), and the op-table
rows that live beside their kernels: conv (conv1d/2d/3d, the transposes, fold/unfold), norm (batch
and group norm), pool, pool3d, shuffle, bilinear, activation, loss, pad, tensor_ops (roll, scatter,
random draws) and more. engine/derivatives.py imports them, so OPS holds every row."""
