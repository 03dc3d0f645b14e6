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
runtime then launches through cuda-python. ``TLXC_NATIVE_LAUNCH=0`` turns it off.

The same way, per kernel: ``make_trusted_launcher`` makes ``LoadedKernel.launch_trusted``
(grid, stream, argument packing and the driver call in one builtin) and, with guards,
the hot variant's guarded launch of ``kernel[grid]``'s fast path, which checks the
arguments as the fast path's key would before launching; ``make_dispatcher`` makes the
native entry of ``kernel[grid](...)`` that calls it (tlxc/kernels/launch.py tells the
whole story). Each answers "not here" (-1 or None) for anything it does not take, and
its Python caller then does what it did before."""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any, Callable

_METH_FASTCALL = 0x0080
_METH_KEYWORDS = 0x0002
_state: dict[str, Any] = {}  # "launch": the builtin made for libcuda (None: cannot be made)
_alive: list[Any] = []  # what the builtins use: JIT engines, method tables


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


def _address(lib: Any, name: str) -> int:
    return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0


# the C API functions the generated code calls: short name -> (symbol, LLVM function type)
_CAPI = {
    "from_long": ("PyLong_FromLong", "i8* (i64)"), "as_u64": ("PyLong_AsUnsignedLongLongMask", "i64 (i8*)"),
    "as_u64_exact": ("PyLong_AsUnsignedLongLong", "i64 (i8*)"), "as_i64": ("PyLong_AsLongLong", "i64 (i8*)"),
    "as_i64_ovf": ("PyLong_AsLongLongAndOverflow", "i64 (i8*, i32*)"),
    "as_double": ("PyFloat_AsDouble", "double (i8*)"),
    "err_occurred": ("PyErr_Occurred", "i8* ()"), "err_clear": ("PyErr_Clear", "void ()"),
    "tuple_size": ("PyTuple_Size", "i64 (i8*)"), "tuple_item": ("PyTuple_GetItem", "i8* (i8*, i64)"),
    "list_item": ("PyList_GetItem", "i8* (i8*, i64)"), "call": ("PyObject_CallObject", "i8* (i8*, i8*)"),
    "decref": ("Py_DecRef", "void (i8*)"), "incref": ("Py_IncRef", "void (i8*)"),
    "getattr": ("PyObject_GetAttr", "i8* (i8*, i8*)"),
    "call_method": ("PyObject_VectorcallMethod", "i8* (i8*, i8**, i64, i8*)"),
    "vectorcall": ("PyObject_Vectorcall", "i8* (i8*, i8**, i64, i8*)"),
    "compare": ("PyObject_RichCompareBool", "i32 (i8*, i8*, i32)"),
}


def _capi(*names: str) -> Callable[[str], str]:
    """``fn(name)``: the LLVM constant through which generated code calls the C API
    function ``name`` of ``_CAPI`` (its address in this process); OSError if one is missing."""
    addrs = {n: _address(ctypes.pythonapi, _CAPI[n][0]) for n in names}
    if not all(addrs.values()):
        raise OSError("a symbol is missing")
    return lambda n: f"inttoptr (i64 {addrs[n]} to {_CAPI[n][1]}*)"


def _obj(o: Any) -> str:
    """A Python object as a constant of the generated code (the caller keeps it alive)."""
    return f"inttoptr (i64 {id(o)} to i8*)"


# The function, in LLVM IR: the C API and the driver are called through their addresses,
# which are constants of the module (no symbol resolution in the JIT).
_IR = """
define i8* @tlxc_launch(i8* %self, i8** %args, i64 %nargs) {{
entry:
  %ok = icmp eq i64 %nargs, 10
  br i1 %ok, label %read, label %wrong
wrong:
  %bad = call i8* {from_long}(i64 1)
  ret i8* %bad
read:
{reads}
  %err = call i8* {err_occurred}()
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
  %out = call i8* {from_long}(i64 %r64)
  ret i8* %out
}}
"""


def make_launcher(launch_address: int, keep: Any = None) -> Callable[..., int]:
    """The builtin, calling the function at ``launch_address`` with ``cuLaunchKernel``'s
    C signature (tests give it a stand-in); ``keep`` is kept alive as long as the builtin."""
    fn = _capi("as_u64", "from_long", "err_occurred")
    reads = []
    for i in range(10):
        reads.append(f"  %p{i} = getelementptr i8*, i8** %args, i64 {i}")
        reads.append(f"  %a{i} = load i8*, i8** %p{i}")
        reads.append(f"  %v{i} = call i64 {fn('as_u64')}(i8* %a{i})")
    narrow = "\n".join(f"  %w{i} = trunc i64 %v{i} to i32" for i in range(1, 8))
    # the seven 32-bit arguments (grid, block, shared bytes) must fit: a negative or too
    # large one is CUDA_ERROR_INVALID_VALUE (1), which the runtime then explains
    wide = ["  %hi0 = or i64 0, 0"] + [f"  %s{i} = lshr i64 %v{i}, 32\n  %hi{i} = or i64 %hi{i - 1}, %s{i}"
                                         for i in range(1, 8)]
    text = _IR.format(reads="\n".join(reads), narrow=narrow, wide="\n".join(wide), launch=launch_address,
                      from_long=fn("from_long"), err_occurred=fn("err_occurred")).replace("\\\n", "")

    return _builtin(text, "tlxc_launch", keep)


def native_launcher() -> Callable[..., int] | None:
    """The builtin ``launch(func, gx, gy, gz, bx, by, bz, shared, stream, params) -> CUresult``,
    made on first use; None where it cannot be made (the runtime then uses cuda-python)."""
    if "launch" not in _state:
        fn = None
        if os.environ.get("TLXC_NATIVE_LAUNCH", "1") != "0":
            try:
                libcuda = ctypes.CDLL("libcuda.so.1")  # the library cuda-python loaded: one driver state
                _state["cuLaunchKernel"] = _address(libcuda, "cuLaunchKernel")
                fn = make_launcher(_state["cuLaunchKernel"], libcuda)  # keeps libcuda loaded
            except Exception:  # noqa: BLE001 - any failure: launch the portable way
                fn = None
        _state["launch"] = fn
    return _state["launch"]


# -- the trusted launch of one kernel ------------------------------------------------------------------
#
# ``LoadedKernel.launch_trusted(g3, stream, a0, a1, ...)`` as one native function per kernel:
# the grid tuple read, the stream resolved, each argument converted and stored into a
# buffer on the C stack at its offset of the argument plan, and ``cuLaunchKernel`` called,
# with no Python frame, no struct packing and no pool of buffers (the stack is the
# thread's own). Its contract is the Python one's: the driver's CUresult, or -1 when an
# argument cannot be converted or does not fit (the Python error it raised is cleared),
# meaning "nothing was launched: call ``launch``", which explains or recovers.

# how each scalar type is read and stored: (C API reader, LLVM type, [lo, hi] or None)
_TRUSTED_SCALARS = {
    "ptr": ("as_u64", "i64", None),
    "u64": ("as_u64_exact", "i64", None),
    "i64": ("as_i64", "i64", None),
    "i32": ("as_i64", "i32", (-(1 << 31), (1 << 31) - 1)),
    "u32": ("as_i64", "i32", (0, (1 << 32) - 1)),
    "fp64": ("as_double", "double", None),
    "fp32": ("as_double", "float", None),
}
_FLT_MAX = "0x47EFFFFFE0000000"  # the largest finite float, as LLVM writes a double constant


def trusted_kinds(kinds: list[str]) -> bool:
    """Whether a native trusted launcher can take parameters of these kinds (``ptr`` or a
    scalar's signature name); the others (narrow ints, fp16, bf16...) keep the Python one."""
    return all(k in _TRUSTED_SCALARS for k in kinds)


def make_trusted_launcher(launch_address: int, func: int, block: tuple[int, int, int], shared: int,
                          kinds: list[str], offsets: list[int], size: int, default_stream: Callable[[], int],
                          keep: Any = None, alive: int = 0, guards: list[tuple] | None = None,
                          extras: tuple = (), result: Any = None) -> Callable[..., Any]:
    """The builtin ``launch_trusted(g3, stream, a0, ...) -> CUresult or -1`` of one kernel:
    ``func`` its CUfunction handle, ``kinds``/``offsets``/``size`` its argument plan (see
    ``trusted_kinds``), ``default_stream()`` the stream of ``stream=None``; the driver call
    is the function at ``launch_address`` (tests give it a stand-in). ``alive``: the
    address of an int32 that is 0 once the module is unloaded (then it answers -1).

    With ``guards`` it is instead the *guarded* launch of one variant,
    ``hot(g3, stream, o0, ..., e0, ...) -> result, None or CUresult``: it takes the objects
    the caller passed and launches only if they are what the variant was specialized on
    (the checks of the fast path's speculative key, made in C), answering ``result`` (the
    compiled kernel); None when a check fails or an argument cannot be packed (the caller
    then computes the key); the CUresult of a failed launch. ``guards`` has per parameter:
    ``("tensor", type, dtype, aligned)`` (exactly that type, ``is_cuda`` True, that dtype
    object, ``data_ptr()`` 16-byte aligned if ``aligned`` is True, not if False, either if
    None); ``("int", spec)`` (an ``int`` in i32 range; 1 if ``spec`` is ``"one"``, else
    not 1 and divisible by 16 if True, not if False, any if None); ``("float",)`` (a
    ``float``). ``extras``, after the parameters, must equal (``==``) the objects given."""
    fn = _capi("from_long", "as_u64", "as_u64_exact", "as_i64", "as_i64_ovf", "as_double", "err_occurred",
               "err_clear", "tuple_size", "tuple_item", "call", "decref", "incref", "getattr", "call_method",
               "compare")
    if not launch_address:
        raise OSError("no driver function")
    guarded = guards is not None
    held: list[Any] = [keep, default_stream, result, extras, guards]  # kept alive with the builtin
    if guarded:
        sample = 1.5  # the guards read an object's type at offset 8 (CPython's object header)
        if ctypes.c_void_p.from_address(id(sample) + 8).value != id(float) or len(guards) != len(kinds):
            raise OSError("not the object layout the guards read")
        attr_names = {n: sys.intern(n) for n in ("is_cuda", "dtype", "data_ptr")}
        held.append(attr_names)

    obj = _obj
    n = len(kinds)
    body: list[str] = []
    labels = iter(range(1 << 30))

    def check() -> None:
        """Branch to ``fail`` if the last C API call set an error."""
        k = next(labels)
        body.extend([f"  %err{k} = call i8* {fn('err_occurred')}()", f"  %bad{k} = icmp ne i8* %err{k}, null",
                     f"  br i1 %bad{k}, label %fail, label %ok{k}", f"ok{k}:"])

    def fail_if(cond: str) -> None:
        k = next(labels)
        body.extend([f"  br i1 {cond}, label %fail, label %ok{k}", f"ok{k}:"])

    read: set[int] = set()

    def item(i: int) -> str:
        """The i-th argument (read once: every later use is on the path through the first)."""
        if i not in read:
            read.add(i)
            body.extend([f"  %ap{i} = getelementptr i8*, i8** %args, i64 {i}", f"  %ao{i} = load i8*, i8** %ap{i}"])
        return f"%ao{i}"

    def type_is(o: str, t: type, tag: str) -> None:
        body.extend([f"  %tp{tag} = bitcast i8* {o} to i8**", f"  %tq{tag} = getelementptr i8*, i8** %tp{tag}, i64 1",
                     f"  %ty{tag} = load i8*, i8** %tq{tag}", f"  %tn{tag} = icmp ne i8* %ty{tag}, {obj(t)}"])
        fail_if(f"%tn{tag}")

    def attr_is(o: str, name: str, expected: Any, tag: str) -> None:
        """``o.name is expected`` (the reference got is given back at once)."""
        body.append(f"  %at{tag} = call i8* {fn('getattr')}(i8* {o}, i8* {obj(attr_names[name])})")
        body.append(f"  %an{tag} = icmp eq i8* %at{tag}, null")
        fail_if(f"%an{tag}")
        body.extend([f"  call void {fn('decref')}(i8* %at{tag})",
                     f"  %ax{tag} = icmp ne i8* %at{tag}, {obj(expected)}"])
        fail_if(f"%ax{tag}")

    # the module must still be loaded
    if alive:
        body += [f"  %alive = load volatile i32, i32* inttoptr (i64 {alive} to i32*)",
                 "  %dead = icmp eq i32 %alive, 0"]
        fail_if("%dead")
    # the guards (guarded launch): each parameter's object, then the extras
    read_by_guard: dict[int, str] = {}  # parameter -> the value its guard read (as the conversion would)
    for i, g in enumerate(guards or ()):
        o = item(2 + i)
        if g[0] == "tensor":
            _, t, dtype, aligned = g
            type_is(o, t, f"g{i}")
            attr_is(o, "is_cuda", True, f"c{i}")
            attr_is(o, "dtype", dtype, f"d{i}")
            body += [f"  %self{i} = alloca i8*", f"  store i8* {o}, i8** %self{i}",
                     f"  %dpo{i} = call i8* {fn('call_method')}(i8* {obj(attr_names['data_ptr'])}, i8** %self{i}, "
                     "i64 1, i8* null)", f"  %dpn{i} = icmp eq i8* %dpo{i}, null"]
            fail_if(f"%dpn{i}")
            body += [f"  %dp{i} = call i64 {fn('as_u64')}(i8* %dpo{i})", f"  call void {fn('decref')}(i8* %dpo{i})"]
            check()
            read_by_guard[i] = f"%dp{i}"
            if aligned is not None:
                body += [f"  %al{i} = and i64 %dp{i}, 15",
                         f"  %ali{i} = icmp {'ne' if aligned else 'eq'} i64 %al{i}, 0"]
                fail_if(f"%ali{i}")
        elif g[0] == "int":
            type_is(o, int, f"g{i}")
            body += [f"  %ovp{i} = alloca i32", f"  %iv{i} = call i64 {fn('as_i64_ovf')}(i8* {o}, i32* %ovp{i})",
                     f"  %ov{i} = load i32, i32* %ovp{i}", f"  %ovb{i} = icmp ne i32 %ov{i}, 0"]
            fail_if(f"%ovb{i}")
            body += [f"  %ilo{i} = icmp slt i64 %iv{i}, {-(1 << 31)}",
                     f"  %ihi{i} = icmp sgt i64 %iv{i}, {(1 << 31) - 1}", f"  %iout{i} = or i1 %ilo{i}, %ihi{i}"]
            fail_if(f"%iout{i}")
            if _TRUSTED_SCALARS[kinds[i]][0] == "as_i64":
                read_by_guard[i] = f"%iv{i}"
            spec = g[1]
            if spec == "one":
                body.append(f"  %one{i} = icmp ne i64 %iv{i}, 1")
                fail_if(f"%one{i}")
            elif spec is not None:
                body += [f"  %is1{i} = icmp eq i64 %iv{i}, 1", f"  %m{i} = and i64 %iv{i}, 15",
                         f"  %dv{i} = icmp {'ne' if spec else 'eq'} i64 %m{i}, 0", f"  %sp{i} = or i1 %is1{i}, %dv{i}"]
                fail_if(f"%sp{i}")
        elif g[0] == "float":
            type_is(o, float, f"g{i}")
        else:
            raise ValueError(f"unknown guard {g!r}")
    for j, e in enumerate(extras):
        o = item(2 + n + j)
        body += [f"  %eq{j} = call i32 {fn('compare')}(i8* {o}, i8* {obj(e)}, i32 2)",  # Py_EQ
                 f"  %ne{j} = icmp ne i32 %eq{j}, 1"]
        fail_if(f"%ne{j}")
    # the grid: a tuple of one or three ints, each of 32 bits
    g3 = item(0)
    body += [f"  %gn = call i64 {fn('tuple_size')}(i8* {g3})", "  %g_is3 = icmp eq i64 %gn, 3",
             "  br i1 %g_is3, label %grid3, label %grid1", "grid1:", "  %g_is1 = icmp eq i64 %gn, 1",
             "  br i1 %g_is1, label %grid1ok, label %fail", "grid1ok:",
             f"  %gx1o = call i8* {fn('tuple_item')}(i8* {g3}, i64 0)",
             f"  %gx1 = call i64 {fn('as_u64')}(i8* %gx1o)", "  br label %gridok", "grid3:"]
    for d in "xyz":
        body += [f"  %g{d}3o = call i8* {fn('tuple_item')}(i8* {g3}, i64 {'xyz'.index(d)})",
                 f"  %g{d}3 = call i64 {fn('as_u64')}(i8* %g{d}3o)"]
    body += ["  br label %gridok", "gridok:", "  %gx = phi i64 [%gx1, %grid1ok], [%gx3, %grid3]",
             "  %gy = phi i64 [1, %grid1ok], [%gy3, %grid3]", "  %gz = phi i64 [1, %grid1ok], [%gz3, %grid3]"]
    check()
    body += ["  %gor = or i64 %gx, %gy", "  %gor2 = or i64 %gor, %gz", "  %ghi = lshr i64 %gor2, 32",
             "  %gwide = icmp ne i64 %ghi, 0"]
    fail_if("%gwide")
    for d in "xyz":
        body.append(f"  %w{d} = trunc i64 %g{d} to i32")
    # the stream: None is default_stream()'s, else an int handle
    so = item(1)
    body += [f"  %s_none = icmp eq i8* {so}, {obj(None)}",
             "  br i1 %s_none, label %sdef, label %sgiven", "sdef:",
             f"  %sr = call i8* {fn('call')}(i8* {obj(default_stream)}, i8* null)",
             "  %sr_null = icmp eq i8* %sr, null", "  br i1 %sr_null, label %fail, label %sdefok", "sdefok:",
             f"  %sv1 = call i64 {fn('as_u64')}(i8* %sr)", f"  call void {fn('decref')}(i8* %sr)",
             "  br label %sdone", "sgiven:", f"  %sv2 = call i64 {fn('as_u64')}(i8* {so})", "  br label %sdone",
             "sdone:", "  %sv = phi i64 [%sv1, %sdefok], [%sv2, %sgiven]"]
    check()
    # the arguments, into the buffer at their offsets
    for i, (kind, off) in enumerate(zip(kinds, offsets)):
        reader, ty, bounds = _TRUSTED_SCALARS[kind]
        if i in read_by_guard:
            v = read_by_guard[i]
        else:
            o = item(2 + i)
            body.append(f"  %r{i} = call {'double' if reader == 'as_double' else 'i64'} {fn(reader)}(i8* {o})")
            check()
            v = f"%r{i}"
        if bounds is not None:
            lo, hi = bounds
            body += [f"  %lo{i} = icmp slt i64 {v}, {lo}", f"  %hi{i} = icmp sgt i64 {v}, {hi}",
                     f"  %out{i} = or i1 %lo{i}, %hi{i}"]
            fail_if(f"%out{i}")
            body.append(f"  %v{i} = trunc i64 {v} to i32")
            v = f"%v{i}"
        elif kind == "fp32":  # a finite double beyond float's range does not fit (as struct's "f")
            body += [f"  %abs{i} = call double @llvm.fabs.f64(double {v})",
                     f"  %big{i} = fcmp ogt double %abs{i}, {_FLT_MAX}",
                     f"  %inf{i} = fcmp oeq double %abs{i}, 0x7FF0000000000000",
                     f"  %ninf{i} = xor i1 %inf{i}, true", f"  %over{i} = and i1 %big{i}, %ninf{i}"]
            fail_if(f"%over{i}")
            body.append(f"  %v{i} = fptrunc double {v} to float")
            v = f"%v{i}"
        body += [f"  %slot{i} = getelementptr [{max(size, 8)} x i8], [{max(size, 8)} x i8]* %buf, i64 0, i64 {off}",
                 f"  %tslot{i} = bitcast i8* %slot{i} to {ty}*", f"  store {ty} {v}, {ty}* %tslot{i}",
                 f"  %pp{i} = getelementptr [{max(n, 1)} x i8*], [{max(n, 1)} x i8*]* %kp, i64 0, i64 {i}",
                 f"  store i8* %slot{i}, i8** %pp{i}"]
    if n:
        body.append(f"  %kp0 = getelementptr [{n} x i8*], [{n} x i8*]* %kp, i64 0, i64 0")
    kp = "%kp0" if n else "null"
    bx, by, bz = block
    launch_ty = "i32 (i8*, i32, i32, i32, i32, i32, i32, i32, i8*, i8**, i8**)"
    body += ["  %st = inttoptr i64 %sv to i8*",
             f"  %r = call i32 inttoptr (i64 {launch_address} to {launch_ty}*)(i8* inttoptr (i64 {func} to i8*), "
             f"i32 %wx, i32 %wy, i32 %wz, i32 {bx}, i32 {by}, i32 {bz}, i32 {shared}, i8* %st, i8** {kp}, i8** null)",
             "  %r64 = sext i32 %r to i64"]
    if guarded:  # launched: the result object; else the CUresult
        body += ["  %launched = icmp eq i32 %r, 0", "  br i1 %launched, label %done, label %error", "done:",
                 f"  call void {fn('incref')}(i8* {obj(result)})", f"  ret i8* {obj(result)}", "error:"]
    body += [f"  %res = call i8* {fn('from_long')}(i64 %r64)", "  ret i8* %res"]
    if guarded:  # "not this variant, or not packable": None
        refuse = [f"  call void {fn('incref')}(i8* {obj(None)})", f"  ret i8* {obj(None)}"]
    else:  # "nothing was launched: call launch"
        refuse = [f"  %m1 = call i8* {fn('from_long')}(i64 -1)", "  ret i8* %m1"]
    text = "\n".join([
        "declare double @llvm.fabs.f64(double)",
        "define i8* @tlxc_trusted(i8* %self, i8** %args, i64 %nargs) {",
        "entry:",
        f"  %buf = alloca [{max(size, 8)} x i8], align 16",
        f"  %kp = alloca [{max(n, 1)} x i8*], align 8",
        f"  %count_ok = icmp eq i64 %nargs, {n + 2 + len(extras)}",
        "  br i1 %count_ok, label %start, label %fail",
        "fail:",  # any error a C API call raised is cleared
        f"  call void {fn('err_clear')}()",
        *refuse,
        "start:",
        *body,
        "}", ""])
    return _builtin(text, "tlxc_trusted", tuple(held))


def _builtin(text: str, name: str, keep: Any, flags: int = _METH_FASTCALL) -> Callable[..., Any]:
    """JIT-compile the LLVM IR ``text`` and make its function ``name`` (the METH_FASTCALL
    signature) a Python builtin, kept alive with ``keep`` for the process's lifetime."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_assembly(text)
    mod.triple = llvm.get_process_triple()
    mod.verify()
    # opt=0 (LLVM's fast instruction selection): a third of the JIT time of opt=2 (about 5 ms
    # instead of 15 per function, paid at a variant's first launch), and about 20 ns more per
    # call, next to a driver call of 3 µs
    target = llvm.Target.from_default_triple().create_target_machine(opt=0)
    engine = llvm.create_mcjit_compiler(mod, target)
    engine.finalize_object()
    fn = engine.get_function_address(name)
    if not fn:
        raise OSError("the JIT gave no address")
    api = ctypes.pythonapi
    method = _MethodDef(name.encode(), fn, flags, None)
    new = api.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
    builtin = new(ctypes.addressof(method), None, None)
    _alive.append((engine, mod, method, keep))  # the builtin's code and method table live as long as the process
    return builtin


def trusted_launcher(func: int, block: tuple[int, int, int], shared: int, kinds: list[str], offsets: list[int],
                     size: int, default_stream: Callable[[], int], **guarded: Any) -> Callable[..., Any] | None:
    """``make_trusted_launcher`` over libcuda's ``cuLaunchKernel`` (``guarded``: its
    keyword arguments ``alive``, ``guards``, ``extras``, ``result``); None where the native
    launcher cannot be made or a parameter's kind is not one it converts."""
    if native_launcher() is None or not trusted_kinds(kinds):
        return None
    try:
        return make_trusted_launcher(_state["cuLaunchKernel"], func, block, shared, kinds, offsets, size,
                                     default_stream, **guarded)
    except Exception:  # noqa: BLE001 - an optimization only: the Python launcher remains
        return None


# -- the entry of kernel[grid](...) ---------------------------------------------------------------------

NO_DEFAULT = object()  # make_dispatcher: a keyword that must be given


def make_dispatcher(fallback: Callable[..., Any], hot: list, n_positional: int, runtime: list[int],
                    keywords: list[str], defaults: list[Any], extras: list[tuple[str, Any]]) -> Callable[..., Any]:
    """A builtin ``dispatch(L, *args, **kwargs)`` that launches through the hot variant
    ``hot[0]`` (a guarded launch, see ``make_trusted_launcher``) when the call has the
    usual shape, and otherwise -- or when the hot variant answers anything but the
    compiled kernel -- returns ``fallback(L, *args, **kwargs)`` (the generated Python
    launch function, which decides everything).

    The usual shapes: ``n_positional`` arguments by position, then some of ``keywords``
    (the trailing constexprs, in order) by position and the others, or some of them, by
    keyword (``defaults[i]`` is the default of ``keywords[i]``, ``NO_DEFAULT`` where it
    has none); anything else (an option, a stream, a keyword for a positional parameter,
    a missing or doubled argument) goes to the fallback as it is. The hot variant is called as
    ``hot(L.g3, None, *(args[i] for i in runtime), *extras)``, each extra being
    ``("pos", i)`` (``args[i]``), ``("kw", i)`` (``keywords[i]``'s value) or
    ``("obj", o)`` (``o`` itself: an option not given)."""
    fn = _capi("vectorcall", "list_item", "tuple_size", "tuple_item", "getattr", "decref", "err_clear", "incref")
    interned = [sys.intern(k) for k in keywords]
    g3_name = sys.intern("g3")
    held = [fallback, hot, interned, defaults, extras, g3_name]

    obj = _obj
    nk = len(keywords)
    body: list[str] = []
    labels = iter(range(1 << 30))
    # the call's shape: L and n_positional arguments by position
    body += ["  %nargs = and i64 %nargsf, 9223372036854775807",
             f"  %npx = sub i64 %nargs, {1 + n_positional}",  # trailing constexprs given by position
             "  %few = icmp slt i64 %npx, 0", f"  %many = icmp sgt i64 %npx, {len(keywords)}",
             "  %shape_bad = or i1 %few, %many",
             "  br i1 %shape_bad, label %fallback, label %hot", "hot:",
             f"  %h = call i8* {fn('list_item')}(i8* {obj(hot)}, i64 0)",
             f"  %h_none = icmp eq i8* %h, {obj(None)}", "  %h_null = icmp eq i8* %h, null",
             "  %h_bad = or i1 %h_none, %h_null", "  br i1 %h_bad, label %fallback, label %kw"]
    # the keywords: each one of ``keywords`` (by identity of the interned name), once
    body += ["kw:"]
    for i in range(nk):
        d = defaults[i]
        k = next(labels)
        body += [f"  %kv{i} = alloca i8*", f"  store i8* {'null' if d is NO_DEFAULT else obj(d)}, i8** %kv{i}",
                 f"  %bypos{k} = icmp sgt i64 %npx, {i}", f"  br i1 %bypos{k}, label %pos{k}, label %next{k}",
                 f"pos{k}:", f"  %pp{k} = getelementptr i8*, i8** %args, i64 {1 + n_positional + i}",
                 f"  %pv{k} = load i8*, i8** %pp{k}", f"  store i8* %pv{k}, i8** %kv{i}", f"  br label %next{k}",
                 f"next{k}:"]
    body += ["  %kwnull = icmp eq i8* %kwnames, null", "  br i1 %kwnull, label %kwdone, label %kwcount", "kwcount:",
             f"  %nkw = call i64 {fn('tuple_size')}(i8* %kwnames)", "  br label %kwloop", "kwloop:",
             "  %ki = phi i64 [0, %kwcount], [%ki_next, %kwnext]",
             "  %kmore = icmp slt i64 %ki, %nkw", "  br i1 %kmore, label %kwbody, label %kwdone", "kwbody:",
             f"  %kname = call i8* {fn('tuple_item')}(i8* %kwnames, i64 %ki)",
             "  %kpos = add i64 %ki, %nargs", "  %kvp = getelementptr i8*, i8** %args, i64 %kpos",
             "  %kval = load i8*, i8** %kvp"]
    for i in range(nk):
        k = next(labels)
        # given by position too: the fallback raises Python's error
        body += [f"  %is{k} = icmp eq i8* %kname, {obj(interned[i])}",
                 f"  br i1 %is{k}, label %dup{k}, label %no{k}", f"dup{k}:", f"  %twice{k} = icmp sgt i64 %npx, {i}",
                 f"  br i1 %twice{k}, label %fallback, label %set{k}",
                 f"set{k}:", f"  store i8* %kval, i8** %kv{i}", "  br label %kwnext", f"no{k}:"]
    body += ["  br label %fallback",  # a keyword it does not take here
             "kwnext:", "  %ki_next = add i64 %ki, 1", "  br label %kwloop", "kwdone:"]
    for i in range(nk):
        body += [f"  %kl{i} = load i8*, i8** %kv{i}", f"  %kmiss{i} = icmp eq i8* %kl{i}, null"]
        k = next(labels)
        body += [f"  br i1 %kmiss{i}, label %fallback, label %have{k}", f"have{k}:"]
    # the hot variant's arguments: g3, None, the runtime arguments, the extras
    count = 2 + len(runtime) + len(extras)
    body += ["  %Lp = getelementptr i8*, i8** %args, i64 0", "  %L = load i8*, i8** %Lp",
             f"  %g3 = call i8* {fn('getattr')}(i8* %L, i8* {obj(g3_name)})", "  %g3null = icmp eq i8* %g3, null",
             "  br i1 %g3null, label %clear, label %call", "call:",
             f"  %stack = alloca [{count} x i8*]"]
    values = ["%g3", obj(None)]
    for i in runtime:
        body += [f"  %rp{i} = getelementptr i8*, i8** %args, i64 {1 + i}", f"  %rv{i} = load i8*, i8** %rp{i}"]
        values.append(f"%rv{i}")
    for j, (kind, x) in enumerate(extras):
        if kind == "pos":
            body += [f"  %ep{j} = getelementptr i8*, i8** %args, i64 {1 + x}", f"  %ev{j} = load i8*, i8** %ep{j}"]
            values.append(f"%ev{j}")
        elif kind == "kw":
            values.append(f"%kl{x}")
        else:
            held.append(x)
            values.append(obj(x))
    for j, v in enumerate(values):
        body += [f"  %sp{j} = getelementptr [{count} x i8*], [{count} x i8*]* %stack, i64 0, i64 {j}",
                 f"  store i8* {v}, i8** %sp{j}"]
    body += [f"  %s0 = getelementptr [{count} x i8*], [{count} x i8*]* %stack, i64 0, i64 0",
             f"  call void {fn('incref')}(i8* %h)",  # held through the call, whatever replaces hot[0]
             f"  %r = call i8* {fn('vectorcall')}(i8* %h, i8** %s0, i64 {count}, i8* null)",
             f"  call void {fn('decref')}(i8* %h)", f"  call void {fn('decref')}(i8* %g3)",
             "  %rnull = icmp eq i8* %r, null", "  br i1 %rnull, label %clear, label %got", "got:",
             f"  %rnone = icmp eq i8* %r, {obj(None)}", "  br i1 %rnone, label %drop, label %rtype", "rtype:",
             # an int is a failed launch's CUresult: the fallback explains it
             "  %rtp = bitcast i8* %r to i8**", "  %rtq = getelementptr i8*, i8** %rtp, i64 1",
             "  %rty = load i8*, i8** %rtq", f"  %rint = icmp eq i8* %rty, {obj(int)}",
             "  br i1 %rint, label %drop, label %done", "done:", "  ret i8* %r",
             "drop:", f"  call void {fn('decref')}(i8* %r)", "  br label %fallback",
             "clear:", f"  call void {fn('err_clear')}()", "  br label %fallback",
             "fallback:",
             f"  %f = call i8* {fn('vectorcall')}(i8* {obj(fallback)}, i8** %args, i64 %nargsf, i8* %kwnames)",
             "  ret i8* %f"]
    text = "\n".join(["define i8* @tlxc_dispatch(i8* %self, i8** %args, i64 %nargsf, i8* %kwnames) {", "entry:",
                      *body, "}", ""])
    return _builtin(text, "tlxc_dispatch", tuple(held), flags=_METH_FASTCALL | _METH_KEYWORDS)
