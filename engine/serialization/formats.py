"""Names and constants of PyTorch's checkpoint format that both the writer and the reader use."""
from __future__ import annotations

import numpy as np

# The legacy typed-storage class names: the only place a checkpoint records a dtype.
# Storage class -> (NumPy dtype of the record's elements, glassgrad dtype name it loads as).
STORAGE_TYPES = {
    "BoolStorage": (np.dtype("bool"), "bool"),
    "LongStorage": (np.dtype("<i8"), "int64"),
    "FloatStorage": (np.dtype("<f4"), "float32"),
    "DoubleStorage": (np.dtype("<f8"), "float64"),
    "IntStorage": (np.dtype("<i4"), "int32"),
    "ShortStorage": (np.dtype("<i2"), "int16"),
    "CharStorage": (np.dtype("i1"), "int8"),
    "ByteStorage": (np.dtype("u1"), "uint8"),
    "HalfStorage": (np.dtype("<f2"), "float16"),
    "BFloat16Storage": (np.dtype("<u2"), "bfloat16"),  # raw bits, viewed as ml_dtypes' bfloat16
}

# glassgrad dtype name -> storage class it is written as
STORAGE_OF_DTYPE = {"bool": "BoolStorage", "int64": "LongStorage", "float32": "FloatStorage",
                    "float64": "DoubleStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
                    "uint8": "ByteStorage", "float16": "HalfStorage", "bfloat16": "BFloat16Storage"}

# torch.<name> dtype globals a pickle may name, and the glassgrad dtype each becomes
DTYPE_GLOBALS = {"bool": "bool", "int64": "int64", "long": "int64", "float32": "float32",
                 "float": "float32", "float64": "float64", "double": "float64", "int32": "int32", "int": "int32",
                 "int16": "int16", "short": "int16", "int8": "int8", "uint8": "uint8", "float16": "float16",
                 "half": "float16", "bfloat16": "bfloat16"}

REBUILD_TENSOR_V2 = ("torch._utils", "_rebuild_tensor_v2")
REBUILD_PARAMETER = ("torch._utils", "_rebuild_parameter")
ORDERED_DICT = ("collections", "OrderedDict")
COUNTER = ("collections", "Counter")      # MultiStepLR's milestones in its state_dict

ALIGNMENT = 64                 # every record's data starts on a multiple of this offset
FILE_VERSION = b"3\n"          # the `version` record torch.save writes today
FORMAT_VERSION = b"1"          # `.format_version`: storages in numeric key order
MAX_FILE_VERSION = 10          # newest `version` record this reader accepts

ZIP_MAGIC = b"PK\x03\x04"
# A legacy (pre-1.6) file begins with a pickled magic number 0x1950a86a20f9469cfc6c.
LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"
