"""``LaunchSpec``: what the code generator tells the runtime about a compiled kernel --
everything a launch needs besides the binary and the arguments.

It is plain data, made by the compile driver (``CompiledKernel.launch_spec``) and taken
by the runtime's loaders (``LoadedKernel.from_spec``, ``AmdLoadedKernel.from_spec``), so
that neither side guesses what the other meant: the cluster dims of a launch, for
instance, travel from the options of the compile to ``cuLaunchKernelEx`` in this object.
This module imports nothing from tlxc: kernels compiled ahead of time carry a spec (its
``to_json``) without the compiler.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# The alignment of a kernel's global scratch when its metadata does not say (the PTX code
# generator's, which asks for 128-byte aligned scratch).
DEFAULT_SCRATCH_ALIGN = 128


@dataclass(frozen=True)
class LaunchSpec:
    """One compiled kernel's launch facts.

    ``signature`` holds the runtime parameters' types in Triton's spelling
    (``"*fp32:16"``, ``"i32"``, ``"tensordesc<fp16[64,64]>"``) and ``arg_names`` their names;
    ``params`` the parameter types of the binary as the code generator wrote them (PTX
    ``u64``/``u32``/``tensormap``..., AMDGPU ``ptr``/``i32``...), hidden ones included.
    A block has ``num_warps * warp_size`` threads and ``shared_bytes`` of dynamic shared
    memory (AMD: the static LDS, which needs no launch request). ``cluster_dims``: the
    blocks of the grid are grouped in clusters of this shape (None: no clusters);
    ``cooperative``: a cooperative launch (grid-wide synchronization). ``tma_params``:
    per host TMA descriptor parameter its index, block shape, element type and swizzle.
    ``scratch_bytes``: global scratch per program (0: none), aligned to
    ``scratch_align``; the runtime allocates it per launch and passes it last.
    ``kernarg``: AMD's kernel-argument layout from the code object's metadata.
    ``ctas_per_program``: Triton's ``num_ctas`` -- the grid counts programs and each is a
    cluster of this many CTAs along x (``cluster_dims`` is then ``(n, 1, 1)``), so the
    launch's x is the grid's times ``n``. ``device_print``: an AMD kernel's print sites
    (runtime/device_print.py); the runtime then passes the record buffer last."""

    name: str
    arch: str
    signature: tuple[str, ...]
    arg_names: tuple[str, ...]
    num_warps: int
    warp_size: int = 32
    shared_bytes: int = 0
    cluster_dims: tuple[int, int, int] | None = None
    cooperative: bool = False
    params: tuple[str, ...] = ()
    tma_params: tuple[dict[str, Any], ...] = ()
    scratch_bytes: int = 0
    scratch_align: int = DEFAULT_SCRATCH_ALIGN
    kernarg: dict[str, Any] | None = field(default=None, compare=False)
    ctas_per_program: int = 1
    device_print: tuple[dict[str, Any], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if self.cluster_dims is not None:
            dims = tuple(int(d) for d in self.cluster_dims)
            if len(dims) != 3 or any(d < 1 for d in dims):
                raise ValueError(f"LaunchSpec.cluster_dims must be three positive ints, got {self.cluster_dims!r}")
            # (1, 1, 1) is no cluster: keep one spelling, so that a plain launch stays plain
            object.__setattr__(self, "cluster_dims", None if dims == (1, 1, 1) else dims)
        n = self.ctas_per_program
        if n != 1 and self.cluster_dims != (n, 1, 1):
            raise ValueError(f"LaunchSpec.ctas_per_program={n} needs cluster_dims ({n}, 1, 1), got {self.cluster_dims}")

    @property
    def block(self) -> tuple[int, int, int]:
        return (self.num_warps * self.warp_size, 1, 1)

    @property
    def is_amd(self) -> bool:
        return self.arch.startswith("gfx")

    def metadata(self) -> dict[str, Any]:
        """The loaders' ``metadata`` dict for this spec (what ``LoadedKernel`` keeps and saves)."""
        meta: dict[str, Any] = {"arch": self.arch, "tma_params": [dict(t) for t in self.tma_params],
                                "global_scratch": {"size": self.scratch_bytes, "align": self.scratch_align}}
        if self.ctas_per_program != 1:
            meta["ctas_per_program"] = self.ctas_per_program
        if self.is_amd:
            meta["shared"] = self.shared_bytes
            if self.kernarg is not None:
                meta["kernarg"] = self.kernarg
            if self.device_print:
                meta["device_print"] = [dict(s) for s in self.device_print]
        return meta

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "LaunchSpec":
        d = dict(data)
        for k in ("signature", "arg_names", "params"):
            d[k] = tuple(d.get(k) or ())
        d["tma_params"] = tuple(dict(t) for t in d.get("tma_params") or ())
        d["device_print"] = tuple(dict(t) for t in d.get("device_print") or ())
        if d.get("cluster_dims") is not None:
            d["cluster_dims"] = tuple(d["cluster_dims"])
        return cls(**d)
