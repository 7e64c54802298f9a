"""Below the core: devices and their array namespaces, dtypes and PyTorch's promotion, array-API gaps.

Nothing here knows about tensors or graphs; each module imports only NumPy, CuPy,
array_api_compat or another module of this package.

- ``device.py``: ``cpu`` -> NumPy, ``cuda`` -> CuPy, the default device.
- ``dtypes.py``: glassgrad's dtypes and PyTorch's type promotion (NOTE [ Type promotion ]).
- ``dtype_info.py``: ``finfo``, ``iinfo``, ``result_type``, ``can_cast``.
- ``gaps.py``: where the array API leaves a choice open and PyTorch does not.
- ``erf.py``, ``size.py``, ``settings.py``, ``print_options.py``, ``cuda_runtime.py``.
"""
