"""Small ``tlx.async_dot`` (Hopper wgmma) kernels, one feature each, and their launches,
shared by the interpreter tests (tests/tlx/test_tlx_wgmma_interpreter.py), the PTX tests
(tests/codegen/test_tlx_wgmma_ptx.py) and the GPU tests (tests/gpu/test_tlx_wgmma_gpu.py).

Each kernel computes one ``[BM, BN]`` tile per program, most with one program.
``CASES`` names the variants; ``run_case`` makes a case's inputs with numpy and launches
it on the interpreter, or, given the torch module, on the GPU with the same arguments
as torch tensors, so the GPU tests launch exactly what the interpreter tests check.

Operand conventions: A is ``[BM, K]`` row-major (K-major, what every type takes). B is
``[K, BN]`` row-major -- N contiguous, MN-major, which only 16-bit types may be -- or,
with ``B_T``, given transposed as ``[BN, K]`` row-major and read through
``tlx.local_trans`` of an ``[BN, BK]`` buffer: a K-major ``[BK, BN]`` view, what tf32,
fp8 and int8 need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@tlxc.jit
def gemm_loop(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, B_T: tl.constexpr,
              A_IN_REGS: tl.constexpr, ACC: tl.constexpr):
    """C = A @ B, K stepped by BK: each step stores the tiles in shared memory, starts the
    MMA and waits for it. ``use_acc=k > 0`` (a runtime bool) makes the first step ignore
    the (uninitialized) accumulator. With ``A_IN_REGS`` the A tile goes to the MMA from
    registers (the compiler converts it to the wgmma A-operand layout)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    dtype = tlx.dtype_of(a_ptr)
    a_buf = tlx.local_alloc((BM, BK), dtype, 1)
    if B_T:
        b_buf = tlx.local_alloc((BN, BK), dtype, 1)
    else:
        b_buf = tlx.local_alloc((BK, BN), dtype, 1)
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, K // BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k * BK + rk)[None, :])
        if B_T:
            tlx.local_store(b_buf[0], tl.load(b_ptr + rn[:, None] * K + (k * BK + rk)[None, :]))
            b = tlx.local_trans(b_buf[0])  # [BK, BN], K contiguous
        else:
            tlx.local_store(b_buf[0], tl.load(b_ptr + (k * BK + rk)[:, None] * BN + rn[None, :]))
            b = b_buf[0]
        if A_IN_REGS:
            acc = tlx.async_dot(a, b, acc, use_acc=k > 0)
        else:
            tlx.local_store(a_buf[0], a)
            acc = tlx.async_dot(a_buf[0], b, acc, use_acc=k > 0)
        acc = tlx.async_dot_wait(0, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@tlxc.jit
def gemm_pipelined(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   ACC: tl.constexpr):
    """C = A @ B with two buffers per operand: the MMA of step k runs while step k + 1's
    tiles are stored (``async_dot_wait(1)`` keeps one MMA in flight; the accumulator is
    carried through the loop while the MMA still writes it)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    dtype = tlx.dtype_of(a_ptr)
    a_bufs = tlx.local_alloc((BM, BK), dtype, 2)
    b_bufs = tlx.local_alloc((BK, BN), dtype, 2)
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, K // BK):
        s = k % 2
        # buffer s was read by the MMA of step k - 2, which the wait of step k - 1 retired
        tlx.local_store(a_bufs[s], tl.load(a_ptr + rm[:, None] * K + (k * BK + rk)[None, :]))
        tlx.local_store(b_bufs[s], tl.load(b_ptr + (k * BK + rk)[:, None] * BN + rn[None, :]))
        acc = tlx.async_dot(a_bufs[s], b_bufs[s], acc)
        acc = tlx.async_dot_wait(1, acc)
    acc = tlx.async_dot_wait(0, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@tlxc.jit
def dot_once(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, B_T: tl.constexpr,
             A_FROM_SMEM_LOAD: tl.constexpr, OUT: tl.constexpr):
    """C = A @ B in one ``async_dot`` with no accumulator (``acc=None``: zero-initialized).
    With ``A_FROM_SMEM_LOAD`` A is read back from its buffer with ``local_load`` and fed
    from registers."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    dtype = tlx.dtype_of(a_ptr)
    a_buf = tlx.local_alloc((BM, BK), dtype, 1)
    tlx.local_store(a_buf[0], tl.load(a_ptr + rm[:, None] * BK + rk[None, :]))
    if B_T:
        b_buf = tlx.local_alloc((BN, BK), dtype, 1)
        tlx.local_store(b_buf[0], tl.load(b_ptr + rn[:, None] * BK + rk[None, :]))
        b = tlx.local_trans(b_buf[0])
    else:
        b_buf = tlx.local_alloc((BK, BN), dtype, 1)
        tlx.local_store(b_buf[0], tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
        b = b_buf[0]
    if A_FROM_SMEM_LOAD:
        c = tlx.async_dot(tlx.local_load(a_buf[0]), b, out_dtype=OUT)
    else:
        c = tlx.async_dot(a_buf[0], b, out_dtype=OUT)
    c = tlx.async_dot_wait(0, c)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c)


@tlxc.jit
def scaled_a_in_regs(a_ptr, b_ptr, c_ptr, scale, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = (scale * A) @ B + 1: A is computed in registers (scaled in fp32 and cast back to
    its dtype) and fed to the MMA from there, as attention feeds P; the accumulator
    starts as a constant tile."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    dtype = tlx.dtype_of(a_ptr)
    b_buf = tlx.local_alloc((BK, BN), dtype, 1)
    tlx.local_store(b_buf[0], tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
    a = (tl.load(a_ptr + rm[:, None] * BK + rk[None, :]).to(tl.float32) * scale).to(dtype)
    acc = tlx.async_dot(a, b_buf[0], tl.full((BM, BN), 1.0, tl.float32))
    acc = tlx.async_dot_wait(0, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


# -- epilogues: core ops on the accumulator after async_dot_wait ------------------------------
@tlxc.jit
def _acc_tile(a_ptr, b_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The accumulator of A @ B for the epilogue kernels (one MMA, waited for)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    dtype = tlx.dtype_of(a_ptr)
    a_buf = tlx.local_alloc((BM, BK), dtype, 1)
    b_buf = tlx.local_alloc((BK, BN), dtype, 1)
    tlx.local_store(a_buf[0], tl.load(a_ptr + rm[:, None] * BK + rk[None, :]))
    tlx.local_store(b_buf[0], tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
    acc = tlx.async_dot(a_buf[0], b_buf[0])
    return tlx.async_dot_wait(0, acc)


@tlxc.jit
def epilogue_reduce(a_ptr, b_ptr, rows_ptr, cols_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Row sums and column maxima of A @ B (``tl.sum(axis=1)`` stays within each warp's
    lanes; ``tl.max(axis=0)`` crosses the warps)."""
    acc = _acc_tile(a_ptr, b_ptr, BM, BN, BK)
    tl.store(rows_ptr + tl.arange(0, BM), tl.sum(acc, axis=1))
    tl.store(cols_ptr + tl.arange(0, BN), tl.max(acc, axis=0))


@tlxc.jit
def epilogue_softmax(a_ptr, b_ptr, p_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A row softmax of A @ B in base 2 (``tl.max``, ``tl.exp2``, ``tl.sum``), with the
    negative scores zeroed first by ``tl.where``, stored as fp16 (``.to``)."""
    acc = _acc_tile(a_ptr, b_ptr, BM, BN, BK)
    acc = tl.where(acc > 0, acc, 0.0)
    p = tl.exp2(acc - tl.max(acc, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    tl.store(p_ptr + rm[:, None] * BN + rn[None, :], p.to(tl.float16))


@tlxc.jit
def epilogue_shapes(a_ptr, b_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Swap neighbouring columns of A @ B with shape ops: reshape to ``[BM, BN/2, 2]``,
    split the pairs, join them the other way round, reshape back; then transpose (a
    permute) and store ``out[BN, BM]``."""
    acc = _acc_tile(a_ptr, b_ptr, BM, BN, BK)
    even, odd = tl.split(tl.reshape(acc, (BM, BN // 2, 2)))
    swapped = tl.reshape(tl.join(odd, even), (BM, BN))
    t = tl.permute(swapped, (1, 0))
    rn = tl.arange(0, BN)
    rm = tl.arange(0, BM)
    tl.store(out_ptr + rn[:, None] * BM + rm[None, :], t)


# -- TMA ---------------------------------------------------------------------------------------
@tlxc.jit
def tma_dot_kmajor(a_desc, bt_desc, c_desc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B with both tiles loaded by TMA, B as ``B^T`` (``[N, K]``, K contiguous: what
    fp8 needs) and read through ``local_trans``; C written by a register-form ``desc.store``."""
    dtype = tlx.dtype_of(a_desc)
    a_buf = tlx.local_alloc((BM, BK), dtype, 1)
    bt_buf = tlx.local_alloc((BN, BK), dtype, 1)
    bar = tlx.alloc_barriers(1, arrive_count=1)
    tlx.barrier_expect_bytes(bar[0], (BM * BK + BN * BK) * tlx.size_of(dtype))
    tlx.async_descriptor_load(a_desc, a_buf[0], [0, 0], bar[0])
    tlx.async_descriptor_load(bt_desc, bt_buf[0], [0, 0], bar[0])
    tlx.barrier_wait(bar[0], 0)
    acc = tlx.async_dot(a_buf[0], tlx.local_trans(bt_buf[0]))
    acc = tlx.async_dot_wait(0, acc)
    c_desc.store([0, 0], acc)


@tlxc.jit
def desc_load_dot(a_desc, b_desc, c_desc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B with the register forms of TMA: ``desc.load`` (staged through shared
    memory by the compiler), A fed from registers, B stored to a buffer; ``desc.store`` of
    the result converted to C's dtype."""
    dtype = tlx.dtype_of(a_desc)
    a = a_desc.load([tl.program_id(0) * BM, 0])
    b_buf = tlx.local_alloc((BK, BN), dtype, 1)
    tlx.local_store(b_buf[0], b_desc.load([0, 0]))
    acc = tlx.async_dot(a, b_buf[0])
    acc = tlx.async_dot_wait(0, acc)
    c_desc.store([tl.program_id(0) * BM, 0], acc.to(tlx.dtype_of(c_desc)))


@tlxc.jit
def tma_store_add(x_desc, y_desc, BLOCK: tl.constexpr):
    """y[block] += x[block] with a reducing TMA store (``store_reduce="add"``): every
    program adds its block into the same place of y."""
    bufs = tlx.local_alloc((BLOCK, BLOCK), tlx.dtype_of(x_desc), 1)
    bar = tlx.alloc_barriers(1, arrive_count=1)
    tlx.barrier_expect_bytes(bar[0], BLOCK * BLOCK * tlx.size_of(tlx.dtype_of(x_desc)))
    tlx.async_descriptor_load(x_desc, bufs[0], [tl.program_id(0) * BLOCK, 0], bar[0])
    tlx.barrier_wait(bar[0], 0)
    tlx.async_descriptor_store(y_desc, bufs[0], [0, 0], store_reduce="add")
    tlx.async_descriptor_store_wait(0)


# -- the cases ---------------------------------------------------------------------------------
# dtype short name -> (numpy dtype, signature name, torch dtype name)
DTYPES: dict[str, tuple[Any, str, str]] = {
    "fp16": (np.float16, "fp16", "float16"),
    "bf16": (ml_dtypes.bfloat16, "bf16", "bfloat16"),
    "fp32": (np.float32, "fp32", "float32"),
    "e4m3": (ml_dtypes.float8_e4m3fn, "fp8e4nv", "float8_e4m3fn"),
    "e5m2": (ml_dtypes.float8_e5m2, "fp8e5", "float8_e5m2"),
    "i8": (np.int8, "i8", "int8"),
    "i32": (np.int32, "i32", "int32"),
}
TL = {"fp16": tl.float16, "fp32": tl.float32, "i32": tl.int32}
# (rtol, atol) against a float64 reference of the same inputs, by operand / accumulator type:
# fp32 sums of exact products; tf32 drops 13 mantissa bits of each input (the hardware
# truncates, the interpreter rounds); Hopper's fp8 MMA adds in reduced precision; fp16
# accumulators round every instruction
TOLERANCE = {"fp16": (1e-3, 1e-3), "bf16": (1e-3, 1e-3), "fp32": (2e-2, 1e-1), "e4m3": (1e-2, 5e-2),
             "e5m2": (1e-2, 5e-2), "i8": (0, 0), "acc_fp16": (1e-2, 3e-2)}


@dataclass(frozen=True)
class Case:
    """One variant: ``kind`` picks the kernel and its arguments (``run_case``), ``dtype``
    the operands, ``acc`` the accumulator (``gemm_*``) or output (``dot_once``) type."""

    kind: str
    dtype: str = "fp16"
    BM: int = 64
    BN: int = 64
    BK: int = 32
    K: int = 128
    acc: str = "fp32"
    b_t: bool = False
    a_regs: bool = False
    num_warps: int = 4

    @property
    def kernel(self) -> Any:
        return KERNELS[self.kind]

    @property
    def constants(self) -> dict[str, Any]:
        c: dict[str, Any] = {"BM": self.BM, "BN": self.BN, "BK": self.BK}
        if self.kind == "loop":
            c.update(B_T=self.b_t, A_IN_REGS=self.a_regs, ACC=TL[self.acc])
        elif self.kind == "pipelined":
            c.update(ACC=TL[self.acc])
        elif self.kind == "once":
            c.update(B_T=self.b_t, A_FROM_SMEM_LOAD=self.a_regs, OUT=TL[self.acc])
        elif self.kind == "store_add":
            c = {"BLOCK": self.BM}
        return c

    @property
    def signature(self) -> str:
        """The signature the GPU launch specializes on (for ``kernel.compile``)."""
        t, acc = DTYPES[self.dtype][1], DTYPES[self.acc][1]
        ptr = f"*{t}:16,*{t}:16"
        if self.kind in ("loop", "pipelined"):
            return f"{ptr},*{acc}:16,i32:16"
        if self.kind == "once":
            return f"{ptr},*{acc}:16"
        if self.kind == "scaled":
            return f"{ptr},*fp32:16,fp32"
        if self.kind == "reduce":
            return f"{ptr},*fp32:16,*fp32:16"
        if self.kind == "softmax":
            return f"{ptr},*fp16:16"
        if self.kind == "shapes":
            return f"{ptr},*fp32:16"
        if self.kind == "tma_kmajor":
            return f"tensordesc<{t}[{self.BM},{self.BK}]>,tensordesc<{t}[{self.BN},{self.BK}]>," \
                   f"tensordesc<fp32[{self.BM},{self.BN}]>"
        if self.kind == "desc_load":
            return f"tensordesc<{t}[{self.BM},{self.BK}]>,tensordesc<{t}[{self.BK},{self.BN}]>," \
                   f"tensordesc<{t}[{self.BM},{self.BN}]>"
        if self.kind == "store_add":
            return f"tensordesc<{t}[{self.BM},{self.BM}]>,tensordesc<{t}[{self.BM},{self.BM}]>"
        raise KeyError(self.kind)

    @property
    def tolerance(self) -> tuple[float, float]:
        return TOLERANCE["acc_fp16" if self.acc == "fp16" else self.dtype]


KERNELS = {"loop": gemm_loop, "pipelined": gemm_pipelined, "once": dot_once, "scaled": scaled_a_in_regs,
           "reduce": epilogue_reduce, "softmax": epilogue_softmax, "shapes": epilogue_shapes,
           "tma_kmajor": tma_dot_kmajor, "desc_load": desc_load_dot, "store_add": tma_store_add}

CASES: dict[str, Case] = {
    # -- the operand types (async_dot in a K loop, use_acc=k > 0) --
    "loop_f16": Case("loop"),
    "loop_bf16_bT": Case("loop", "bf16", b_t=True),
    "loop_tf32_bT": Case("loop", "fp32", K=64, b_t=True),
    "loop_e4m3_bT": Case("loop", "e4m3", BK=64, b_t=True),
    "loop_e5m2_bT": Case("loop", "e5m2", BK=64, b_t=True),
    "loop_i8_bT": Case("loop", "i8", BK=64, acc="i32", b_t=True),
    "loop_f16_acc_f16": Case("loop", acc="fp16"),
    # -- A in registers --
    "loop_f16_aregs": Case("loop", a_regs=True),
    "loop_bf16_aregs_bT": Case("loop", "bf16", a_regs=True, b_t=True),
    "loop_tf32_aregs_bT": Case("loop", "fp32", K=64, a_regs=True, b_t=True),
    "loop_e4m3_aregs_bT": Case("loop", "e4m3", BK=64, a_regs=True, b_t=True),
    "loop_i8_aregs_bT": Case("loop", "i8", BK=64, acc="i32", a_regs=True, b_t=True),
    "loop_f16_acc_f16_aregs": Case("loop", acc="fp16", a_regs=True),
    # -- tile shapes and warpgroups --
    "loop_f16_n256": Case("loop", BN=256, K=64),
    "loop_f16_m128_one_warpgroup": Case("loop", BM=128),
    "loop_f16_wg_split_n": Case("loop", BN=128, num_warps=8),
    "loop_f16_wg_split_m": Case("loop", BM=128, num_warps=8),
    "loop_f16_aregs_wg_split_n": Case("loop", BN=128, a_regs=True, num_warps=8),
    "loop_bf16_aregs_bT_wg_split_m": Case("loop", "bf16", BM=128, a_regs=True, b_t=True, num_warps=8),
    "loop_f16_acc_f16_wg_split_n": Case("loop", BN=128, acc="fp16", num_warps=8),
    # -- one MMA in flight across iterations (async_dot_wait(1)) --
    "pipelined_f16": Case("pipelined", BN=128, K=256),
    "pipelined_bf16": Case("pipelined", "bf16", BN=128, K=256),
    "pipelined_f16_acc_f16": Case("pipelined", BN=128, K=256, acc="fp16"),
    "pipelined_f16_wg_split_m": Case("pipelined", BM=128, K=256, num_warps=8),
    # -- acc=None --
    "once_f16": Case("once"),
    "once_f16_out_f16": Case("once", acc="fp16"),
    "once_f16_a_local_load": Case("once", a_regs=True),
    "once_e4m3_a_local_load_bT": Case("once", "e4m3", BK=64, a_regs=True, b_t=True),
    "once_bf16_bT_m128": Case("once", "bf16", BM=128, b_t=True),
    "once_f16_n256_wg_split_n": Case("once", BN=256, num_warps=8),
    "scaled_a_in_regs_bf16": Case("scaled", "bf16"),
    # -- core ops on the accumulator --
    "reduce": Case("reduce"),
    "reduce_wg_split_n": Case("reduce", BN=128, num_warps=8),
    "reduce_wg_split_m": Case("reduce", BM=128, num_warps=8),
    "softmax": Case("softmax"),
    "softmax_wg_split_n": Case("softmax", BN=128, num_warps=8),
    "shapes": Case("shapes"),
    "shapes_wg_split_n": Case("shapes", BN=128, num_warps=8),
    # -- TMA --
    "tma_e4m3_bT": Case("tma_kmajor", "e4m3", BK=64),
    "tma_e5m2_bT": Case("tma_kmajor", "e5m2", BK=64),
    "tma_f16_bT": Case("tma_kmajor", "fp16", BK=64),
    "desc_load_f16": Case("desc_load"),
    "tma_store_add_f32": Case("store_add", "fp32", BM=32),
}
# the GEMM-style loops: ptxas must not serialize their wgmma pipeline
LOOPS = [n for n, c in CASES.items() if c.kind in ("loop", "pipelined")]


# -- running a case --------------------------------------------------------------------------
def _data(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, scale: float = 1.0) -> np.ndarray:
    if dtype == "i8":
        return rng.integers(-128, 128, size=shape).astype(np.int8)
    return (rng.standard_normal(shape) * scale).astype(DTYPES[dtype][0])


def _f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


class _Host:
    """Launches on the interpreter: the arrays are the arguments."""

    torch = None

    def arg(self, x: np.ndarray) -> Any:
        return x

    def back(self, x: Any, like: np.ndarray) -> np.ndarray:
        return x

    def launch(self, kernel: Any, grid: tuple[int, ...], args: list[Any], case: Case) -> None:
        kernel.interpret[grid](*args, **case.constants, num_warps=case.num_warps)


class _Device(_Host):
    """Launches on the GPU: the arrays are copied to torch tensors and back."""

    _SAME_SIZE = {1: ("uint8", np.uint8), 2: ("int16", np.int16), 4: ("int32", np.int32)}

    def __init__(self, torch: Any) -> None:
        self.torch = torch

    def arg(self, x: np.ndarray) -> Any:
        t = self.torch
        name, view = self._SAME_SIZE[x.dtype.itemsize]
        dt = next(d[2] for d in DTYPES.values() if np.dtype(d[0]) == x.dtype)
        return t.from_numpy(np.ascontiguousarray(x).view(view)).cuda().view(getattr(t, dt))

    def back(self, x: Any, like: np.ndarray) -> np.ndarray:
        name, view = self._SAME_SIZE[like.dtype.itemsize]
        return x.cpu().view(getattr(self.torch, name)).numpy().view(like.dtype)

    def launch(self, kernel: Any, grid: tuple[int, ...], args: list[Any], case: Case) -> None:
        kernel[grid](*args, **case.constants, num_warps=case.num_warps)
        self.torch.cuda.synchronize()


def run_case(name: str, torch: Any = None) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Run case ``name`` on the interpreter (``torch=None``) or on the GPU (the torch
    module) and return ``(what, result, reference)`` for every output, the reference in
    float64 (int64 for integers) from the same inputs."""
    case = CASES[name]
    on: _Host = _Host() if torch is None else _Device(torch)
    rng = np.random.default_rng(sum(map(ord, name)))
    dt, acc_np = case.dtype, DTYPES[case.acc][0]
    BM, BN, BK, K = case.BM, case.BN, case.BK, case.K
    scale = 0.5 if case.acc == "fp16" else 1.0

    def out(shape: tuple[int, ...], dtype: Any) -> tuple[np.ndarray, Any]:
        host = np.zeros(shape, dtype)
        return host, on.arg(host)

    def desc(x: Any, block: list[int]) -> Any:
        return tlxc.TensorDescriptor.from_tensor(x, block)

    if case.kind in ("loop", "pipelined", "once", "scaled", "reduce", "softmax", "shapes"):
        k = K if case.kind in ("loop", "pipelined") else BK
        a = _data(rng, (BM, k), dt, scale)
        b = _data(rng, (k, BN), dt, scale)
        b_arg = np.ascontiguousarray(b.T) if case.b_t else b
        ref = (a.astype(np.int64) @ b.astype(np.int64)) if dt == "i8" else _f64(a) @ _f64(b)
        if case.kind in ("loop", "pipelined", "once", "scaled"):
            c, c_arg = out((BM, BN), np.float32 if case.kind == "scaled" else acc_np)
            args = [on.arg(a), on.arg(b_arg), c_arg]
            if case.kind == "scaled":
                args.append(0.5)
                a_scaled = (a.astype(np.float32) * np.float32(0.5)).astype(a.dtype)
                ref = _f64(a_scaled) @ _f64(b) + 1.0
            elif case.kind != "once":
                args.append(K)
            on.launch(case.kernel, (1,), args, case)
            return [("C", on.back(c_arg, c), ref)]
        if case.kind == "reduce":
            rows, rows_arg = out((BM,), np.float32)
            cols, cols_arg = out((BN,), np.float32)
            on.launch(case.kernel, (1,), [on.arg(a), on.arg(b), rows_arg, cols_arg], case)
            return [("row sums", on.back(rows_arg, rows), ref.sum(1)),
                    ("column maxima", on.back(cols_arg, cols), ref.max(0))]
        if case.kind == "softmax":
            p, p_arg = out((BM, BN), np.float16)
            on.launch(case.kernel, (1,), [on.arg(a), on.arg(b), p_arg], case)
            s = np.where(ref > 0, ref, 0.0)
            e = np.exp2(s - s.max(1, keepdims=True))
            return [("softmax", on.back(p_arg, p), e / e.sum(1, keepdims=True))]
        o, o_arg = out((BN, BM), np.float32)
        on.launch(case.kernel, (1,), [on.arg(a), on.arg(b), o_arg], case)
        return [("swapped, transposed", on.back(o_arg, o), ref.reshape(BM, BN // 2, 2)[:, :, ::-1].reshape(BM, BN).T)]
    if case.kind == "tma_kmajor":
        a, bt = _data(rng, (BM, BK), dt), _data(rng, (BN, BK), dt)
        c, c_arg = out((BM, BN), np.float32)
        args = [desc(on.arg(a), [BM, BK]), desc(on.arg(bt), [BN, BK]), desc(c_arg, [BM, BN])]
        on.launch(case.kernel, (1,), args, case)
        return [("C", on.back(c_arg, c), _f64(a) @ _f64(bt).T)]
    if case.kind == "desc_load":
        a, b = _data(rng, (2 * BM, BK), dt), _data(rng, (BK, BN), dt)
        c, c_arg = out((2 * BM, BN), DTYPES[dt][0])
        args = [desc(on.arg(a), [BM, BK]), desc(on.arg(b), [BK, BN]), desc(c_arg, [BM, BN])]
        on.launch(case.kernel, (2,), args, case)
        return [("C", on.back(c_arg, c), _f64(a) @ _f64(b))]
    if case.kind == "store_add":
        x = _data(rng, (4 * BM, BM), dt)
        y = np.ones((BM, BM), DTYPES[dt][0])
        y_arg = on.arg(y)
        on.launch(case.kernel, (4,), [desc(on.arg(x), [BM, BM]), desc(y_arg, [BM, BM])], case)
        return [("y", on.back(y_arg, y), 1.0 + _f64(x).reshape(4, BM, BM).sum(0))]
    raise KeyError(case.kind)


def check_case(name: str, torch: Any = None) -> None:
    """``run_case`` and compare every output with its reference at the case's tolerance."""
    rtol, atol = CASES[name].tolerance
    for what, got, want in run_case(name, torch):
        if rtol == atol == 0:
            np.testing.assert_array_equal(got, want, err_msg=f"{name}: {what}")
        else:
            np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol, err_msg=f"{name}: {what}")
