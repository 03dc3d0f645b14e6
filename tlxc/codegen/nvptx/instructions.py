"""Named builders for the special PTX instructions: mbarriers, bulk tensor copies (TMA),
``cp.async``, wgmma, fences, named and cluster barriers, ``setmaxnreg``, ``elect.sync``,
``ldmatrix`` / ``stmatrix`` and the tensormap instructions.

Each builder returns one instruction's text, without the guard predicate and the ``;``
(``PtxFunction.emit`` adds both), checks what the PTX ISA constrains about its arguments
(a ``PtxOperandError``, which the emitter reports as an internal compiler error at the
op being lowered: user-facing limits are checked earlier, at the user's line), and
links its PTX ISA section. Plain arithmetic, moves, loads and stores
stay f-strings where they are used: their spelling carries no rule worth a name.

Operands are registers (``Reg``) or text the caller built (``"%r4+16"``: an address with
an immediate offset); memory operands are given without brackets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .mma_table import PTX_ISA, WgmmaInstr


class _Text(Protocol):
    def __str__(self) -> str: ...


Operand = _Text | str | int

_SYNC = PTX_ISA + "#parallel-synchronization-and-communication-instructions-"
_MOVE = PTX_ISA + "#data-movement-and-conversion-instructions-"
_WGMMA = PTX_ISA + "#asynchronous-warpgroup-level-matrix-instructions-"
_WARP_MMA = PTX_ISA + "#warp-level-matrix-instructions-"

class PtxOperandError(ValueError):
    """An operand a PTX instruction cannot take (a bug in the lowering that built it)."""


_U32 = 1 << 32
_MBARRIER_COUNT_MAX = (1 << 20) - 1  # arrival and tx counts: "in the range [1, 2^20 - 1]"


def _vector(regs: Sequence[Operand]) -> str:
    return "{" + ", ".join(map(str, regs)) + "}"


def _count(value: int, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise PtxOperandError(f"{what} must be an integer in [{lo}, {hi}], got {value!r}")
    return value


def _pending(n: int, what: str) -> int:
    """A ``wait_group`` count: the PTX ISA asks for a non-negative integer constant."""
    return _count(n, f"{what} N", 0, _U32 - 1)


def _choice(value: str, what: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise PtxOperandError(f"{what} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def offset_address(base: Operand, offset: int) -> str:
    """``base+offset``: a register plus an immediate byte offset (kept when 0, so the
    caller decides whether ``+0`` is spelled)."""
    return f"{base}+{offset}"


# -- mbarrier ------------------------------------------------------------------------------------
_MBAR_SPACES = ("shared::cta", "shared::cluster")


def mbarrier_init(addr: Operand, count: int) -> str:
    """``mbarrier.init.shared::cta.b64 [addr], count`` (``_SYNC + "mbarrier-init"``)."""
    _count(count, "mbarrier.init count", 1, _MBARRIER_COUNT_MAX)
    return f"mbarrier.init.shared::cta.b64 [{addr}], {count}"


def mbarrier_arrive(addr: Operand, count: int = 1, *, space: str = "shared::cta", state: Operand = "_",
                    cluster_release: bool = False) -> str:
    """``mbarrier.arrive{.release.cluster}.{space}.b64 state, [addr]{, count}`` (``_SYNC +
    "mbarrier-arrive"``). The count is spelled only when it is not 1; a remote
    (``shared::cluster``) arrive returns no state (``_``). Without ``cluster_release`` the
    arrive has PTX's default semantics, a release at CTA scope (what a stage's consumer
    needs to hand it back, as CUTLASS's and TLX's remote arrives); with it, at cluster
    scope, so that a peer that waits sees what this thread stored into its shared memory
    before -- ptxas makes that a ``MEMBAR.ALL.GPU``, microseconds in a loop."""
    _choice(space, "mbarrier.arrive state space", _MBAR_SPACES)
    _count(count, "mbarrier.arrive count", 1, _MBARRIER_COUNT_MAX)
    if space == "shared::cluster" and str(state) != "_":
        raise PtxOperandError("a shared::cluster mbarrier.arrive has no state result: pass '_'")
    sem = ".release.cluster" if cluster_release else ""
    return f"mbarrier.arrive{sem}.{space}.b64 {state}, [{addr}]" + (f", {count}" if count != 1 else "")


def mbarrier_arrive_expect_tx(addr: Operand, tx_bytes: int, *, space: str = "shared::cta",
                              state: Operand = "_") -> str:
    """``mbarrier.arrive.expect_tx.{space}.b64 state, [addr], tx_bytes``: arrive once and
    expect ``tx_bytes`` more bytes of asynchronous copies (``_SYNC + "mbarrier-arrive"``,
    ``_SYNC + "mbarrier-expect-tx"``)."""
    _choice(space, "mbarrier.arrive state space", _MBAR_SPACES)
    _count(tx_bytes, "mbarrier expect_tx byte count", 0, _MBARRIER_COUNT_MAX)
    return f"mbarrier.arrive.expect_tx.{space}.b64 {state}, [{addr}], {tx_bytes}"


def _parity(parity: Operand) -> Operand:
    if isinstance(parity, int) and not isinstance(parity, bool) and parity not in (0, 1):
        raise PtxOperandError(f"an mbarrier phase parity is 0 or 1, got {parity}")
    return parity


def mbarrier_try_wait_parity(ready: Operand, addr: Operand, parity: Operand, suspend_ns: int | None = None) -> str:
    """``mbarrier.try_wait.parity.shared::cta.b64 ready, [addr], parity{, suspendTimeHint}``:
    suspends for a while -- up to about ``suspend_ns`` nanoseconds when given, the
    time limit in ns of the optional fourth operand -- then sets ``ready`` when the phase
    of that parity completed (``_SYNC + "mbarrier-test-wait-mbarrier-try-wait"``)."""
    hint = "" if suspend_ns is None else f", {_count(suspend_ns, 'mbarrier.try_wait suspendTimeHint', 0, _U32 - 1)}"
    return f"mbarrier.try_wait.parity.shared::cta.b64 {ready}, [{addr}], {_parity(parity)}{hint}"


def mbarrier_test_wait_parity(ready: Operand, addr: Operand, parity: Operand) -> str:
    """``mbarrier.test_wait.parity.shared::cta.b64 ready, [addr], parity``: the
    non-blocking test (``_SYNC + "mbarrier-test-wait-mbarrier-try-wait"``)."""
    return f"mbarrier.test_wait.parity.shared::cta.b64 {ready}, [{addr}], {_parity(parity)}"


def mbarrier_inval(addr: Operand) -> str:
    """``mbarrier.inval.shared::cta.b64 [addr]``: before the memory is reused for anything
    else (``_SYNC + "mbarrier-inval"``)."""
    return f"mbarrier.inval.shared::cta.b64 [{addr}]"


# -- bulk tensor copies (TMA) -----------------------------------------------------------------------
TMA_REDUCTIONS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


def _tensor_coords(rank: int, coords: Sequence[Operand]) -> str:
    _count(rank, "tensor rank", 1, 5)
    if len(coords) != rank:
        raise PtxOperandError(f"a {rank}d bulk tensor copy takes {rank} coordinates, got {len(coords)}")
    return _vector(coords)


def cp_async_bulk_tensor_load(rank: int, dst: Operand, tensormap: Operand, coords: Sequence[Operand],
                              mbarrier: Operand, *, multicast_mask: Operand | None = None) -> str:
    """Global -> shared tile copy completing on ``mbarrier`` (complete_tx), coordinates
    innermost first; with ``multicast_mask`` the tile lands in every CTA of the mask
    (``_MOVE + "cp-async-bulk-tensor"``)."""
    text = (f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes"
            + (".multicast::cluster" if multicast_mask is not None else ""))
    text += f" [{dst}], [{tensormap}, {_tensor_coords(rank, coords)}], [{mbarrier}]"
    return text + (f", {multicast_mask}" if multicast_mask is not None else "")


def cp_async_bulk_tensor_store(rank: int, tensormap: Operand, coords: Sequence[Operand], src: Operand, *,
                               reduce: str | None = None) -> str:
    """Shared -> global tile copy in a bulk async-group, or with ``reduce`` the
    ``cp.reduce.async.bulk.tensor`` that combines it into global memory
    (``_MOVE + "cp-async-bulk-tensor"``, ``_MOVE + "cp-reduce-async-bulk-tensor"``)."""
    where = f"[{tensormap}, {_tensor_coords(rank, coords)}], [{src}]"
    if reduce is None:
        return f"cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group {where}"
    _choice(reduce, "bulk tensor reduction", TMA_REDUCTIONS)
    return f"cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta.{reduce}.tile.bulk_group {where}"


def cp_async_bulk_commit_group() -> str:
    """Close this thread's bulk async-group (``_MOVE + "cp-async-bulk-commit-group"``)."""
    return "cp.async.bulk.commit_group"


def cp_async_bulk_wait_group(n: int, *, read: bool = False) -> str:
    """Wait until at most ``n`` bulk async-groups are pending; ``read``: only until their
    sources have been read (``_MOVE + "cp-async-bulk-wait-group"``)."""
    return f"cp.async.bulk.wait_group{'.read' if read else ''} {_pending(n, 'cp.async.bulk.wait_group')}"


# -- cp.async -------------------------------------------------------------------------------------
def cp_async(dst: Operand, src: Operand, size: int, *, src_size: Operand | None = None,
             cache: str | None = None) -> str:
    """``cp.async.{ca,cg}.shared.global [dst], [src], size{, src_size}`` (``_MOVE +
    "cp-async"``): 4, 8 or 16 bytes; ``.cg`` (L2 only) exists for 16 bytes only, and is
    the default there. Bytes past ``src_size`` are filled with zeros."""
    _choice(str(size), "cp.async size", ("4", "8", "16"))
    kind = cache if cache is not None else ("cg" if size == 16 else "ca")
    _choice(kind, "cp.async cache operator", ("ca", "cg"))
    if kind == "cg" and size != 16:
        raise PtxOperandError(f"cp.async.cg copies 16 bytes, not {size}")
    return f"cp.async.{kind}.shared.global [{dst}], [{src}], {size}" + (f", {src_size}" if src_size is not None
                                                                         else "")


def cp_async_commit_group() -> str:
    """``_MOVE + "cp-async-commit-group"``."""
    return "cp.async.commit_group"


def cp_async_wait_group(n: int) -> str:
    """Wait until at most ``n`` of this thread's cp.async groups are pending
    (``_MOVE + "cp-async-wait-group"``)."""
    return f"cp.async.wait_group {_pending(n, 'cp.async.wait_group')}"


def cp_async_wait_all() -> str:
    """``_MOVE + "cp-async-wait-group"``."""
    return "cp.async.wait_all"


# -- wgmma ------------------------------------------------------------------------------------------
def wgmma_fence() -> str:
    """Order register accesses before the next wgmma (``_WGMMA + "wgmma-fence"``)."""
    return "wgmma.fence.sync.aligned"


def wgmma_commit_group() -> str:
    """``_WGMMA + "wgmma-commit-group"``."""
    return "wgmma.commit_group.sync.aligned"


def wgmma_wait_group(n: int) -> str:
    """Wait until at most ``n`` wgmma groups are pending (``_WGMMA + "wgmma-wait-group"``)."""
    return f"wgmma.wait_group.sync.aligned {_pending(n, 'wgmma.wait_group')}"


def wgmma_mma_async(instr: WgmmaInstr, d: Sequence[Operand], a: Operand | Sequence[Operand], b_desc: Operand,
                    scale_d: Operand, *, scale_a: int = 1, scale_b: int = 1) -> str:
    """``wgmma.mma_async.sync.aligned.m64nNkK.{types} {d...}, a, b_desc, scale_d{, imms}``
    (``_WGMMA + "wgmma-mma-async"``): ``a`` is a descriptor, or the four 32-bit registers
    of A. Float forms take imm-scale-a/b (1 or -1); f16/bf16 forms also imm-trans-a (A in
    shared memory only) and imm-trans-b, from ``instr``."""
    if len(d) != instr.accumulator_registers:
        raise PtxOperandError(f"{instr.mnemonic} takes {instr.accumulator_registers} accumulator registers, "
                              f"got {len(d)}")
    a_regs = not isinstance(a, str) and isinstance(a, Sequence)
    if a_regs != instr.a_in_registers:
        raise PtxOperandError(f"A is {'registers' if a_regs else 'a descriptor'}, but the instruction was planned "
                              f"with A {'in registers' if instr.a_in_registers else 'in shared memory'}")
    if a_regs and len(a) != 4:  # type: ignore[arg-type]
        raise PtxOperandError(f"a register A is four 32-bit registers, got {len(a)}")  # type: ignore[arg-type]
    a_text = _vector(a) if a_regs else str(a)  # type: ignore[arg-type]
    tail = ""
    if instr.acc_type != "i32":
        for name, v in (("imm-scale-a", scale_a), ("imm-scale-b", scale_b)):
            if v not in (1, -1):
                raise PtxOperandError(f"{name} is 1 or -1, got {v}")
        tail = f", {scale_a}, {scale_b}"
        if instr.takes_trans:
            if not instr.a_in_registers:
                tail += f", {instr.trans_a}"
            tail += f", {instr.trans_b}"
    elif (scale_a, scale_b) != (1, 1):
        raise PtxOperandError("integer wgmma has no imm-scale operands")
    return f"{instr.mnemonic} {_vector(d)}, {a_text}, {b_desc}, {scale_d}{tail}"


# -- mma.sync, ldmatrix, stmatrix -------------------------------------------------------------------
def mma_sync(mnemonic: str, d: Sequence[Operand], a: Sequence[Operand], b: Sequence[Operand],
             c: Sequence[Operand]) -> str:
    """``mma.sync.aligned...`` with its four register vectors (``_WARP_MMA + "mma"``);
    ``mnemonic`` is ``MmaSync.text()`` of ``mma_table.MMA_SYNC``."""
    if not mnemonic.startswith("mma.sync.aligned."):
        raise PtxOperandError(f"not an mma.sync form: {mnemonic!r}")
    return f"{mnemonic} {_vector(d)}, {_vector(a)}, {_vector(b)}, {_vector(c)}"


def ldmatrix(dst: Sequence[Operand], addr: Operand, *, trans: bool = False) -> str:
    """``ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 {dst}, [addr]``: one
    8x8 matrix of 16-bit elements per destination register (``_WARP_MMA + "ldmatrix"``)."""
    _choice(str(len(dst)), "ldmatrix matrix count", ("1", "2", "4"))
    return f"ldmatrix.sync.aligned.m8n8.x{len(dst)}{'.trans' if trans else ''}.shared.b16 {_vector(dst)}, [{addr}]"


def stmatrix(addr: Operand, src: Sequence[Operand], *, trans: bool = False) -> str:
    """``stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 [addr], {src}``, the store
    counterpart of ``ldmatrix`` (sm_90; ``_WARP_MMA + "stmatrix"``)."""
    _choice(str(len(src)), "stmatrix matrix count", ("1", "2", "4"))
    return f"stmatrix.sync.aligned.m8n8.x{len(src)}{'.trans' if trans else ''}.shared.b16 [{addr}], {_vector(src)}"


# -- fences -------------------------------------------------------------------------------------------
_FENCE = _SYNC + "membar"
FENCE_SCOPES = ("cta", "cluster", "gpu", "sys")


def fence_proxy_async(space: str | None = "shared::cta") -> str:
    """Order the generic proxy's accesses with the async proxy's (TMA, wgmma), in one state
    space or (``None``) all of them (``_FENCE``)."""
    if space is None:
        return "fence.proxy.async"
    _choice(space, "fence.proxy.async state space", ("shared::cta", "shared::cluster", "global"))
    return f"fence.proxy.async.{space}"


def fence_mbarrier_init() -> str:
    """Make ``mbarrier.init`` visible to the cluster, and to the async proxy (``_FENCE``)."""
    return "fence.mbarrier_init.release.cluster"


def fence_acq_rel(scope: str) -> str:
    """``fence.acq_rel.{cta,cluster,gpu,sys}`` (``_FENCE``)."""
    return f"fence.acq_rel.{_choice(scope, 'fence scope', FENCE_SCOPES)}"


def fence_sc(scope: str) -> str:
    """``fence.sc.{cta,cluster,gpu,sys}`` (``_FENCE``)."""
    return f"fence.sc.{_choice(scope, 'fence scope', FENCE_SCOPES)}"


def membar(level: str) -> str:
    """``membar.{cta,gl,sys}`` (``_FENCE``)."""
    return f"membar.{_choice(level, 'membar level', ('cta', 'gl', 'sys'))}"


def fence_proxy_tensormap_acquire(addr: Operand, size: int = 128, *, scope: str = "gpu") -> str:
    """Acquire a tensormap that the generic proxy wrote, before TMA uses it (``_FENCE``)."""
    if size != 128:
        raise PtxOperandError(f"a tensormap fence covers the 128-byte map, not {size} bytes")
    return f"fence.proxy.tensormap::generic.acquire.{_choice(scope, 'fence scope', FENCE_SCOPES)} [{addr}], {size}"


# -- tensormap --------------------------------------------------------------------------------------
TENSORMAP_FIELDS = {  # field -> value bits (PTX ISA: 64 for the address and strides, else 32)
    "global_address": 64, "rank": 32, "box_dim": 32, "global_dim": 32, "global_stride": 64,
    "element_stride": 32, "elemtype": 32, "interleave_layout": 32, "swizzle_mode": 32, "fill_mode": 32,
}
_ORDINAL_FIELDS = ("box_dim", "global_dim", "global_stride", "element_stride")


def tensormap_replace(field: str, addr: Operand, value: Operand, ordinal: int | None = None) -> str:
    """``tensormap.replace.tile.{field}.shared::cta.b1024.b{32,64} [addr], {ordinal, }value``:
    one field of a 128-byte tensormap in shared memory; per-dimension fields take the
    dimension's ordinal (``_MOVE + "tensormap-replace"``)."""
    bits = TENSORMAP_FIELDS.get(field)
    if bits is None:
        raise PtxOperandError(f"tensormap field must be one of {', '.join(TENSORMAP_FIELDS)}, got {field!r}")
    if (ordinal is not None) != (field in _ORDINAL_FIELDS):
        raise PtxOperandError(f"tensormap field {field} {'takes' if field in _ORDINAL_FIELDS else 'has no'} ordinal")
    if ordinal is not None:
        _count(ordinal, f"{field} ordinal", 0, 3 if field == "global_stride" else 4)
    which = "" if ordinal is None else f"{ordinal}, "
    return f"tensormap.replace.tile.{field}.shared::cta.b1024.b{bits} [{addr}], {which}{value}"


def tensormap_cp_fenceproxy(dst: Operand, src: Operand, size: int = 128, *, scope: str = "gpu") -> str:
    """Copy a tensormap from shared to global memory and release it to the tensormap
    proxy, warp-wide (``_SYNC + "tensormap-cp-fenceproxy"``)."""
    if size != 128:
        raise PtxOperandError(f"tensormap.cp_fenceproxy copies the 128-byte map, not {size} bytes")
    return (f"tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release."
            f"{_choice(scope, 'fence scope', FENCE_SCOPES)}.sync.aligned [{dst}], [{src}], {size}")


# -- barriers -----------------------------------------------------------------------------------------
_BAR = _SYNC + "bar"
NAMED_BARRIERS = 16


def _named(verb: str, bar_id: int, threads: int | None) -> str:
    _count(bar_id, f"bar.{verb} barrier id", 0, NAMED_BARRIERS - 1)
    if threads is None:
        return f"bar.{verb} {bar_id}"
    if isinstance(threads, bool) or not isinstance(threads, int) or threads <= 0 or threads % 32:
        raise PtxOperandError(f"bar.{verb} thread count must be a positive multiple of 32, got {threads!r}")
    return f"bar.{verb} {bar_id}, {threads}"


def bar_sync(bar_id: int = 0, threads: int | None = None) -> str:
    """``bar.sync id{, threads}``: wait at named barrier ``id`` (every thread of the CTA
    without ``threads``) (``_BAR``)."""
    return _named("sync", bar_id, threads)


def bar_arrive(bar_id: int, threads: int) -> str:
    """``bar.arrive id, threads``: count this warp in without waiting; the thread count is
    mandatory here (``_BAR``)."""
    return _named("arrive", bar_id, threads)


def bar_warp_sync(membermask: int = -1) -> str:
    """``bar.warp.sync mask`` (``_SYNC + "bar-warp-sync"``); -1 is the whole warp."""
    if membermask != -1:
        _count(membermask, "bar.warp.sync member mask", 1, _U32 - 1)
    return f"bar.warp.sync {membermask}"


# -- distributed shared memory (clusters) ---------------------------------------------------------
def mapa(dst: Operand, addr: Operand, rank: Operand) -> str:
    """``mapa.shared::cluster.u32 dst, addr, rank``: the address of the same shared-memory
    location in the cluster's CTA ``rank`` (``_MOVE + "mapa"``)."""
    return f"mapa.shared::cluster.u32 {dst}, {addr}, {rank}"


_ST_ASYNC_TYPES = ("b32", "b64", "u32", "s32", "f32", "f64")


def st_async(addr: Operand, values: Sequence[Operand], ty: str, mbarrier: Operand) -> str:
    """``st.async.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.ty [addr], values,
    [mbarrier]``: store into a peer CTA's shared memory; the bytes complete on the peer's
    mbarrier (``_MOVE + "st-async"``). 32- and 64-bit units, at most 4 (2 of 64 bits)."""
    _choice(ty, "st.async type", _ST_ASYNC_TYPES)
    n = len(values)
    if n not in (1, 2, 4) or (n == 4 and ty in ("b64", "f64")):
        raise PtxOperandError(f"st.async stores 1, 2 or 4 values of 32 bits (1 or 2 of 64), got {n} of {ty}")
    vec = "" if n == 1 else f".v{n}"
    val = str(values[0]) if n == 1 else _vector(values)
    return f"st.async.shared::cluster.mbarrier::complete_tx::bytes{vec}.{ty} [{addr}], {val}, [{mbarrier}]"


def cp_async_bulk_shared_cluster(dst: Operand, src: Operand, size: int, mbarrier: Operand) -> str:
    """``cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src],
    size, [mbarrier]``: copy ``size`` bytes (a multiple of 16) of this CTA's shared memory
    into a peer's; they complete on the peer's mbarrier (``_MOVE + "cp-async-bulk"``)."""
    if size <= 0 or size % 16:
        raise PtxOperandError(f"cp.async.bulk copies a positive multiple of 16 bytes, got {size}")
    return f"cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [{dst}], [{src}], {size}, " \
           f"[{mbarrier}]"


def barrier_cluster_arrive(*, relaxed: bool = False) -> str:
    """``barrier.cluster.arrive{.relaxed}.aligned`` (release by default;
    ``_SYNC + "barrier-cluster"``)."""
    return f"barrier.cluster.arrive{'.relaxed' if relaxed else ''}.aligned"


def barrier_cluster_wait() -> str:
    """``barrier.cluster.wait.aligned`` (acquire; ``_SYNC + "barrier-cluster"``)."""
    return "barrier.cluster.wait.aligned"


# -- warp-specialization helpers ------------------------------------------------------------------
def setmaxnreg(action: str, count: int) -> str:
    """``setmaxnreg.{inc,dec}.sync.aligned.u32 count``: raise or lower this warpgroup's
    register budget (``PTX_ISA + "#miscellaneous-instructions-setmaxnreg"``): a multiple of
    8 in [24, 256]."""
    _choice(action, "setmaxnreg action", ("inc", "dec"))
    _count(count, "setmaxnreg register count", 24, 256)
    if count % 8:
        raise PtxOperandError(f"setmaxnreg register count must be a multiple of 8, got {count}")
    return f"setmaxnreg.{action}.sync.aligned.u32 {count}"


def elect_sync(pred: Operand, lane: Operand = "_", membermask: int = 0xFFFFFFFF) -> str:
    """``elect.sync lane|pred, membermask``: one leader among the mask's lanes
    (``_SYNC + "elect-sync"``)."""
    _count(membermask, "elect.sync member mask", 1, _U32 - 1)
    return f"elect.sync {lane}|{pred}, {membermask:#x}"


# -- warp-level collectives -----------------------------------------------------------------------
_REDUX_INT = {"add": ("s32", "u32"), "min": ("s32", "u32"), "max": ("s32", "u32"), "and": ("b32",),
              "or": ("b32",), "xor": ("b32",)}


def vote_sync_ballot(dst: Operand, pred: Operand, membermask: int = 0xFFFFFFFF) -> str:
    """``vote.sync.ballot.b32 dst, pred, membermask``: bit ``l`` of ``dst`` is lane ``l``'s
    ``pred``, 0 for lanes outside the mask; every executing thread must be in the mask
    (``_SYNC + "vote-sync"``)."""
    _count(membermask, "vote.sync member mask", 1, _U32 - 1)
    return f"vote.sync.ballot.b32 {dst}, {pred}, {membermask:#x}"


def redux_sync(op: str, ty: str, dst: Operand, src: Operand, membermask: int = 0xFFFFFFFF, *,
               absolute: bool = False) -> str:
    """``redux.sync.op{.abs}.type dst, src, membermask``: the reduction over the mask's lanes,
    in every one of them (``_SYNC + "redux-sync"``). Integer ``add``/``min``/``max`` on
    ``.s32``/``.u32`` and ``and``/``or``/``xor`` on ``.b32`` (sm_80); ``min``/``max`` on
    ``.f32``, optionally of the absolute values, need sm_100a."""
    _count(membermask, "redux.sync member mask", 1, _U32 - 1)
    if ty == "f32":
        _choice(op, "redux.sync f32 operation", ("min", "max"))
    else:
        _choice(op, "redux.sync operation", tuple(_REDUX_INT))
        _choice(ty, f"redux.sync.{op} type", _REDUX_INT[op])
        if absolute:
            raise PtxOperandError("redux.sync .abs applies to .f32 only")
    return f"redux.sync.{op}{'.abs' if absolute else ''}.{ty} {dst}, {src}, {membermask:#x}"
