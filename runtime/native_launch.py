"""A native ``cuLaunchKernel`` call for Python, made with llvmlite at run time.

The driver call itself costs about 3.4 µs on the H200's host (a loop of C); called
through cuda-python's wrapper it costs about 6.4 µs, and through ctypes more still: the
wrappers convert and check each of the eleven arguments in Python-object code. This
module JIT-compiles, once per process, a small function of the CPython C API::

    launch(func, gx, gy, gz, bx, by, bz, shared, stream, params) -> CUresult

where every argument is a Python int (a handle or an address; ``params`` the address of
the kernel-parameter pointer array, 0 for none). It reads them with
``PyLong_AsUnsignedLongLongMask``, calls the driver's ``cuLaunchKernel`` and returns its
result as an int (1, ``CUDA_ERROR_INVALID_VALUE``, without calling the driver when a
grid, block or shared-memory figure does not fit 32 bits unsigned or the count of
arguments is wrong); an argument that is not an int raises the ``TypeError`` it sets. The
function becomes a Python builtin through ``PyCFunction_NewEx`` with the ``METH_FASTCALL``
convention, so a call costs what calling ``len`` does.

It is an optimization only: ``native_launcher()`` is None wherever it cannot be made (no
libcuda, a Python without the C API symbols, a host target llvmlite lacks), and the
runtime then launches through cuda-python. ``TLXC_NATIVE_LAUNCH=0`` turns it off."""

from __future__ import annotations

import ctypes
import os
from typing import Any, Callable

_METH_FASTCALL = 0x0080
_state: dict[str, Any] = {}  # "launch": the builtin made for libcuda (None: cannot be made)
_alive: list[Any] = []  # what the builtins use: JIT engines, method tables


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


def _address(lib: Any, name: str) -> int:
    return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0


# The function, in LLVM IR: the C API and the driver are called through their addresses,
# which are constants of the module (no symbol resolution in the JIT).
_IR = """
define i8* @tlxc_launch(i8* %self, i8** %args, i64 %nargs) {{
entry:
  %ok = icmp eq i64 %nargs, 10
  br i1 %ok, label %read, label %wrong
wrong:
  %bad = call i8* inttoptr (i64 {from_long} to i8* (i64)*)(i64 1)
  ret i8* %bad
read:
{reads}
  %err = call i8* inttoptr (i64 {err_occurred} to i8* ()*)()
  %failed = icmp ne i8* %err, null
  br i1 %failed, label %raise, label %go
raise:
  ret i8* null
go:
{wide}
  %toowide = icmp ne i64 %hi7, 0
  br i1 %toowide, label %wrong, label %call
call:
  %fn = inttoptr i64 %v0 to i8*
  %st = inttoptr i64 %v8 to i8*
  %kp = inttoptr i64 %v9 to i8**
{narrow}
  %r = call i32 inttoptr (i64 {launch} to i32 (i8*, i32, i32, i32, i32, i32, i32, i32, i8*, i8**, i8**)*)(i8* %fn, \
i32 %w1, i32 %w2, i32 %w3, i32 %w4, i32 %w5, i32 %w6, i32 %w7, i8* %st, i8** %kp, i8** null)
  %r64 = sext i32 %r to i64
  %out = call i8* inttoptr (i64 {from_long} to i8* (i64)*)(i64 %r64)
  ret i8* %out
}}
"""


def make_launcher(launch_address: int, keep: Any = None) -> Callable[..., int]:
    """The builtin, calling the function at ``launch_address`` with ``cuLaunchKernel``'s
    C signature (tests give it a stand-in); ``keep`` is kept alive as long as the builtin."""
    import llvmlite.binding as llvm

    api = ctypes.pythonapi
    addrs = {"launch": launch_address,
             "as_u64": _address(api, "PyLong_AsUnsignedLongLongMask"),
             "from_long": _address(api, "PyLong_FromLong"), "err_occurred": _address(api, "PyErr_Occurred")}
    if not all(addrs.values()):
        raise OSError("a symbol is missing")
    reads = []
    for i in range(10):
        reads.append(f"  %p{i} = getelementptr i8*, i8** %args, i64 {i}")
        reads.append(f"  %a{i} = load i8*, i8** %p{i}")
        reads.append(f"  %v{i} = call i64 inttoptr (i64 {addrs['as_u64']} to i64 (i8*)*)(i8* %a{i})")
    narrow = "\n".join(f"  %w{i} = trunc i64 %v{i} to i32" for i in range(1, 8))
    # the seven 32-bit arguments (grid, block, shared bytes) must fit: a negative or too
    # large one is CUDA_ERROR_INVALID_VALUE (1), which the runtime then explains
    wide = ["  %hi0 = or i64 0, 0"] + [f"  %s{i} = lshr i64 %v{i}, 32\n  %hi{i} = or i64 %hi{i - 1}, %s{i}"
                                         for i in range(1, 8)]
    text = _IR.format(reads="\n".join(reads), narrow=narrow, wide="\n".join(wide), **addrs).replace("\\\n", "")

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_assembly(text)
    mod.triple = llvm.get_process_triple()
    mod.verify()
    target = llvm.Target.from_default_triple().create_target_machine(opt=2)
    engine = llvm.create_mcjit_compiler(mod, target)
    engine.finalize_object()
    fn = engine.get_function_address("tlxc_launch")
    if not fn:
        raise OSError("the JIT gave no address")

    method = _MethodDef(b"tlxc_cuLaunchKernel", fn, _METH_FASTCALL, None)
    new = api.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
    builtin = new(ctypes.addressof(method), None, None)
    _alive.append((engine, mod, method, keep))  # the builtin's code and method table live as long as the process
    return builtin


def native_launcher() -> Callable[..., int] | None:
    """The builtin ``launch(func, gx, gy, gz, bx, by, bz, shared, stream, params) -> CUresult``,
    made on first use; None where it cannot be made (the runtime then uses cuda-python)."""
    if "launch" not in _state:
        fn = None
        if os.environ.get("TLXC_NATIVE_LAUNCH", "1") != "0":
            try:
                libcuda = ctypes.CDLL("libcuda.so.1")  # the library cuda-python loaded: one driver state
                fn = make_launcher(_address(libcuda, "cuLaunchKernel"), libcuda)
            except Exception:  # noqa: BLE001 - any failure: launch the portable way
                fn = None
        _state["launch"] = fn
    return _state["launch"]
