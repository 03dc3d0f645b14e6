"""``LoadedKernel``: one compiled kernel, ready to launch.

It is what compiled kernels use, and it needs nothing from the compiler: a cubin (or
PTX), the kernel's name, its argument plan and the launch metadata (warps, dynamic
shared memory, cluster dims) are enough, so kernels compiled ahead of time run from a
file (``save`` / ``from_file``) or from the on-disk cache (``to_cache`` / ``from_cache``).

The module is loaded at the first launch (or ``load()``), which then compiles the launch
function of this kernel: grid and stream handling, the argument plan's statements and the
driver call, in one generated Python function (``self.launch``) with every constant bound.
``kernel(grid, args, stream=None)`` and ``kernel[grid](*args)`` call it; a caller that
launches often can keep ``kernel.launch`` itself.

``AmdLoadedKernel`` is the same for an AMDGPU code object (hsaco): the same argument plan
and generated launch function, driven through runtime/hip.py (hip-python) instead of
runtime/driver.py (cuda-python). Each class names the module it drives as ``_api``; both
modules have the same functions (``device``, ``load_module``, ``launch_code``...).
"""

from __future__ import annotations

import ctypes
import json
import operator
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

from . import driver, hip, scratch
from .args import ARG_ERRORS, ArgPlan
from .cache import KernelCache, atomic_write
from .errors import LaunchError
from .ptxas import assemble, find_ptxas, ptx_target
from .spec import LaunchSpec

FORMAT = "tlxc.kernel/1"
_MAX_GRID = (2**31 - 1, 65535, 65535)


def _dims(v: Any, what: str) -> tuple[int, int, int] | None:
    if v is None:
        return None
    t = (int(v),) if isinstance(v, int) else tuple(int(x) for x in v)
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise ValueError(f"{what} must be 1 to 3 positive integers, got {v!r}")
    t = t + (1,) * (3 - len(t))
    return None if t == (1, 1, 1) else t  # type: ignore[return-value]


class LoadedKernel:
    """A compiled kernel: ``binary`` is a cubin (bytes) or PTX (str, JIT-compiled by the
    driver), ``name`` its entry point, ``arg_plan`` an ``ArgPlan`` or the signature to
    make one from (``["*fp32:16", "*fp32:16", "i32"]``); the block has ``num_warps * 32``
    threads and ``shared_bytes`` of dynamic shared memory; ``cluster_dims`` launches
    thread-block clusters (``cuLaunchKernelEx``). ``metadata`` is kept and saved with the
    kernel (constants, arch, tlxc version...); ``metadata["constants"]`` is what a grid
    callable sees beside the arguments, ``metadata["tma_params"]`` gives each host TMA
    descriptor parameter its swizzle (``args.apply_tma_params``), and
    ``metadata["global_scratch"]`` (``{"size": bytes per program, "align": 128}``) makes each
    launch allocate ``grid size x size`` bytes through ``tlxc.set_allocator``'s function and
    pass them as a hidden last parameter (runtime/scratch.py)."""

    _api: Any = driver  # the GPU runtime it launches through (runtime/driver.py or runtime/hip.py)
    _descriptor_fields = False  # host descriptors as CUtensorMaps (ArgPlan's descriptor_fields)

    def __init__(self, binary: bytes | str, name: str, arg_plan: ArgPlan | Sequence[Any] | str,
                 num_warps: int = 4, shared_bytes: int = 0, cluster_dims: Any = None, *,
                 arg_names: Sequence[str] | None = None, cooperative: bool = False,
                 metadata: dict[str, Any] | None = None) -> None:
        if not isinstance(binary, (bytes, bytearray, str)):
            raise TypeError(f"binary must be cubin bytes or PTX text, got {type(binary).__name__}")
        self.binary = binary if isinstance(binary, str) else bytes(binary)
        self.name = name
        self.metadata = dict(metadata or {})
        tma_params = self.metadata.get("tma_params")
        need = self.metadata.get("global_scratch") or {}
        self.scratch_bytes = int(need.get("size", 0))  # per program
        self.scratch_align = int(need.get("align", 128))
        # tl.device_print on AMD: the sites of the records the kernel writes (runtime/device_print.py)
        self.print_sites: list[dict[str, Any]] = list(self.metadata.get("device_print") or ())
        self._prints: Any = None  # its PrintBuffer, made at the first launch
        self.plan = arg_plan if isinstance(arg_plan, ArgPlan) else \
            ArgPlan(arg_plan, arg_names, tma_params, global_scratch=self.scratch_bytes > 0,
                    descriptor_fields=self._descriptor_fields, print_buffer=bool(self.print_sites))
        if self.plan.print_buffer != bool(self.print_sites):
            raise ValueError(f"kernel '{name}': metadata['device_print'] and the argument plan's print buffer "
                             "disagree; make the ArgPlan with print_buffer=True exactly when the kernel prints")
        if self.plan.global_scratch != (self.scratch_bytes > 0):
            raise ValueError(f"kernel '{name}': metadata['global_scratch'] asks for {self.scratch_bytes} bytes per "
                             f"program but the argument plan {'has' if self.plan.global_scratch else 'lacks'} the "
                             "hidden scratch pointer; make the ArgPlan with global_scratch=True exactly when the "
                             "kernel needs scratch")
        for p in self.plan.params:
            if p.kind == "tensordesc" and not p.fields and p.swizzle is None:
                raise ValueError(f"kernel '{name}': parameter '{p.name}' is a host TMA descriptor ({p}) but "
                                 "metadata['tma_params'] gives no swizzle for it; pass the compiled kernel's "
                                 "metadata")
        if not 1 <= int(num_warps) <= 32:
            raise ValueError(f"num_warps must be 1 to 32, got {num_warps}")
        self.num_warps = int(num_warps)
        self.shared_bytes = int(shared_bytes)
        self.cluster_dims = _dims(cluster_dims, "cluster_dims")
        # Triton's num_ctas: the grid counts programs, each a cluster of this many CTAs along x
        self.ctas_per_program = int(self.metadata.get("ctas_per_program", 1))
        self.cooperative = bool(cooperative)
        self.module: Any = None
        self.function: Any = None
        self.device: Any = None  # driver.Device or hip.HipDevice, once loaded
        self._lock = threading.Lock()
        self._retrying = threading.local()
        self._streams: dict[Any, Any] = {}
        self._alive = ctypes.c_int32(0)  # 1 while loaded: the native launch functions read it
        self.launch: Callable[..., None] = self._first_launch
        self.launch_trusted: Callable[..., int] = self._not_trusted

    def __repr__(self) -> str:
        state = "loaded" if self.function is not None else "not loaded"
        return f"<{type(self).__name__} {self.name}({', '.join(self.plan.signature)}) {self.num_warps} warps, {state}>"

    @classmethod
    def from_spec(cls, binary: bytes | str, spec: LaunchSpec) -> "LoadedKernel":
        """The kernel of ``binary`` launched as ``spec`` says (its block, shared memory,
        cluster dims, cooperative launch, TMA parameters and scratch); an AMD spec makes
        an ``AmdLoadedKernel``."""
        if spec.is_amd:
            return AmdLoadedKernel.from_spec(binary, spec)
        if issubclass(cls, AmdLoadedKernel):
            raise ValueError(f"kernel '{spec.name}' was compiled for {spec.arch}, not for an AMD GPU")
        if spec.warp_size != 32:
            raise ValueError(f"kernel '{spec.name}': NVIDIA warps have 32 threads, the spec says {spec.warp_size}")
        return cls(binary, spec.name, list(spec.signature), spec.num_warps, spec.shared_bytes, spec.cluster_dims,
                   arg_names=list(spec.arg_names), cooperative=spec.cooperative, metadata=spec.metadata())

    @property
    def binary_kind(self) -> str:
        return "ptx" if isinstance(self.binary, str) else "cubin"

    @property
    def block(self) -> tuple[int, int, int]:
        return (self.num_warps * 32, 1, 1)

    # -- launching ----------------------------------------------------------------------------------
    def __call__(self, grid: Any, args: Sequence[Any], stream: Any = None) -> None:
        """Launch on ``grid`` (1 to 3 ints, or a callable of the arguments by name) with
        ``args`` on ``stream`` (None: PyTorch's current stream if PyTorch uses CUDA, else
        the default stream)."""
        self.launch(grid, args, stream)

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        launch = self.launch if self.function is not None else self

        def run(*args: Any, stream: Any = None) -> None:
            launch(grid, args, stream)

        return run

    def _first_launch(self, grid: Any, args: Sequence[Any], stream: Any = None) -> None:
        with self._lock:
            if self.function is None:
                self.load()
        self.launch(grid, args, stream)

    def load(self) -> "LoadedKernel":
        """Load the module on the GPU (``NoGPUError`` without one) and build the launch
        function; done by the first launch if not called before."""
        if self.function is not None:
            return self
        api = self._api
        dev = api.device()
        self._check_device(dev)
        module = api.load_module(self.binary)
        try:
            func = api.get_function(module, self.name)
            self._configure(func)
        except BaseException:
            api.unload_module(module)
            raise
        self.module, self.function, self.device = module, func, dev
        self._alive.value = 1
        self.launch = self._compile_launch(dev)
        if self._trusts(dev):
            native = self._native_launch()
            self.launch_trusted = native or self._compile_launch(dev, trusted=True)
            if native is not None:
                self.launch_trusted_source = "native (runtime/native_launch.py, make_trusted_launcher)"
        return self

    def _trusts(self, dev: Any) -> bool:
        """Whether ``launch_trusted`` launches (else it always answers "use ``launch``"):
        with one GPU (a tensor's ``is_cuda`` is then its device check) and no cluster."""
        return self._api is driver and dev.device_count == 1 and self.cluster_dims is None

    @staticmethod
    def _not_trusted(*args: Any) -> int:
        return -1  # launch_trusted's "launch with launch() instead"

    def _check_device(self, dev: Any) -> None:
        """Refuse a device the kernel cannot run on before loading (AMD: another gfx)."""

    def _configure(self, func: Any) -> None:
        """Set what the function needs before its first launch: dynamic shared memory above 48 KiB."""
        if self.shared_bytes:
            driver.set_dynamic_shared(func, self.shared_bytes, self.name)

    def _new_args_slot(self) -> tuple[Any, int]:
        """(argument buffer, what the launch call takes for it: the kernelParams array)."""
        return self.plan.new_slot()

    def guarded_launch(self, guards: list[tuple], extras: tuple, result: Any) -> Callable[..., Any] | None:
        """The native guarded launch of this kernel (``native_launch.make_trusted_launcher``
        with ``guards``): ``hot(g3, stream, *objects, *extras)`` launches when the objects
        pass the guards and answers ``result``; None where it cannot be made (not loaded,
        not a plain launch, a parameter it does not convert). It answers None once the
        kernel is unloaded."""
        if self.function is None or not self._trusts(self.device):
            return None
        return self._native_launch(guards=guards, extras=extras, result=result)

    def _native_launch(self, **guarded: Any) -> Callable[..., Any] | None:
        """The loaded function's native trusted (or, with ``guarded``, guarded) launch,
        which knows nothing of global scratch or cooperative launches: None for those, or
        where the API cannot make one."""
        if self.scratch_bytes or self.cooperative or self.print_sites:
            return None
        return self._api.trusted_launch(self.function, self.block, self.shared_bytes, self.plan,
                                        alive=ctypes.addressof(self._alive), **guarded)

    def unload(self) -> None:
        self._alive.value = 0
        if self.module is not None:
            self._api.unload_module(self.module)
        if self._prints is not None:
            self._prints.free()
        self.module = self.function = None
        self.launch = self._first_launch
        self.launch_trusted = self._not_trusted

    def attribute(self, name: str) -> int:
        """``CU_FUNC_ATTRIBUTE_<name>`` of the loaded function: ``NUM_REGS``,
        ``LOCAL_SIZE_BYTES`` (spills), ``SHARED_SIZE_BYTES`` (static), ``MAX_THREADS_PER_BLOCK``."""
        self.load()
        return self._api.function_attribute(self.function, name)

    def _compile_launch(self, dev: Any, trusted: bool = False) -> Callable[..., Any]:
        """The launch function, generated for this kernel's arguments (``launch_source``).

        ``trusted``: ``launch_trusted(g3, stream, a0, a1, ...)``, for a caller that has
        checked the arguments as ``launch`` would (the fast path of ``kernel[grid]``, by its
        key, and a tensor's ``is_cuda``): ``g3`` one or three positive ints, a pointer
        argument its address. It returns the launch's ``CUresult`` without raising; any nonzero answer
        (-1: an argument it cannot pack) means "nothing was launched: call ``launch``",
        which then explains the error or recovers."""
        api = self._api
        ns: dict[str, Any] = {
            "_ARG_ERRORS": ARG_ERRORS, "_grid": self._grid, "_default_stream": api.default_stream,
            "_modules": sys.modules,
            "_streams": {0: api.stream_object(0)}, "_stream_object": self._stream_object, "_fail": self._fail,
            "_diagnose": self._diagnose,
        }
        if trusted:  # one stream cache for both launch functions
            ns["_streams"] = self._streams
        self._streams = ns["_streams"]
        arg_lines, values = self.plan.emit(ns, dev.ordinal, single_device=dev.device_count == 1, trusted=trusted)
        if self.scratch_bytes:  # kept in ``scr`` until the launch call returns
            ns["_scratch"] = self._scratch
            arg_lines = arg_lines + ["scr, ps = _scratch(gx * gy * gz, stream)"]
            values = values + ["ps"]
        after: list[str] = []
        if self.print_sites:  # the record buffer, reset before and read after the launch
            ns["_print_buffer"] = self._print_buffer
            arg_lines = arg_lines + ["prints = _print_buffer()", "pb = prints.begin()"]
            values = values + ["pb"]
            after = ["if not r:", "    prints.end(st)"]
        call, make_config = api.launch_code(self.function, self.block, self.shared_bytes, self.cluster_dims,
                                            self.cooperative, ns)
        if values or make_config is not None:
            # A pool of argument buffers (and launch configs): a thread takes one (list.pop is
            # atomic), packs, launches and gives it back; a thread launching meanwhile gets a
            # fresh one. Cheaper than a lock, which would also serialize the driver calls.
            def new_slot() -> tuple[Any, int, Any]:
                buf, kp = self._new_args_slot()
                return buf, kp, make_config() if make_config is not None else None

            pool = [new_slot()]
            ns.update(_pop=pool.pop, _push=pool.append, _new_slot=new_slot)
            launch = ["try:", "    slot = _pop()", "except IndexError:", "    slot = _new_slot()", "try:"]
            if values:
                launch.append(f"    _pack_into(slot[0], 0, {', '.join(values)})")
            launch.append("    kp = slot[1]")
            if make_config is not None:
                launch.append("    cfg = slot[2]")
            launch += ["    " + ln for ln in call] + ["finally:", "    _push(slot)"]
        else:
            launch = ["kp = 0"] + call
        if trusted:
            n = len(self.plan.params)
            src = [f"def launch_trusted(g3, stream{''.join(f', a{i}' for i in range(n))}):",
                   "    if len(g3) == 3:", "        gx, gy, gz = g3",
                   "    else:", "        gx, = g3", "        gy = gz = 1"]
            if self.ctas_per_program != 1:
                src.append(f"    gx *= {self.ctas_per_program}")
            tail = ["    except _ARG_ERRORS:", "        return -1"] + ["    " + ln for ln in after] + ["    return r"]
        else:
            src = ["def launch(grid, args, stream=None):"]
            if self.cluster_dims is None:
                # the usual grids, 1- and 3-tuples, are not checked here: a bad one fails in the
                # driver call, and _fail / _diagnose then explain it
                src += ["    if type(grid) is tuple and len(grid) == 1:", "        gx = grid[0]", "        gy = gz = 1",
                        "    elif type(grid) is tuple and len(grid) == 3:", "        gx, gy, gz = grid",
                        "    else:", "        g = _grid(grid, args)", "        if g is None:", "            return",
                        "        gx, gy, gz = g"]
            else:  # cluster launches always check that the grid holds whole clusters
                src += ["    g = _grid(grid, args)", "    if g is None:", "        return", "    gx, gy, gz = g"]
            tail = ["    except _ARG_ERRORS:", "        _diagnose(grid, args)", "        raise",
                    "    if r:", "        _fail(r, gx, gy, gz, grid, args, stream)"] + ["    " + ln for ln in after]
        src += ["    if stream is None:",  # PyTorch's current stream once it is imported, else the default
                "        stream = _default_stream() if 'torch' in _modules else 0",
                "    try:", "        st = _streams[stream]", "    except (KeyError, TypeError):",
                "        st = _stream_object(stream)",
                "    try:"]
        src += ["        " + ln for ln in arg_lines + launch] + tail
        text = "\n".join(src) + "\n"
        if trusted:
            self.launch_trusted_source = text
        else:
            self.launch_source = text
        name = "launch_trusted" if trusted else "launch"
        exec(compile(text, f"<tlxc {'trusted ' if trusted else ''}launcher {self.name}>", "exec"), ns)
        return ns[name]

    def _scratch(self, programs: int, stream: Any) -> tuple[Any, int]:
        """The global scratch of a launch of ``programs`` blocks: (what to keep alive, address)."""
        if programs <= 0:
            return None, 0  # nothing runs
        handle = stream if type(stream) is int else self._api.stream_handle(stream)
        return scratch.allocate(programs * self.scratch_bytes, self.scratch_align, handle, self.name)

    def _print_buffer(self) -> Any:
        """The kernel's device_print record buffer (runtime/device_print.py)."""
        if self._prints is None:
            from .device_print import PrintBuffer

            self._prints = PrintBuffer(self._api, self.print_sites, self.name)
        return self._prints

    def _stream_object(self, stream: Any) -> Any:
        obj = self._api.stream_object(self._api.stream_handle(stream))
        if type(stream) is int and len(self._streams) < 64:
            self._streams[stream] = obj
        return obj

    def _diagnose(self, grid: Any, args: Sequence[Any]) -> None:
        """Raise the LaunchError that explains a failed launch, if the grid or an argument is to blame."""
        self._grid(grid, args)
        self.plan.diagnose(args, self.device.ordinal if self.device else 0)

    def _grid(self, grid: Any, args: Sequence[Any]) -> tuple[int, int, int] | None:
        """The slow path of grid handling: any form, checked; None for an empty grid."""
        if callable(grid):
            meta = dict(self.metadata.get("constants", {}))
            meta.update(zip(self.plan.names, args))
            grid = grid(meta)
        if not isinstance(grid, (tuple, list)):
            grid = (grid,)
        if not 1 <= len(grid) <= 3:
            raise LaunchError(f"the grid must be 1 to 3 integers, got {grid!r}")
        dims = []
        for i, g in enumerate(grid):
            try:
                dims.append(operator.index(g))
            except TypeError:
                raise LaunchError(f"grid dimension {g!r} is not an integer") from None
            if dims[-1] < 0 or dims[-1] > _MAX_GRID[i]:
                raise LaunchError(f"grid dimension {i} is {dims[-1]}; it must be from 0 to {_MAX_GRID[i]}")
        dims += [1] * (3 - len(dims))
        if 0 in dims:
            return None  # nothing to run, as in Triton
        dims[0] *= self.ctas_per_program
        if dims[0] > _MAX_GRID[0]:
            raise LaunchError(f"grid dimension 0 is {dims[0] // self.ctas_per_program} programs of "
                              f"{self.ctas_per_program} CTAs (num_ctas); at most {_MAX_GRID[0]} CTAs fit")
        if self.cluster_dims is not None:
            for i, (g, c) in enumerate(zip(dims, self.cluster_dims)):
                if g % c:
                    raise LaunchError(f"grid {tuple(dims)} is not a multiple of the cluster dims {self.cluster_dims} "
                                      f"(dimension {i}); the grid counts blocks, so it must hold whole clusters")
        return dims[0], dims[1], dims[2]

    def _fail(self, r: int, gx: int, gy: int, gz: int, grid: Any, args: Sequence[Any], stream: Any) -> None:
        """A launch returned ``r``: explain it, or recover (an empty grid, a thread without
        the runtime's context)."""
        r = int(r)
        if r == driver.CUDA_ERROR_INVALID_VALUE and self._grid(grid, args) is None:
            return  # an empty grid reached the driver through the fast path: nothing to run
        if r == driver.CUDA_ERROR_INVALID_CONTEXT and not getattr(self._retrying, "on", False):
            driver.make_current()  # a thread that has not used the runtime before has no current context
            self._retrying.on = True
            try:
                self.launch(grid, args, stream)
                return
            finally:
                self._retrying.on = False
        s = driver.stream_handle(stream)
        what = (f"launching kernel '{self.name}' with grid ({gx}, {gy}, {gz}), block {self.block}, "
                f"{self.shared_bytes} bytes of dynamic shared memory"
                + (f", cluster {self.cluster_dims}" if self.cluster_dims else "") + f", on stream 0x{s:x}")
        name, _ = driver.error_name(r)
        if name == "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES":
            regs = driver.function_attribute(self.function, "NUM_REGS")
            what += (f"; the kernel uses {regs} registers per thread, too many for {self.block[0]} threads: "
                     "launch it with fewer warps or compile it with a register limit (maxnreg)")
        call = "cuLaunchKernelEx" if (self.cluster_dims or self.cooperative) else "cuLaunchKernel"
        raise driver.cuda_error(call, r, what)

    # -- files and the cache ------------------------------------------------------------------------
    def to_metadata(self) -> dict[str, Any]:
        return {"format": FORMAT, "name": self.name, "signature": self.plan.signature,
                "arg_names": list(self.plan.names),
                "num_warps": self.num_warps, "shared_bytes": self.shared_bytes,
                "cluster_dims": list(self.cluster_dims) if self.cluster_dims else None,
                "cooperative": self.cooperative, "binary": self.binary_kind, "metadata": self.metadata}

    @classmethod
    def from_metadata(cls, meta: dict[str, Any], binary: bytes | str) -> "LoadedKernel":
        if meta.get("format") != FORMAT:
            raise ValueError(f"not a tlxc kernel description (format {meta.get('format')!r}, expected {FORMAT!r})")
        if meta.get("binary") == "hsaco" and not issubclass(cls, AmdLoadedKernel):
            return AmdLoadedKernel.from_metadata(meta, binary)
        return cls(binary, meta["name"], meta["signature"], meta["num_warps"], meta["shared_bytes"],
                   meta.get("cluster_dims"), arg_names=meta.get("arg_names"),
                   cooperative=meta.get("cooperative", False), metadata=meta.get("metadata"))

    def save(self, path: str | Path) -> Path:
        """Write ``<path>.json`` and ``<path>.cubin`` (or ``.ptx``, ``.hsaco``) beside it; returns the
        JSON's path (what ``from_file`` takes)."""
        p = Path(path)
        if p.suffix == ".json":
            p = p.with_suffix("")
        p.parent.mkdir(parents=True, exist_ok=True)
        bin_path = p.parent / (p.name + "." + self.binary_kind)
        data = self.binary.encode() if isinstance(self.binary, str) else self.binary
        atomic_write(bin_path, data)
        meta = self.to_metadata()
        meta["binary_file"] = bin_path.name
        json_path = p.parent / (p.name + ".json")
        atomic_write(json_path, json.dumps(meta, indent=1).encode())
        return json_path

    @classmethod
    def from_file(cls, path: str | Path) -> "LoadedKernel":
        p = Path(path)
        if p.suffix != ".json":
            p = p.parent / (p.name + ".json")
        meta = json.loads(p.read_text())
        data = (p.parent / meta["binary_file"]).read_bytes()
        return cls.from_metadata(meta, data.decode() if meta.get("binary") == "ptx" else data)

    def to_cache(self, cache: KernelCache, key: str) -> None:
        data = self.binary.encode() if isinstance(self.binary, str) else self.binary
        cache.put(key, self.to_metadata(), {"kernel." + self.binary_kind: data})

    @classmethod
    def from_cache(cls, cache: KernelCache, key: str) -> "LoadedKernel | None":
        entry = cache.get(key)
        if entry is None or entry.metadata.get("format") != FORMAT:
            return None
        kind = entry.metadata.get("binary")
        data = entry.blobs.get(f"kernel.{kind}")
        if data is None:
            return None
        return cls.from_metadata(entry.metadata, data.decode() if kind == "ptx" else data)

    @classmethod
    def from_ptx(cls, ptx: str, name: str, arg_plan: ArgPlan | Sequence[Any] | str, *args: Any,
                 use_ptxas: bool | None = None, arch: str | None = None, **kwargs: Any) -> "LoadedKernel":
        """A kernel from PTX text: assembled by ptxas when one is found (or ``use_ptxas``
        is True), else handed to the driver's JIT compiler at load."""
        if use_ptxas is None:
            use_ptxas = find_ptxas() is not None
        binary: bytes | str = assemble(ptx, arch or ptx_target(ptx)) if use_ptxas else ptx
        return cls(binary, name, arg_plan, *args, **kwargs)


class AmdLoadedKernel(LoadedKernel):
    """A kernel compiled for an AMD GPU (``gfx942``, ``gfx950``, ``gfx1250``): ``binary`` is
    its code object (hsaco, ``compiled.asm["hsaco"]``), launched through hip-python
    (runtime/hip.py) with ``hipModuleLaunchKernel``. The block has ``num_warps *
    wave_size`` work-items; the kernel's LDS is static (in the code object), so launches
    ask for no dynamic LDS. The arguments are packed by the same ``ArgPlan`` as for CUDA:
    its buffer is the explicit kernarg segment (runtime/hip.py explains the layout).

    ``metadata`` as for ``LoadedKernel``, and: ``"arch"``, the gfx processor it was compiled
    for, which must be the device's; ``"kernarg"``, the layout of the code object's
    arguments (``hip.kernarg_layout(asm["amdgcn"], name).to_json()``), checked against the
    argument plan here so that a wrong signature is refused before any launch."""

    _api = hip
    _descriptor_fields = True  # no TMA: host descriptors are passed as their fields

    def __init__(self, binary: bytes, name: str, arg_plan: ArgPlan | Sequence[Any] | str, num_warps: int = 4,
                 wave_size: int = 64, *, arg_names: Sequence[str] | None = None,
                 metadata: dict[str, Any] | None = None) -> None:
        if not isinstance(binary, (bytes, bytearray)):
            raise TypeError(f"binary must be the bytes of an AMDGPU code object (hsaco), got {type(binary).__name__}")
        if wave_size not in (32, 64):
            raise ValueError(f"wave_size must be 32 or 64, got {wave_size}")
        super().__init__(bytes(binary), name, arg_plan, num_warps, 0, arg_names=arg_names, metadata=metadata)
        self.wave_size = int(wave_size)
        self._kernarg_slots: list[Any] = []  # what the ``extra`` addresses of the launches point to
        layout = self.metadata.get("kernarg")
        if layout is not None:
            hip.check_kernarg_layout(self.plan, hip.KernargLayout.from_json(layout), name)

    @classmethod
    def from_spec(cls, binary: bytes | str, spec: LaunchSpec) -> "AmdLoadedKernel":
        """The code object ``binary`` launched as ``spec`` says. Clusters and cooperative
        launches are refused: runtime/hip.py launches neither."""
        if not spec.is_amd:
            raise ValueError(f"kernel '{spec.name}' was compiled for {spec.arch}, not for an AMD GPU")
        if spec.cluster_dims is not None or spec.cooperative:
            raise LaunchError(f"kernel '{spec.name}': clusters and cooperative launches are not supported on AMD "
                              "GPUs by tlxc")
        data = binary.encode() if isinstance(binary, str) else binary
        return cls(data, spec.name, list(spec.signature), spec.num_warps, spec.warp_size,
                   arg_names=list(spec.arg_names), metadata=spec.metadata())

    @property
    def binary_kind(self) -> str:
        return "hsaco"

    @property
    def block(self) -> tuple[int, int, int]:
        return (self.num_warps * self.wave_size, 1, 1)

    def _check_device(self, dev: Any) -> None:
        arch = self.metadata.get("arch")
        if arch and arch != dev.arch:
            raise LaunchError(f"kernel '{self.name}' was compiled for {arch}, but this GPU ({dev.name}) is "
                              f"{dev.gcn_arch_name}; compile it for arch='{dev.arch}'")

    def _configure(self, func: Any) -> None:
        pass  # static LDS only: nothing to opt in to

    def _new_args_slot(self) -> tuple[Any, int]:
        return hip.new_slot(self.plan, self._kernarg_slots)

    def _fail(self, r: int, gx: int, gy: int, gz: int, grid: Any, args: Sequence[Any], stream: Any) -> None:
        r = int(r)
        if self._grid(grid, args) is None:
            return  # an empty grid reached HIP through the fast path: nothing to run
        if not getattr(self._retrying, "on", False) and self.device is not None and \
                int(hip.call("hipGetDevice")) != self.device.ordinal:
            hip.make_current()  # HIP's current device is per thread: this one had another
            self._retrying.on = True
            try:
                self.launch(grid, args, stream)
                return
            finally:
                self._retrying.on = False
        s = hip.stream_handle(stream)
        what = (f"launching kernel '{self.name}' with grid ({gx}, {gy}, {gz}), block {self.block}, "
                f"{self.metadata.get('shared', 0)} bytes of static LDS, on stream 0x{s:x}")
        raise hip.hip_error("hipModuleLaunchKernel", r, what)

    def to_metadata(self) -> dict[str, Any]:
        meta = super().to_metadata()
        meta["wave_size"] = self.wave_size
        return meta

    @classmethod
    def from_metadata(cls, meta: dict[str, Any], binary: bytes | str) -> "LoadedKernel":
        if meta.get("format") != FORMAT:
            raise ValueError(f"not a tlxc kernel description (format {meta.get('format')!r}, expected {FORMAT!r})")
        if meta.get("binary") != "hsaco":
            raise ValueError(f"kernel '{meta.get('name')}' is a {meta.get('binary')} kernel, not an AMDGPU code "
                             "object; load it with LoadedKernel")
        data = binary.encode() if isinstance(binary, str) else binary
        return cls(data, meta["name"], meta["signature"], meta["num_warps"], meta.get("wave_size", 64),
                   arg_names=meta.get("arg_names"), metadata=meta.get("metadata"))
