"""Register layouts chosen by the user, explicit MFMA scheduling and scaled dot.

Layouts the user names (``tlx.amd_mfma_layout``, ``tlx.dot_operand_layout``,
``tlx.amd_wmma_layout``) travel as a plain dict attribute ``layout`` on the op that pins
them (``zeros``, ``require_layout``), printed as ``{kind = "amd_mfma", version = 4, ...}``:
the IR does not turn them into LinearLayouts because that needs the target's wave size;
the AMD code generator does (``mfma_layout(shape, **fields)``). The kinds and fields:

* ``amd_mfma``: version, instr_shape [M, N, K], transposed, warps_per_cta,
  element_bitwidth, tiles_per_warp (a list or none);
* ``amd_dot_operand``: operand_index (0: A, 1: B), parent (an ``amd_mfma`` or
  ``amd_wmma`` dict), k_width;
* ``amd_wmma``: version, transposed, warp_bases, reg_bases, instr_shape.

The scheduling and register-class ops (``amd_*``) change no values: they are
constraints for the AMD code generator, which keeps them where the user put them (none
is PURE, so CSE never merges two and DCE never moves one; ``amd_scheduled_mfma`` is
arithmetic, but merging two equal calls would fork an accumulator chain that must reach
its ``amd_mfma_commit`` unforked). Other targets refuse them at the user's line.
"""

from __future__ import annotations

from typing import Any

from ..accessors import Attr, Operand, OptionalOperand, VariadicOperands
from ..core import Operation, register
from ..types import DType, Kind, TileType
from .base import fail

LAYOUT_KINDS = {
    "amd_mfma": ("version", "instr_shape", "transposed", "warps_per_cta", "element_bitwidth", "tiles_per_warp"),
    "amd_dot_operand": ("operand_index", "parent", "k_width"),
    "amd_wmma": ("version", "transposed", "warp_bases", "reg_bases", "instr_shape"),
}
REGISTER_CLASSES = ("agpr", "vgpr")
REGISTERS_PER_GROUP = (1, 2, 4, 8, 16, 32)
ACCUMULATOR_ROLES = ("transient", "persistent")
ACCUMULATOR_CLASSES = ("auto", "agpr", "vgpr")
RESIDENT_OPERANDS = ("none", "lhs", "rhs")
SCALED_FORMATS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")
SCHED_MASK_BITS = 12  # llvm.amdgcn.sched.barrier: one bit per instruction class, 0..11


def check_layout(op: Operation, layout: Any, what: str = "layout") -> None:
    """``layout`` is one of the dicts described in the module docstring."""
    if not isinstance(layout, dict) or layout.get("kind") not in LAYOUT_KINDS:
        fail(op, f"{what} must be a dict with kind one of {sorted(LAYOUT_KINDS)}, got {layout!r}")
    fields = ("kind",) + LAYOUT_KINDS[layout["kind"]]
    if tuple(layout) != fields:
        fail(op, f"a {layout['kind']} {what} has the fields {list(fields)}, got {list(layout)}")
    if layout["kind"] == "amd_dot_operand":
        check_layout(op, layout["parent"], f"{what}'s parent")
        if layout["parent"]["kind"] == "amd_dot_operand":
            fail(op, f"{what}'s parent must be an MFMA or WMMA layout")


def _tile(op: Operation, t: Any, what: str) -> TileType:
    if not isinstance(t, TileType):
        fail(op, f"{what} must be a tile, got {t}")
    return t


def _like(op: Operation, result: Any, source: Any, what: str = "the operand") -> None:
    """Same shape and element type (the layout may differ: layouts are assigned later)."""
    if not isinstance(result, TileType) or (result.shape, result.scalar) != (source.shape, source.scalar):
        fail(op, f"result must be a tile like {what} ({source}), got {result}")


def _is(t: Any, *names: str) -> bool:
    return isinstance(t.scalar, DType) and t.scalar.ir_name in names


@register
class ZerosOp(Operation):
    """A tile of zeros created in the register layout ``layout`` (``tlx.zeros(shape,
    dtype, layout=...)``; without a layout the frontend makes a plain constant)."""

    PURE = True
    NAME = "zeros"
    ATTRS = {"layout": Operation.REQUIRED}

    layout = Attr[dict[str, Any]]()

    def verify(self) -> None:
        super().verify()
        _tile(self, self.result.type, "the result")
        check_layout(self, self.layout)


@register
class RequireLayoutOp(Operation):
    """``x`` in the register layout ``layout``: with ``pin`` a hard anchor that layout
    assignment keeps (converting into it where needed), without it a preference.
    ``late_address_compute``: a conversion through shared memory here computes its
    addresses here rather than earlier."""

    PURE = True
    NAME = "require_layout"
    OPERANDS = ("x",)
    ATTRS = {"layout": Operation.REQUIRED, "pin": True, "late_address_compute": False}

    x = Operand()
    layout = Attr[dict[str, Any]]()
    pin = Attr[bool]()
    late_address_compute = Attr[bool]()

    def verify(self) -> None:
        super().verify()
        _like(self, self.result.type, _tile(self, self.x.type, "x"))
        check_layout(self, self.layout)
        for key in ("pin", "late_address_compute"):
            if not isinstance(self.attrs[key], bool):
                fail(self, f"{key} must be a bool, got {self.attrs[key]!r}")


@register
class ReleaseLayoutOp(Operation):
    """``x`` without the layout requirement of an earlier ``require_layout``: layout
    assignment may choose any layout from here on."""

    PURE = True
    NAME = "release_layout"
    OPERANDS = ("x",)

    x = Operand()

    def verify(self) -> None:
        super().verify()
        _like(self, self.result.type, _tile(self, self.x.type, "x"))


@register
class ExtractSliceOp(Operation):
    """The static sub-tile of ``x`` at ``offsets`` with the result's shape, in the same
    distributed layout: the code generator selects the registers that hold it and
    refuses a slice that would move data between threads (misaligned to the layout)."""

    PURE = True
    NAME = "extract_slice"
    OPERANDS = ("x",)
    ATTRS = {"offsets": Operation.REQUIRED}

    x = Operand()
    offsets = Attr[tuple[int, ...]]()

    def verify(self) -> None:
        super().verify()
        src = _tile(self, self.x.type, "x")
        dst = _tile(self, self.result.type, "the result")
        offs = self.offsets
        if dst.scalar != src.scalar:
            fail(self, f"result element type {dst.scalar} differs from x's {src.scalar}")
        if not isinstance(offs, tuple) or len(offs) != len(src.shape) or len(dst.shape) != len(src.shape):
            fail(self, f"offsets {offs!r} and the result shape must have x's rank {len(src.shape)}")
        for d, (o, n, full) in enumerate(zip(offs, dst.shape, src.shape)):
            if not isinstance(o, int) or o < 0 or o + n > full:
                fail(self, f"slice [{o}, {o} + {n}) of dimension {d} is outside x's {full}")


@register
class RematerializedRangeOp(Operation):
    """``arange(start, end)`` (i32) that passes keep apart from other ranges with another
    ``identity`` (CSE merges only equal identities), so the code generator recomputes the
    coordinates near their use instead of keeping them live. ``placement`` (an i32
    scalar) is a scheduling dependency that keeps the range near where it is used."""

    PURE = True
    NAME = "rematerialized_range"
    OPERANDS = ("?placement",)
    ATTRS = {"start": Operation.REQUIRED, "end": Operation.REQUIRED, "identity": Operation.REQUIRED}

    placement = OptionalOperand()
    start = Attr[int]()
    end = Attr[int]()
    identity = Attr[int]()

    def verify(self) -> None:
        super().verify()
        start, end, ident = self.start, self.end, self.identity
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end, ident)) or end <= start:
            fail(self, f"start < end and identity must be integers, got {start}, {end}, {ident}")
        t = self.result.type
        if not isinstance(t, TileType) or t.shape != (end - start,) or not _is(t, "i32"):
            fail(self, f"result must be tile<{end - start}xi32>, got {t}")
        p = self.placement
        if p is not None and (isinstance(p.type, TileType) or not _is(p.type, "i32")):
            fail(self, f"placement must be an i32 scalar, got {p.type}")


@register
class AmdSchedBarrierOp(Operation):
    """A scheduling fence: machine instructions of the classes whose bits are set in
    ``mask`` may cross it, the others may not (0: none may). Not a memory fence and not
    an execution barrier."""

    NAME = "amd_sched_barrier"
    ATTRS = {"mask": 0}
    NUM_RESULTS = 0

    mask = Attr[int]()

    def verify(self) -> None:
        super().verify()
        m = self.mask
        if not isinstance(m, int) or isinstance(m, bool) or not 0 <= m < 1 << SCHED_MASK_BITS:
            fail(self, f"mask must use bits 0..{SCHED_MASK_BITS - 1} only, got {m!r}")


def _register_tile(op: Operation, t: Any) -> None:
    t = _tile(op, t, "the value")
    if not isinstance(t.scalar, DType) or t.scalar.kind == Kind.BOOL or t.scalar.bits not in (16, 32):
        fail(op, f"the value must hold 16- or 32-bit integers or floats, got {t.scalar}")


@register
class AmdRegisterResidentOp(Operation):
    """``x`` unchanged; at this point all its registers are in ``register_class``
    (agpr / vgpr), in groups of ``registers_per_group`` consecutive 32-bit registers (a
    group holds that many 32-bit or twice as many 16-bit elements; the per-thread
    element count, known with the layout, must split into whole groups)."""

    NAME = "amd_register_resident"
    OPERANDS = ("x",)
    ATTRS = {"register_class": "agpr", "registers_per_group": 1}

    x = Operand()
    register_class = Attr[str]()
    registers_per_group = Attr[int]()

    def verify(self) -> None:
        super().verify()
        _register_tile(self, self.x.type)
        _like(self, self.result.type, self.x.type, "x")
        if self.register_class not in REGISTER_CLASSES:
            fail(self, f"register_class must be one of {REGISTER_CLASSES}, got {self.register_class!r}")
        if self.registers_per_group not in REGISTERS_PER_GROUP:
            fail(self, f"registers_per_group must be one of {REGISTERS_PER_GROUP}, got "
                       f"{self.registers_per_group!r}")


@register
class AmdRegisterClassAnchorOp(Operation):
    """``x`` unchanged, each packed 32-bit register passed through its own tied
    ``register_class`` constraint here (a local allocation anchor; unlike
    ``amd_register_resident`` the registers need not all be live at once)."""

    NAME = "amd_register_class_anchor"
    OPERANDS = ("x",)
    ATTRS = {"register_class": "vgpr"}

    x = Operand()
    register_class = Attr[str]()

    def verify(self) -> None:
        super().verify()
        _register_tile(self, self.x.type)
        _like(self, self.result.type, self.x.type, "x")
        if self.register_class not in REGISTER_CLASSES:
            fail(self, f"register_class must be one of {REGISTER_CLASSES}, got {self.register_class!r}")


@register
class AmdScheduledMfmaOp(Operation):
    """``acc + a @ b`` (``initialize``: ``a @ b``) for bf16/f16 ``a`` [.., M, K] and ``b``
    [.., K, N] and an f32 ``acc`` [.., M, N] (rank 2, or 3 with a leading batch), issued
    as one chain of native MFMAs per output fragment, K-major, N-major, M-minor.

    ``accumulator_role``: ``transient`` (lowered to MFMA intrinsics; ``auto`` class:
    VGPRs) or ``persistent`` (register-constrained inline assembly; ``auto``: AGPRs).
    ``accumulator_register_class`` overrides ``auto``; ``resident_operand`` (lhs / rhs)
    pins that operand's class in the persistent lowering."""

    NAME = "amd_scheduled_mfma"
    OPERANDS = ("a", "b", "acc")
    ATTRS = {"accumulator_role": Operation.REQUIRED, "resident_operand": "none",
             "accumulator_register_class": "auto", "initialize": False}

    a = Operand()
    b = Operand()
    acc = Operand()
    accumulator_role = Attr[str]()
    resident_operand = Attr[str]()
    accumulator_register_class = Attr[str]()
    initialize = Attr[bool]()

    def verify(self) -> None:
        super().verify()
        a, b, c = _tile(self, self.a.type, "a"), _tile(self, self.b.type, "b"), _tile(self, self.acc.type, "acc")
        rank = len(a.shape)
        if rank not in (2, 3) or len(b.shape) != rank or len(c.shape) != rank:
            fail(self, f"a, b and acc must all have rank 2 (or 3 with a batch), got {a}, {b}, {c}")
        if a.shape[:-2] != b.shape[:-2] or a.shape[:-2] != c.shape[:-2]:
            fail(self, f"batch dimensions differ: {a}, {b}, {c}")
        if a.shape[-1] != b.shape[-2] or c.shape[-2:] != (a.shape[-2], b.shape[-1]):
            fail(self, f"shapes do not multiply: {a} x {b} into {c}")
        if not _is(a, "bf16", "f16") or a.scalar != b.scalar:
            fail(self, f"a and b must both be bf16 or both f16, got {a.scalar} and {b.scalar}")
        if not _is(c, "f32"):
            fail(self, f"acc must be f32, got {c.scalar}")
        _like(self, self.result.type, c, "acc")
        attrs = self.attrs
        for key, allowed in (("accumulator_role", ACCUMULATOR_ROLES), ("resident_operand", RESIDENT_OPERANDS),
                             ("accumulator_register_class", ACCUMULATOR_CLASSES)):
            if attrs[key] not in allowed:
                fail(self, f"{key} must be one of {allowed}, got {attrs[key]!r}")
        if not isinstance(attrs["initialize"], bool):
            fail(self, f"initialize must be a bool, got {attrs['initialize']!r}")


@register
class AmdMfmaCommitOp(Operation):
    """The operands, unchanged, past the point where MFMA results are ready to read.
    All operands but the last are f32 MFMA results; with ``preserve`` the last is a
    bf16/f16 dot operand threaded through the same boundary (kept live and allocated
    with it, not a numerical operand)."""

    NAME = "amd_mfma_commit"
    OPERANDS = ("*values",)
    ATTRS = {"preserve": False}
    NUM_RESULTS = None

    values = VariadicOperands()
    preserve = Attr[bool]()

    def verify(self) -> None:
        super().verify()
        values = [v.type for v in self.values]
        preserve = self.preserve
        if not isinstance(preserve, bool):
            fail(self, f"preserve must be a bool, got {preserve!r}")
        results = values[:-1] if preserve else values
        if not results:
            fail(self, "needs at least one MFMA result")
        for t in results:
            if not isinstance(t, TileType) or not _is(t, "f32"):
                fail(self, f"the committed values must be f32 tiles, got {t}")
        if preserve and (not isinstance(values[-1], TileType) or not _is(values[-1], "bf16", "f16")):
            fail(self, f"the preserved value must be a bf16 or f16 tile, got {values[-1]}")
        if len(self.results) != len(values):
            fail(self, f"has {len(values)} operands but {len(self.results)} results")
        for r, t in zip(self.results, values):
            _like(self, r.type, t)


@register
class DotScaledOp(Operation):
    """Triton's ``dot_scaled``: ``scale(a) @ scale(b) + acc`` in f32, where ``a`` holds
    ``a_format`` values (e2m1: two per u8, the first in the low nibble, packed along K, or
    along M without ``lhs_k_pack``; e4m3/e5m2: fp8 or their u8 bits; bf16/fp16: the
    floats or their u16 bits) and each ``scale_factor`` (16 or 32) consecutive K values
    of a row share one scale from ``a_scale`` [.., M, K / f]: an e8m0 exponent (u8:
    2**(s - 127)) or an e4m3 value (f8e4m3, nvfp4's scales);
    ``b`` likewise, with ``b_scale`` [.., N, K / f] (not transposed). An absent scale is 1.

    ``tiles_per_warp`` [m, n]: how many WMMA instruction tiles each wave holds (the
    scaled-WMMA lowering's repeat; other lowerings ignore it)."""

    PURE = True
    NAME = "dot_scaled"
    OPERANDS = ("a", "b", "acc", "?a_scale", "?b_scale")
    ATTRS = {"a_format": Operation.REQUIRED, "b_format": Operation.REQUIRED, "fast_math": False,
             "lhs_k_pack": True, "rhs_k_pack": True, "tiles_per_warp": None}

    a = Operand()
    b = Operand()
    acc = Operand()
    a_scale = OptionalOperand()
    b_scale = OptionalOperand()
    a_format = Attr[str]()
    b_format = Attr[str]()
    fast_math = Attr[bool]()
    lhs_k_pack = Attr[bool]()
    rhs_k_pack = Attr[bool]()
    tiles_per_warp = Attr[tuple[int, ...] | None]()

    def verify(self) -> None:
        super().verify()
        a, b, c = _tile(self, self.a.type, "a"), _tile(self, self.b.type, "b"), _tile(self, self.acc.type, "acc")
        fa, fb = self.a_format, self.b_format
        for f in (fa, fb):
            if f not in SCALED_FORMATS:
                fail(self, f"format must be one of {SCALED_FORMATS}, got {f!r}")
        rank = len(a.shape)
        if rank not in (2, 3) or len(b.shape) != rank or len(c.shape) != rank:
            fail(self, f"a, b and acc must all have rank 2 (or 3 with a batch), got {a}, {b}, {c}")
        for t, f, what in ((a, fa, "a"), (b, fb, "b")):
            want = scaled_storage(f)
            if t.scalar.ir_name not in want:
                fail(self, f"{what} holds {f} values as {' or '.join(want)}, got {t.scalar}")
        m, k, n = scaled_dims(a.shape, b.shape, fa, fb, self.lhs_k_pack, self.rhs_k_pack)
        if k is None:
            fail(self, f"a {a} and b {b} do not hold the same number of K values")
        if c.shape != a.shape[:-2] + (m, n) or not _is(c, "f32"):
            fail(self, f"acc must be an f32 tile of shape {list(a.shape[:-2] + (m, n))}, got {c}")
        _like(self, self.result.type, c, "acc")
        factors = set()
        for name, s, rows in (("a_scale", self.a_scale, m), ("b_scale", self.b_scale, n)):
            if s is None:
                continue
            st = _tile(self, s.type, name)
            if not _is(st, "u8", "f8e4m3") or len(st.shape) != rank or st.shape[-2] != rows or not st.shape[-1] \
                    or k % st.shape[-1]:
                fail(self, f"{name} must be a u8 or f8e4m3 tile [.., {rows}, K / scale_factor] with K = {k}, "
                           f"got {st}")
            factors.add(k // st.shape[-1])
        if not factors <= {16, 32} or len(factors) > 1:
            fail(self, f"the scale factor (K values per scale) must be 16 or 32 and the same for a and b, got "
                       f"{sorted(factors)}")
        tpw = self.tiles_per_warp
        if tpw is not None and (not isinstance(tpw, tuple) or len(tpw) != rank
                                or any(not isinstance(x, int) or x < 1 for x in tpw)):
            fail(self, f"tiles_per_warp must be {rank} positive integers, got {tpw!r}")


def scaled_storage(fmt: str) -> tuple[str, ...]:
    """The element types that may hold ``fmt`` values in a ``dot_scaled`` operand."""
    return {"e2m1": ("u8",), "e4m3": ("f8e4m3", "u8"), "e5m2": ("f8e5m2", "u8"),
            "bf16": ("bf16", "u16"), "fp16": ("f16", "u16")}[fmt]


def scaled_dims(sa: tuple[int, ...], sb: tuple[int, ...], fa: str, fb: str, a_kpack: bool,
                b_kpack: bool) -> tuple[int, int | None, int]:
    """(M, K, N) of a ``dot_scaled`` with operand shapes ``sa``, ``sb``: e2m1 packs two
    values per byte along K (``*_k_pack``) or along M / N. K is None when the operands
    disagree."""
    m, ka = sa[-2], sa[-1]
    kb, n = sb[-2], sb[-1]
    if fa == "e2m1":
        if a_kpack:
            ka *= 2
        else:
            m *= 2
    if fb == "e2m1":
        if b_kpack:
            kb *= 2
        else:
            n *= 2
    return m, (ka if ka == kb else None), n


__all__ = [
    "ZerosOp", "RequireLayoutOp", "ReleaseLayoutOp", "ExtractSliceOp", "RematerializedRangeOp",
    "AmdSchedBarrierOp", "AmdRegisterResidentOp", "AmdRegisterClassAnchorOp", "AmdScheduledMfmaOp",
    "AmdMfmaCommitOp", "DotScaledOp", "AMD_OPS",
]

#: The ops only the AMD code generator lowers (others refuse them at the user's line).
AMD_OPS: tuple[type[Operation], ...] = (AmdSchedBarrierOp, AmdRegisterResidentOp, AmdRegisterClassAnchorOp,
                                        AmdScheduledMfmaOp, AmdMfmaCommitOp)
