"""Kernels that need more than one array-API call (im2col for conv2d)."""
