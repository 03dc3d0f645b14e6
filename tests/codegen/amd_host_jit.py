"""Run the AMDGPU code generator's per-element lowerings on this CPU.

There is no AMD GPU here, but most of what ``tlxc/codegen/amdgpu/lower_arith.py``,
``lower_cast.py`` and ``lower_math.py`` build is target-independent LLVM IR. This module
puts one per-element lowering -- a function ``build(e, args) -> value`` of the kind those
modules export (``int_binary``, ``float_binary``, ``convert_value``, ``math_value``...) --
into a host function that loops over numpy arrays, has llvmlite's MCJIT compile it for
the host CPU, and calls it with ctypes::

    from amd_host_jit import jit_elementwise, reference
    f = jit_elementwise(lambda e, a: lower_math.math_value(e, float32, "exp", a[0]),
                        [float32], float32, arch="gfx942")
    y = f(x)                                     # numpy in, numpy out
    want = reference(ops.MATH_OPS["exp"], [float32], float32, {}, x)   # the interpreter's result

``e`` is a ``HostEmitter``: the attributes of the real ``Emitter`` that per-element code
may use (``b``, ``module``, ``fn``, ``target``, ``intrinsic``, ``call``,
``call_overloaded``) plus ``host = True``. AMD-only intrinsics have no host code, so
``call`` substitutes an exact host equivalent for each (``SUBSTITUTES``):

- ``llvm.amdgcn.rsq.f32`` -> ``1/sqrt`` computed in f64 and rounded to f32 (the hardware's
  ``v_rsq_f32`` is within 1 ulp of that; the test tolerances allow for it);
- ``llvm.amdgcn.rsq.f64`` -> ``1.0 / sqrt(x)`` (only a seed: two Newton steps follow);
- ``llvm.amdgcn.cvt.f32.fp8`` / ``.bf8`` -> ``lower_cast.fp8_decode_soft`` of the target's
  flavour (fnuz e4m3 / e5m2 on gfx942, OCP on gfx950 and gfx1250), byte 0;
- ``llvm.amdgcn.cvt.pk.fp8.f32`` / ``.bf8.f32`` -> ``lower_cast.fp8_encode_soft`` (round to
  nearest even; the lowering clamps its input to the finite range first, so saturation
  behaviour of the hardware never matters), the two bytes packed into the low half;
- ``llvm.fma.f16`` (``v_fma_f16`` on the GPU; x86 has no inline code for it) ->
  ``lower_arith.fma_via_f64``, the exact route bf16 and fp8 take.

And one LLVM instruction: ``fptrunc`` to ``bfloat`` has no inline x86 code (LLVM calls a
runtime function the JIT cannot resolve), so ``lower_cast.f32_to_bf16`` sees ``e.host``
and uses its integer rounding (the gfx942 path) instead of the gfx950/gfx1250 ``fptrunc``.
Everything else -- the f64 math routines, ``fmod``, the integer semantics, the conversion
rules -- is the very code the AMDGPU kernels get.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Sequence

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from tlxc.codegen.amdgpu import lower_cast
from tlxc.codegen.amdgpu.isa import TARGETS, AmdTarget
from tlxc.codegen.amdgpu.llvm import F32, F64, I1, I8, I32, I64, mangle, value_type
from tlxc.interpreter import numerics as N
from tlxc.ir.core import Value
from tlxc.ir.types import DType, Kind

Build = Callable[["HostEmitter", list[ir.Value]], ir.Value]


def _rsq_f32(e: "HostEmitter", args: list[ir.Value]) -> ir.Value:
    x = e.b.fpext(args[0], F64)
    s = e.call("llvm.sqrt.f64", F64, [x])
    return e.b.fptrunc(e.b.fdiv(ir.Constant(F64, 1.0), s), F32)


def _rsq_f64(e: "HostEmitter", args: list[ir.Value]) -> ir.Value:
    return e.b.fdiv(ir.Constant(F64, 1.0), e.call("llvm.sqrt.f64", F64, [args[0]]))


def _fp8_format(e: "HostEmitter", kind: str) -> lower_cast.Fp8Format:
    e4, e5 = ("f8e4m3fnuz", "f8e5m2fnuz") if e.target.fp8 == "fnuz" else ("f8e4m3", "f8e5m2")
    return lower_cast.FP8[e4 if kind == "fp8" else e5]


def _decode(kind: str) -> Callable[["HostEmitter", list[ir.Value]], ir.Value]:
    def f(e: "HostEmitter", args: list[ir.Value]) -> ir.Value:
        return lower_cast.fp8_decode_soft(e.b, _fp8_format(e, kind), e.b.trunc(args[0], I8))

    return f


def _encode(kind: str) -> Callable[["HostEmitter", list[ir.Value]], ir.Value]:
    def f(e: "HostEmitter", args: list[ir.Value]) -> ir.Value:
        a, b_, old, _word = args
        fmt = _fp8_format(e, kind)
        lo = e.b.zext(lower_cast.fp8_encode_soft(e, fmt, a), I32)
        hi = e.b.zext(lower_cast.fp8_encode_soft(e, fmt, b_), I32)
        packed = e.b.or_(lo, e.b.shl(hi, ir.Constant(I32, 8)))
        return e.b.or_(e.b.and_(old, ir.Constant(I32, 0xFFFF0000)), packed)

    return f


def _fma_f16(e: "HostEmitter", args: list[ir.Value]) -> ir.Value:
    from tlxc.codegen.amdgpu.lower_arith import fma_via_f64
    from tlxc.ir.types import float16

    return fma_via_f64(e, float16, *args)


#: host stand-ins for the AMD-only intrinsics (see the module docstring)
SUBSTITUTES: dict[str, Callable[["HostEmitter", list[ir.Value]], ir.Value]] = {
    "llvm.amdgcn.rsq.f32": _rsq_f32,
    "llvm.amdgcn.rsq.f64": _rsq_f64,
    "llvm.amdgcn.cvt.f32.fp8": _decode("fp8"),
    "llvm.amdgcn.cvt.f32.bf8": _decode("bf8"),
    "llvm.amdgcn.cvt.pk.fp8.f32": _encode("fp8"),
    "llvm.amdgcn.cvt.pk.bf8.f32": _encode("bf8"),
    # not AMD-only, but x86 has no f16 fma instruction and the JIT cannot find the runtime
    # function LLVM calls instead: the exact f64 route of bf16/fp8 (v_fma_f16 on the GPU)
    "llvm.fma.f16": _fma_f16,
}


@dataclass
class HostEmitter:
    """The part of ``tlxc.codegen.amdgpu.emitter.Emitter`` that per-element code uses."""

    module: ir.Module
    fn: ir.Function
    b: ir.IRBuilder
    target: AmdTarget
    host: bool = True
    substituted: set[str] = field(default_factory=set)

    def intrinsic(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, args), name=name)
        return fn

    def call(self, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        if name.startswith("llvm.amdgcn.") or name in SUBSTITUTES:
            sub = SUBSTITUTES.get(name)
            if sub is None:
                raise NotImplementedError(f"no host substitute for {name}: add one to SUBSTITUTES")
            self.substituted.add(name)
            return sub(self, args)
        return self.b.call(self.intrinsic(name, ret, [a.type for a in args]), args)

    def call_overloaded(self, base: str, ret: ir.Type, args: list[ir.Value], overload: ir.Type) -> ir.Value:
        return self.call(f"{base}.{mangle(overload)}", ret, args)


def _host_machine() -> Any:
    """A new host target machine (each MCJIT engine takes ownership of the one it gets)."""
    _init()
    target = llvm.Target.from_default_triple()
    # the host's own features: without F16C, LLVM calls runtime functions for half
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=llvm.get_host_cpu_features().flatten(), opt=2)


@lru_cache(maxsize=None)
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def storage(t: DType) -> np.dtype:
    return np.dtype(np.bool_) if t.kind == Kind.BOOL else N.storage_dtype(t)


def _memory_type(t: DType) -> ir.Type:
    return I8 if t.kind == Kind.BOOL else value_type(t)


@dataclass
class HostFunction:
    """A JIT-compiled elementwise function: call it with numpy arrays (broadcast to one
    shape, converted to the argument types' storage dtypes); returns the result array."""

    arg_types: tuple[DType, ...]
    ret_type: DType
    llvm_ir: str
    substituted: frozenset[str]
    _engine: Any
    _fn: Any

    def __call__(self, *arrays: Any) -> np.ndarray:
        arrs = [np.ascontiguousarray(np.asarray(a).astype(storage(t), copy=False))
                for a, t in zip(arrays, self.arg_types)]
        arrs = [np.ascontiguousarray(a) for a in np.broadcast_arrays(*arrs)]
        shape = arrs[0].shape if arrs else ()
        out = np.zeros(shape, storage(self.ret_type))
        ptrs = [a.ctypes.data for a in arrs] + [out.ctypes.data]
        self._fn(*ptrs, out.size)
        return out


def jit_elementwise(build: Build, arg_types: Sequence[DType], ret_type: DType, arch: str = "gfx942",
                    name: str = "k") -> HostFunction:
    """``out[i] = build(e, [a0[i], a1[i], ...])`` for the host, with ``e.target`` the
    AMDGPU target ``arch`` (which picks the fp8 flavour and the hardware paths)."""
    module = ir.Module(name=name)
    module.triple = llvm.get_process_triple()
    ptr = ir.PointerType()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr] * (len(arg_types) + 1) + [I64]), name=name)
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    n = fn.args[-1]
    b.cbranch(b.icmp_signed(">", n, ir.Constant(I64, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), entry)
    e = HostEmitter(module, fn, b, TARGETS[arch])
    args = []
    for p, t in zip(fn.args, arg_types):
        x = b.load(b.gep(p, [i], source_etype=_memory_type(t)), typ=_memory_type(t))
        if t.kind == Kind.BOOL:
            x = b.icmp_unsigned("!=", x, ir.Constant(I8, 0))
        args.append(x)
    r = build(e, args)
    if ret_type.kind == Kind.BOOL:
        r = b.zext(r, I8)
    b.store(r, b.gep(fn.args[len(arg_types)], [i], source_etype=_memory_type(ret_type)))
    nxt = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
    b.position_at_end(done)
    b.ret_void()
    text = str(module)
    mod = llvm.parse_assembly(text)
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, _host_machine())
    engine.finalize_object()
    cfn = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * (len(arg_types) + 1)), ctypes.c_int64)(
        engine.get_function_address(name))
    return HostFunction(tuple(arg_types), ret_type, text, frozenset(e.substituted), engine, cfn)


def reference(op_class: type, arg_types: Sequence[DType], ret_type: DType, attrs: dict[str, Any] | None,
              *arrays: Any) -> np.ndarray:
    """The interpreter's result of ``op_class`` (with ``attrs``) on ``arrays``: its own
    rule, on an op built for the occasion."""
    from tlxc.interpreter.registry import PURE_RULES

    op = op_class([Value(t) for t in arg_types], [ret_type], dict(attrs or {}))
    fn = PURE_RULES[op_class](op, None)
    arrs = [np.asarray(a).astype(storage(t), copy=False) for a, t in zip(arrays, arg_types)]
    return np.asarray(fn(*arrs)).astype(storage(ret_type), copy=False)


def ulp_error(got: np.ndarray, want: np.ndarray, t: DType) -> np.ndarray:
    """|got - want| in ulps of ``want`` in format ``t`` (ulps of the smallest normal below
    it), computed in f64; NaN where exactly one of them is NaN, 0 where both are, inf where
    infinities differ."""
    g = np.asarray(got).astype(np.float64)
    w = np.asarray(want).astype(np.float64)
    mant = {16: 10, 32: 23, 64: 52}.get(t.bits, t.man_bits) if t.ir_name != "bf16" else 7
    if t.bits == 8:
        mant = t.man_bits
    min_exp = {"f16": -14, "bf16": -126, "f32": -126, "f64": -1022}.get(t.ir_name)
    if min_exp is None:
        from tlxc.codegen.amdgpu.lower_cast import FP8

        min_exp = 1 - FP8[t.ir_name].bias
    with np.errstate(all="ignore"):
        _, ex = np.frexp(w)
        ulp = np.ldexp(1.0, np.maximum(ex - 1, min_exp) - mant)
        err = np.abs(g - w) / ulp
    both_nan = np.isnan(g) & np.isnan(w)
    same = (g == w)
    err = np.where(same | both_nan, 0.0, err)
    err = np.where(np.isnan(g) ^ np.isnan(w), np.nan, err)
    return err


__all__ = ["HostEmitter", "HostFunction", "jit_elementwise", "reference", "ulp_error", "SUBSTITUTES", "storage",
           "I1", "F32"]
