"""``DeviceArray``: a minimal buffer in GPU memory, so that kernels can be launched and
tested without PyTorch or CuPy. It is a contiguous (C-order) array with a numpy dtype
(ml_dtypes' bfloat16 and fp8 included), copied from and to numpy, and it speaks both
protocols that launches accept (``data_ptr()`` and ``__cuda_array_interface__``).
"""

from __future__ import annotations

import math
from typing import Any

from . import driver
from .dtypes import sig_of_dtype


class DeviceArray:
    """``shape`` elements of ``dtype`` in GPU memory (uninitialized; see ``zeros`` and
    ``from_numpy``). Freed by ``free()``, on leaving a ``with`` block, or when collected."""

    __slots__ = ("ptr", "sig", "shape", "dtype", "nbytes", "__weakref__")

    def __init__(self, shape: int | tuple[int, ...], dtype: Any = "float32") -> None:
        self.shape: tuple[int, ...] = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
        if any(d < 0 for d in self.shape):
            raise ValueError(f"negative dimension in shape {self.shape}")
        self.dtype = _numpy_dtype(dtype)
        self.nbytes = math.prod(self.shape) * self.dtype.itemsize
        self.ptr = 0
        self.sig: str | None = None  # the signature name of the dtype: the launch fast path compares it
        self.ptr = driver.mem_alloc(self.nbytes)
        self.sig = sig_of_dtype(self.dtype) or f"<{self.dtype}>"

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def empty(cls, shape: int | tuple[int, ...], dtype: Any = "float32") -> "DeviceArray":
        return cls(shape, dtype)

    @classmethod
    def zeros(cls, shape: int | tuple[int, ...], dtype: Any = "float32") -> "DeviceArray":
        a = cls(shape, dtype)
        if a.nbytes:
            driver.memset_d8(a.ptr, 0, a.nbytes)
        return a

    @classmethod
    def from_numpy(cls, array: Any) -> "DeviceArray":
        import numpy as np

        host = np.ascontiguousarray(array)
        a = cls(host.shape, host.dtype)
        a.copy_from(host)
        return a

    # -- copies -------------------------------------------------------------------------------------
    def copy_from(self, array: Any) -> "DeviceArray":
        """Copy a host array of the same size (converted to this dtype) into the device buffer."""
        import numpy as np

        host = np.ascontiguousarray(array, dtype=self.dtype)
        if host.size * host.dtype.itemsize != self.nbytes:
            raise ValueError(f"cannot copy {host.shape} elements into a DeviceArray of shape {self.shape}")
        self._live()
        if self.nbytes:
            driver.memcpy_htod(self.ptr, host.ctypes.data, self.nbytes)
        return self

    def numpy(self) -> Any:
        """A host copy (waits for the copy; kernels launched before on the legacy default
        stream, or on blocking streams, finish first)."""
        import numpy as np

        self._live()
        out = np.empty(self.shape, dtype=self.dtype)
        if self.nbytes:
            driver.memcpy_dtoh(out.ctypes.data, self.ptr, self.nbytes)
        return out

    def copy_to(self, array: Any) -> None:
        import numpy as np

        if not (isinstance(array, np.ndarray) and array.flags.c_contiguous and array.nbytes == self.nbytes):
            raise ValueError("copy_to needs a C-contiguous numpy array of the same size")
        self._live()
        if self.nbytes:
            driver.memcpy_dtoh(array.ctypes.data, self.ptr, self.nbytes)

    # -- the protocols launches accept --------------------------------------------------------------
    def data_ptr(self) -> int:
        return self.ptr

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None}

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self) -> str:
        state = f"0x{self.ptr:x}" if self.ptr else "freed"
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, {state})"

    # -- lifetime -----------------------------------------------------------------------------------
    def _live(self) -> None:
        if not self.ptr:
            raise ValueError("this DeviceArray was freed")

    def free(self) -> None:
        ptr, self.ptr, self.sig = self.ptr, 0, None
        if ptr:
            driver.mem_free(ptr)

    def __enter__(self) -> "DeviceArray":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.free()

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:  # the driver may already be shut down at interpreter exit
            pass


def _numpy_dtype(dtype: Any) -> Any:
    import numpy as np

    if isinstance(dtype, str) and dtype in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                            "float8_e5m2fnuz"):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, dtype))
    return np.dtype(dtype)
