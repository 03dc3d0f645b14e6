"""``tlxc.tools.mxfp``: PyTorch helpers for the OCP microscaling (MX) element and scale
formats, under the names of Triton's ``triton.tools.mxfp`` (tutorial 10 builds its inputs
and its reference with them):

- ``MXFP4Tensor``: FP4 E2M1 values, one 4-bit code per ``uint8`` (sign in bit 3, a
  2-bit exponent of bias 1 in bits 2..1, one mantissa bit in bit 0), with packing of two
  codes per byte;
- ``MXScaleTensor``: E8M0 block scales, one ``uint8`` each (a biased power of two).

The E2M1 codes 0..7 are the magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 (code 1 is the
subnormal 0.5; codes 8..15 are their negatives, 8 being -0). There is no Inf or NaN.
An E8M0 byte ``e`` is 2**(e - 127); 255 is NaN, and there is no zero and no sign.

Conversions from float32, as the MX specification and Triton's helpers do them:

- to E2M1: round to nearest, ties to the even code (mantissa bit 0): 0.25 -> 0,
  0.75 -> 1, 1.25 -> 1, 2.5 -> 2, 5 -> 4; magnitudes above 6 (and Inf, NaN) saturate to
  6, keeping the sign bit; zero keeps its sign (-0.0 -> code 8). Ties are decided
  exactly; Triton's helper breaks them with a 1e-6 bias instead, so it may round values
  within 1e-6 of a midpoint differently;
- to E8M0: the floor of log2 (so 3.0 -> 2**1), biased by 127 and clamped to 0..254;
  zero, negative values, Inf and NaN become the NaN code 255. The floor is exact (from
  the float's exponent); Triton's helper takes it of a float32 log2, which rounds up to
  the next power for values a few ulps under one.

``random()`` draws with ``torch.randint`` in the order Triton's helpers do (for E2M1: the
sign bits, then the exponents, then the mantissa bits), so a seeded run draws the same
values as under Triton.
"""

from __future__ import annotations

from typing import Any

import torch

# magnitude of each E2M1 code 0..7 (code = exponent << 1 | mantissa)
_FP4_MAGNITUDES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
_E8M0_BIAS = 127
_E8M0_NAN = 255


def _size(size: Any) -> tuple[int, ...]:
    return tuple(size) if isinstance(size, (tuple, list, torch.Size)) else (int(size),)


def _check_float32(dtype: Any, what: str) -> None:
    if dtype != torch.float32:
        raise ValueError(f"{what}.to: only torch.float32 is supported, got {dtype}")


class MXFP4Tensor:
    """FP4 E2M1 data: ``data`` holds one code per ``uint8`` (see the module docstring).
    Built from float32 values (``data=``, rounded to nearest even) or, with ``size=``, empty
    until ``random()`` fills it."""

    def __init__(self, data: torch.Tensor | None = None, size: Any = None, device: Any = None) -> None:
        self.device = device
        if data is not None:
            if not isinstance(data, torch.Tensor):
                raise TypeError(f"MXFP4Tensor: data must be a torch tensor, got {type(data).__name__}")
            self.device = data.device
            self.data = self._from_float(data)
        elif size is not None:
            self.size = _size(size)
        else:
            raise ValueError("MXFP4Tensor: give data (float32 values) or size")

    def random(self) -> MXFP4Tensor:
        """Fill ``data`` with uniformly random codes (every sign, exponent and mantissa
        equally likely) and return self."""
        sign = torch.randint(0, 2, size=self.size, dtype=torch.uint8, device=self.device)
        exponent = torch.randint(0, 4, size=self.size, dtype=torch.uint8, device=self.device)
        mantissa = torch.randint(0, 2, size=self.size, dtype=torch.uint8, device=self.device)
        self.data = (sign << 3) | (exponent << 1) | mantissa
        return self

    def to(self, dtype: Any) -> torch.Tensor:
        """The values as a float32 tensor (-0.0 for code 8)."""
        _check_float32(dtype, "MXFP4Tensor")
        table = torch.tensor(_FP4_MAGNITUDES, dtype=torch.float32, device=self.data.device)
        magnitude = table[(self.data & 0x7).long()]
        return torch.where((self.data & 0x8) != 0, -magnitude, magnitude)

    def _from_float(self, values: torch.Tensor) -> torch.Tensor:
        """The E2M1 codes of float32 ``values`` (see the module docstring for the rounding)."""
        sign = torch.signbit(values).to(torch.uint8)
        a = values.abs().to(torch.float32)
        a = torch.where(torch.isnan(a) | torch.isinf(a), torch.full_like(a, _FP4_MAGNITUDES[-1]), a)
        table = torch.tensor(_FP4_MAGNITUDES, dtype=torch.float32, device=a.device)
        mids = (table[:-1] + table[1:]) / 2  # exact in float32
        # the code below the value's nearest midpoint: how many midpoints lie strictly under it
        code = (a.unsqueeze(-1) > mids).sum(dim=-1)
        # on a midpoint the value is between `code` and `code + 1`: take the even one
        on_mid = (code < len(mids)) & (a == mids[code.clamp(max=len(mids) - 1)])
        code = torch.where(on_mid & (code % 2 == 1), code + 1, code)
        return (sign << 3) | code.to(torch.uint8)

    def to_packed_tensor(self, dim: int) -> torch.Tensor:
        """Two codes per byte along ``dim``: element 2i in the low nibble, 2i+1 in the high
        one; an odd length is padded with a zero code. The result has ``ceil(n/2)`` along
        ``dim``."""
        data = self.data
        if not 0 <= dim < data.ndim:
            raise ValueError(f"to_packed_tensor: dim {dim} is not a dimension of a {data.ndim}-d tensor")
        if data.size(dim) % 2:
            pad = [0] * (2 * data.ndim)
            pad[2 * (data.ndim - 1 - dim) + 1] = 1  # F.pad lists the last dimension first
            data = torch.nn.functional.pad(data, pad, mode="constant", value=0)
        pairs = data.reshape(*data.shape[:dim], data.size(dim) // 2, 2, *data.shape[dim + 1:])
        return (pairs.select(dim + 1, 1) << 4) | pairs.select(dim + 1, 0)

    def unpack_packed_tensor(self, packed_tensor: torch.Tensor, dim: int, original_shape: Any) -> torch.Tensor:
        """The inverse of ``to_packed_tensor``: one code per ``uint8`` again, the padding of
        an odd ``original_shape[dim]`` removed."""
        low = packed_tensor & 0xF
        high = (packed_tensor >> 4) & 0xF
        both = torch.stack((low, high), dim=dim + 1)
        shape = list(packed_tensor.shape)
        shape[dim] *= 2
        data = both.reshape(shape)
        if original_shape[dim] % 2:
            data = data.narrow(dim, 0, original_shape[dim])
        return data.to(torch.uint8)


class MXScaleTensor:
    """E8M0 scales: ``data`` holds one biased exponent per ``uint8`` (see the module
    docstring). Built from float32 values (``data=``, rounded down to a power of two) or,
    with ``size=``, empty until ``random()`` fills it."""

    def __init__(self, data: torch.Tensor | None = None, size: Any = None, device: Any = None) -> None:
        self.device = device
        if data is not None:
            if not isinstance(data, torch.Tensor):
                raise TypeError(f"MXScaleTensor: data must be a torch tensor, got {type(data).__name__}")
            self.device = data.device
            self.data = self._from_float(data)
        elif size is not None:
            self.size = _size(size)
        else:
            raise ValueError("MXScaleTensor: give data (float32 values) or size")

    def random(self, low: float | None = None, high: float | None = None) -> MXScaleTensor:
        """Fill ``data`` with uniformly random exponents, never NaN: from 2**-127 to
        2**127, or between the powers of two of ``low`` and ``high`` (their log2 truncated
        toward zero, as Triton's helper does), and return self."""
        lo = 0 if low is None else max(0, int(torch.log2(torch.tensor(low))) + _E8M0_BIAS)
        hi = 254 if high is None else min(254, max(0, int(torch.log2(torch.tensor(high))) + _E8M0_BIAS))
        if lo > hi:
            raise ValueError(f"MXScaleTensor.random: low={low} is above high={high}")
        self.data = torch.randint(lo, hi + 1, size=self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype: Any) -> torch.Tensor:
        """The scales as a float32 tensor (NaN for code 255)."""
        _check_float32(dtype, "MXScaleTensor")
        e = self.data.to(torch.float32)
        value = torch.pow(2.0, e - _E8M0_BIAS)
        return torch.where(self.data == _E8M0_NAN, torch.full_like(value, float("nan")), value)

    def _from_float(self, values: torch.Tensor) -> torch.Tensor:
        """The E8M0 codes of float32 ``values`` (see the module docstring)."""
        v = values.to(torch.float32)
        invalid = torch.isnan(v) | torch.isinf(v) | (v <= 0)
        safe = torch.where(invalid, torch.ones_like(v), v)
        # frexp's exponent is exact (log2 in float32 rounds up just under a power of two)
        e = torch.frexp(safe).exponent.to(torch.int32) - 1 + _E8M0_BIAS
        code = e.clamp(0, 254).to(torch.uint8)
        return torch.where(invalid, torch.full_like(code, _E8M0_NAN), code)


__all__ = ["MXFP4Tensor", "MXScaleTensor"]
