"""The AMD path of the runtime on the CPU: ``AmdLoadedKernel`` and runtime/hip.py driven
through ``fake_hip`` (tests/conftest.py), a stand-in for hip-python that records the code
objects loaded and each ``hipModuleLaunchKernel`` with the kernarg bytes it was given.

The kernarg buffer is checked byte for byte against the code object's own metadata: each
kernel is compiled for gfx targets, the ``.args`` offsets and sizes are read from the
``.amdgpu_metadata`` note of ``asm["amdgcn"]``, and every argument's bytes must sit there."""

from __future__ import annotations

import functools
import struct
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import rt_amd_kernels
from tlxc.runtime import (
    AmdLoadedKernel,
    ArgPlan,
    HipError,
    KernargLayout,
    KernelCache,
    LaunchError,
    LoadedKernel,
    NoGPUError,
    kernarg_layout,
)
from tlxc.runtime import hip as hip_runtime

from tlxc import CompilationError

# these tests drive launches through a fake hip-python: not meaningful with the real GPU harness
pytestmark = pytest.mark.interpreter_only

# (kernel, signature, constants, arguments): pointers are raw addresses, 16-byte aligned where the signature says
CASES = {
    "vadd": ("*fp32:16,*fp32:16,*fp32:16,i32", {"BLOCK": 256}, (0x7F0000001000, 0x7F0000002000, 0x7F0000003000, 1000)),
    "mixed": ("fp32,i1,*fp32:16,fp16,i32,i64,fp64,*fp32", {"BLOCK": 256},
              (1.5, True, 0x7F0000004000, -2.25, -7, -(1 << 40), 3.125, 0x7F0000005004)),
    "many": ("i8,*fp16,i16,bf16,u64,fp16,*fp32", {"BLOCK": 64},
             (-5, 0x7F0000006002, 300, 1.5, (1 << 64) - 2, 0.5, 0x7F0000007000)),
}
# the bytes each argument must have in the kernarg segment (little-endian, by its signature type)
ENCODE = {"ptr": "<Q", "i1": "<?", "i8": "<b", "i16": "<h", "i32": "<i", "i64": "<q", "u64": "<Q", "fp16": "<e",
          "fp32": "<f", "fp64": "<d"}


def expected_bytes(entry: str, value: Any) -> bytes:
    kind = "ptr" if entry.startswith("*") else entry.split(":")[0]
    if kind == "bf16":
        return struct.pack("<H", struct.unpack("<I", struct.pack("<f", value))[0] >> 16)  # 1.5 is exact
    return struct.pack(ENCODE[kind], value)


@functools.cache
def compiled(name: str, arch: str = "gfx942", num_warps: int = 4) -> Any:
    signature, constants, _ = CASES[name]
    ck = getattr(rt_amd_kernels, name).compile(signature=signature, constants=constants, arch=arch,
                                               num_warps=num_warps)
    try:
        ck.asm["hsaco"]
    except CompilationError as e:
        if "TLXC-TOOL-001" not in str(e):
            raise
        pytest.skip(str(e).splitlines()[0])  # no ld.lld new enough here (CI installs one)
    return ck


def amd_kernel(ck: Any, **metadata: Any) -> AmdLoadedKernel:
    name = ck.metadata["name"]
    meta = {"arch": ck.options.arch, "kernarg": kernarg_layout(ck.asm["amdgcn"], name).to_json(), **metadata}
    return AmdLoadedKernel(ck.asm["hsaco"], name, [str(s) for s in ck.signature.values()], ck.metadata["num_warps"],
                           ck.metadata["wave_size"], arg_names=list(ck.signature), metadata=meta)


# -- the kernarg layout --------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_plan_matches_code_object_metadata(name: str, arch: str) -> None:
    """The argument plan's offsets and sizes are the code object's ``.args``: each
    argument at its natural alignment in declaration order, as LLVM lays them out."""
    ck = compiled(name, arch)
    layout = kernarg_layout(ck.asm["amdgcn"], ck.metadata["name"])
    plan = ArgPlan([str(s) for s in ck.signature.values()])
    assert layout.offsets == plan.offsets and layout.sizes == tuple(p.size for p in plan.params)
    assert set(layout.kinds) <= {"by_value", "global_buffer"}
    assert layout.segment_size >= plan.size
    hip_runtime.check_kernarg_layout(plan, layout, name)


def test_padding_in_the_layout() -> None:
    """The cases where natural alignment leaves holes: i1 then a pointer, fp16 then i32, i32 then i64."""
    layout = kernarg_layout(compiled("mixed").asm["amdgcn"], "mixed")
    assert layout.offsets == (0, 4, 8, 16, 20, 24, 32, 40) and layout.sizes == (4, 1, 8, 2, 4, 8, 8, 8)
    layout = kernarg_layout(compiled("many").asm["amdgcn"], "many")
    assert layout.offsets == (0, 8, 16, 18, 24, 32, 40) and layout.sizes == (1, 8, 2, 2, 8, 2, 8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernarg_bytes(fake_hip: Any, name: str) -> None:
    """What hipModuleLaunchKernel receives through ``extra``: every argument's value at
    the code object's offset for it."""
    ck = compiled(name)
    signature, _, args = CASES[name]
    k = amd_kernel(ck)
    k((5, 2), args, stream=0x1234)
    (launch,) = fake_hip.launches
    data = launch["kernargs"]
    layout = kernarg_layout(ck.asm["amdgcn"], name)
    assert len(data) == layout.offsets[-1] + layout.sizes[-1]
    for entry, value, off, size in zip(signature.split(","), args, layout.offsets, layout.sizes):
        assert data[off: off + size] == expected_bytes(entry, value), (entry, value, off)
    assert launch["grid"] == (5, 2, 1) and launch["stream"] == 0x1234
    assert launch["block"] == (4 * 64, 1, 1) and launch["shared"] == 0  # LDS is static, in the code object
    assert fake_hip.loaded == [ck.asm["hsaco"]] and fake_hip.functions == [name]


def test_block_is_num_warps_times_wave_size(fake_hip: Any) -> None:
    ck = compiled("vadd", "gfx942", num_warps=8)
    k = amd_kernel(ck)
    assert k.block == (512, 1, 1)
    k32 = AmdLoadedKernel(b"\x7fELF", "vadd", CASES["vadd"][0], num_warps=8, wave_size=32)
    assert k32.block == (256, 1, 1)
    k((1,), CASES["vadd"][2])
    assert fake_hip.launches[0]["block"] == (512, 1, 1)


def test_launches_reuse_buffers_and_take_streams(fake_hip: Any) -> None:
    ck = compiled("vadd")
    k = amd_kernel(ck)
    x, y, out, _ = CASES["vadd"][2]
    for n in (1, 2, 3):
        k[(n,)](x, y, out, n)

    class TorchLikeStream:
        cuda_stream = 0x77  # torch.cuda.Stream on ROCm: a hipStream_t address

    k((1,), (x, y, out, 9), stream=TorchLikeStream())
    assert [struct.unpack_from("<i", launch["kernargs"], 24)[0] for launch in fake_hip.launches] == [1, 2, 3, 9]
    assert [launch["stream"] for launch in fake_hip.launches] == [None, None, None, 0x77]
    assert len(k._kernarg_slots) == 1  # one buffer, filled anew by each launch
    k((0,), (x, y, out, 9))  # an empty grid runs nothing
    assert len(fake_hip.launches) == 4


def test_argument_errors_are_the_same_as_for_cuda(fake_hip: Any) -> None:
    k = amd_kernel(compiled("vadd"))
    x, y, out, _ = CASES["vadd"][2]
    with pytest.raises(LaunchError, match="argument 3 'n' .*out of range for i32"):
        k((1,), (x, y, out, 2**31))
    with pytest.raises(LaunchError, match="argument 0 'x' .*not 16-byte aligned"):
        k((1,), (x + 4, y, out, 1))
    with pytest.raises(LaunchError, match="host memory, not on the GPU"):
        k((1,), (np.ones(4, np.float32), y, out, 1))
    with pytest.raises(LaunchError, match="takes 4 arguments"):
        k((1,), (x, y, out))
    assert fake_hip.launches == []


def test_a_signature_that_does_not_match_the_code_object_is_refused() -> None:
    ck = compiled("mixed")
    layout = kernarg_layout(ck.asm["amdgcn"], "mixed").to_json()
    wrong = "fp32,i32,*fp32:16,fp16,i32,i64,fp64,*fp32"  # i32 where the kernel takes a bool (i8)
    with pytest.raises(ValueError, match=r"does not match the kernarg layout(.|\n)*flag \(i32\): packed at 4 \(4 "
                                         r"bytes\), code object 4 \(1 bytes\)"):
        AmdLoadedKernel(ck.asm["hsaco"], "mixed", wrong, arg_names=list(ck.signature), metadata={"kernarg": layout})


def test_metadata_reader() -> None:
    """Several kernels in one note, hidden arguments (left out), quoted names."""
    note = textwrap.dedent("""
        \t.amdgpu_metadata
        ---
        amdhsa.kernels:
          - .args:
              - .address_space:  global
                .name:           out
                .offset:         0
                .size:           8
                .value_kind:     global_buffer
            .kernarg_segment_align: 8
            .kernarg_segment_size: 8
            .name:           first
          - .agpr_count:     0
            .args:
              - .name:           !str '.1'
                .offset:         0
                .size:           2
                .value_kind:     by_value
              - .offset:         8
                .size:           8
                .value_kind:     global_buffer
              - .offset:         16
                .size:           4
                .value_kind:     hidden_block_count_x
            .kernarg_segment_align: 8
            .kernarg_segment_size: 272
            .name:           second
            .symbol:         second.kd
        amdhsa.target:   amdgcn-amd-amdhsa--gfx942
        ...
        \t.end_amdgpu_metadata
    """)
    assert kernarg_layout(note, "first") == KernargLayout((0,), (8,), ("global_buffer",), 8, 8)
    assert kernarg_layout(note, "second") == KernargLayout((0, 8), (2, 8), ("by_value", "global_buffer"), 272, 8)
    with pytest.raises(ValueError, match=r"no kernel 'third' \(kernels: \['first', 'second'\]\)"):
        kernarg_layout(note, "third")
    with pytest.raises(ValueError, match="no .amdgpu_metadata"):
        kernarg_layout("s_endpgm", "first")


# -- devices and errors ----------------------------------------------------------------------------------

def test_device_and_arch(fake_hip: Any) -> None:
    from tlxc.runtime import gpu_arch

    dev = hip_runtime.device()
    assert dev.arch == "gfx942" and dev.gcn_arch_name == "gfx942:sramecc+:xnack-"
    assert dev.name == "Fake AMD Instinct" and dev.wave_size == 64
    assert gpu_arch() == "gfx942"  # no NVIDIA GPU here (the fixture), so HIP's


def test_an_nvidia_gpu_comes_first(fake_hip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """With both, launches target the NVIDIA GPU as they always have, and HIP is not started."""
    from tlxc.runtime import driver, gpu_arch

    dev = driver.Device(0, 0, 0, "Fake GPU", (9, 0), 132, 232448)
    monkeypatch.setattr(driver, "device", lambda: dev)
    assert gpu_arch() == "sm_90a" and hip_runtime._hip is None and hip_runtime._device is None


def test_a_kernel_for_another_gfx_is_refused(fake_hip: Any) -> None:
    k = amd_kernel(compiled("vadd", "gfx950"))
    with pytest.raises(LaunchError, match=r"kernel 'vadd' was compiled for gfx950, but this GPU \(Fake AMD "
                                          r"Instinct\) is gfx942:sramecc\+:xnack-; compile it for arch='gfx942'"):
        k((1,), CASES["vadd"][2])
    assert fake_hip.loaded == []


def test_failed_launch_is_explained(fake_hip: Any) -> None:
    k = amd_kernel(compiled("vadd"))
    fake_hip.results = [719]
    with pytest.raises(HipError, match=r"hipModuleLaunchKernel failed: hipErrorLaunchFailure \(unspecified launch "
                                       r"failure\)\nlaunching kernel 'vadd' with grid \(3, 1, 1\), "
                                       r"block \(256, 1, 1\)"):
        k((3,), CASES["vadd"][2])


def test_another_thread_device_is_made_current(fake_hip: Any) -> None:
    """HIP's current device is per thread: a launch from a thread whose current device is
    another one is retried after making the kernel's device current."""
    k = amd_kernel(compiled("vadd"))
    k((1,), CASES["vadd"][2])
    fake_hip.current_device = 1
    fake_hip.results = [98]  # hipErrorInvalidDeviceFunction, as HIP reports it
    k((2,), CASES["vadd"][2])
    assert fake_hip.current_device == 0
    assert [launch["grid"][0] for launch in fake_hip.launches] == [1, 2, 2]  # the failed launch, then the retry


def test_no_hip_python_is_a_clear_error_at_launch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "hip", None)  # as if hip-python were not installed
    for name in ("_hip", "_device", "_no_gpu"):
        monkeypatch.setattr(hip_runtime, name, None)
    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text("6.2.4-120\n")
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    k = AmdLoadedKernel(b"\x7fELF", "k", ["*fp32:16", "i32"])  # making it needs nothing
    with pytest.raises(NoGPUError) as e:
        k((1,), (None, 1))
    msg = str(e.value)
    assert msg.startswith("cannot use an AMD GPU: the HIP bindings (hip-python) are not installed")
    assert "ROCm 6.2" in msg and "pip install 'hip-python~=6.2.0'" in msg and "tlxc[amd]" in msg
    assert "kernel.interpret[grid]" in msg
    assert not hip_runtime.gpu_available() and "hip-python" in hip_runtime.no_gpu_reason()


def test_no_rocm_device_is_a_clear_error(fake_hip: Any) -> None:
    fake_hip.init_result = 100
    with pytest.raises(NoGPUError, match=r"no AMD GPU is visible \(hipInit returned hipErrorNoDevice: no "
                                         r"ROCm-capable device is detected\)"):
        AmdLoadedKernel(b"\x7fELF", "k", [])((1,), ())


def test_import_does_not_import_hip() -> None:
    code = """
        import sys
        import tlxc
        import tlxc.runtime
        from tlxc.runtime import AmdLoadedKernel, gpu_arch, hip, kernarg_layout
        AmdLoadedKernel(b"\\x7fELF", "k", ["*fp32:16", "i32"], wave_size=32)
        import rt_amd_kernels
        ck = rt_amd_kernels.vadd.compile("*fp32:16,*fp32:16,*fp32:16,i32", {"BLOCK": 64}, arch="gfx942")
        kernarg_layout(ck.asm["amdgcn"], "vadd")
        print(sorted(m for m in sys.modules if m == "hip" or m.startswith(("hip.", "rocm", "cuda"))))
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=Path(__file__).parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# -- files and the cache -----------------------------------------------------------------------------------

def test_cache_round_trip_of_an_hsaco_kernel(fake_hip: Any, tmp_path: Path) -> None:
    ck = compiled("mixed")
    k = amd_kernel(ck, shared=ck.metadata["shared"])
    cache = KernelCache(tmp_path)
    key = KernelCache.key(source="mixed", arch="gfx942")
    k.to_cache(cache, key)
    entry = cache.get(key)
    assert set(entry.blobs) == {"kernel.hsaco"} and entry.blobs["kernel.hsaco"] == ck.asm["hsaco"]
    assert entry.metadata["binary"] == "hsaco" and entry.metadata["wave_size"] == 64
    back = LoadedKernel.from_cache(cache, key)  # the base class gives the AMD kernel for an hsaco entry
    assert type(back) is AmdLoadedKernel
    assert (back.binary, back.name, back.plan.signature, back.block, back.metadata) == \
        (k.binary, k.name, k.plan.signature, k.block, k.metadata)
    assert AmdLoadedKernel.from_cache(cache, key).plan.names == tuple(ck.signature)
    back((2,), CASES["mixed"][2])
    k((2,), CASES["mixed"][2])
    assert fake_hip.launches[0]["kernargs"] == fake_hip.launches[1]["kernargs"]

    path = k.save(tmp_path / "aot" / "mixed")
    assert (tmp_path / "aot" / "mixed.hsaco").read_bytes() == ck.asm["hsaco"]
    again = LoadedKernel.from_file(path)
    assert type(again) is AmdLoadedKernel and again.binary == k.binary and again.wave_size == 64


# -- kernel[grid](...) on an AMD GPU -------------------------------------------------------------------------

class FakeTensor:
    """A GPU array as the launch path sees one: an address and a numpy dtype."""

    def __init__(self, ptr: int, dtype: Any = np.float32) -> None:
        self.ptr, self.dtype = ptr, np.dtype(dtype)

    def data_ptr(self) -> int:
        return self.ptr


VADD = """
@tlxc.jit
def vadd(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)
"""


def test_jit_launch_compiles_for_the_amd_gpu(fake_hip: Any, load_kernels: Any) -> None:
    """Without an NVIDIA GPU and with an AMD one, ``kernel[grid]`` compiles for its gfx
    (gcnArchName without the target features) and launches through HIP, on the slow path
    and then the fast one."""
    mod = load_kernels(VADD)
    x, y, out = FakeTensor(0x7F0000010000), FakeTensor(0x7F0000020000), FakeTensor(0x7F0000030000)
    try:
        ck = mod.vadd[(4,)](x, y, out, 1024, BLOCK=256)
    except CompilationError as e:
        if "TLXC-TOOL-001" in str(e):
            pytest.skip(str(e).splitlines()[0])
        raise
    mod.vadd[(8,)](x, y, out, 2048, BLOCK=256, num_warps=4)  # the fast path
    assert ck.options.arch == "gfx942" and len(mod.vadd.cache) == 1
    assert [launch["grid"] for launch in fake_hip.launches] == [(4, 1, 1), (8, 1, 1)]
    assert fake_hip.launches[0]["block"] == (256, 1, 1)
    layout = kernarg_layout(ck.asm["amdgcn"], "vadd")
    for launch, n in zip(fake_hip.launches, (1024, 2048)):
        data = launch["kernargs"]
        assert [struct.unpack_from("<Q", data, o)[0] for o in layout.offsets[:3]] == [x.ptr, y.ptr, out.ptr]
        assert struct.unpack_from("<i", data, layout.offsets[3])[0] == n
    assert fake_hip.loaded == [ck.asm["hsaco"]]


def test_jit_launch_on_a_gpu_tlxc_does_not_target(fake_hip: Any, load_kernels: Any) -> None:
    fake_hip.gcn_arch_name = "gfx90a:sramecc+:xnack-"
    mod = load_kernels(VADD)
    x = FakeTensor(0x7F0000010000)
    with pytest.raises(CompilationError, match=r"TLXC-LAUNCH-003(.|\n)*this GPU is gfx90a; tlxc generates code for "
                                               r"gfx942, gfx950, gfx1250"):
        mod.vadd[(4,)](x, x, x, 1000, BLOCK=256)
    assert fake_hip.launches == []


def test_jit_launch_without_any_gpu_names_both(monkeypatch: pytest.MonkeyPatch, fake_hip: Any,
                                               load_kernels: Any) -> None:
    monkeypatch.setitem(sys.modules, "hip", None)
    mod = load_kernels(VADD)
    x = FakeTensor(0x7F0000010000)
    with pytest.raises(NoGPUError) as e:
        mod.vadd[(4,)](x, x, x, 1000, BLOCK=256)
    msg = str(e.value)
    assert msg.startswith("cannot use the GPU: no NVIDIA driver was found")
    assert "no AMD GPU either: cannot use an AMD GPU: the HIP bindings (hip-python) are not installed" in msg


COPY_DESC = """
@tlxc.jit
def copy_desc(src, dst, BM: tl.constexpr):
    m = tl.program_id(0) * BM
    dst.store([m, 0], src.load([m, 0]) * 2)
"""


def _descriptor(ptr: int, shape: list[int], strides: list[int], **kw: Any) -> Any:
    import tlxc

    return tlxc.TensorDescriptor(FakeTensor(ptr, np.float16), shape, strides, [64, 32], **kw)


def test_host_descriptors_are_passed_as_their_fields(fake_hip: Any, load_kernels: Any) -> None:
    """AMD has no TMA: a TensorDescriptor argument is packed as its base address, sizes and
    strides, at the offset and with the size of the code object's by-value struct argument,
    and the kernel reads the block through masked pointer accesses."""
    mod = load_kernels(COPY_DESC)
    src = _descriptor(0x7F0000040000, [100, 32], [48, 1])
    dst = _descriptor(0x7F0000050000, [100, 32], [32, 1])
    try:
        ck = mod.copy_desc[(2,)](src, dst, BM=64)
    except CompilationError as e:
        if "TLXC-TOOL-001" in str(e):
            pytest.skip(str(e).splitlines()[0])
        raise
    mod.copy_desc[(2,)](src, dst, BM=64)  # the fast path
    layout = kernarg_layout(ck.asm["amdgcn"], "copy_desc")
    assert layout.offsets == (0, 24) and layout.sizes == (24, 24) and layout.kinds == ("by_value", "by_value")
    for launch in fake_hip.launches:
        data = launch["kernargs"]
        assert struct.unpack_from("<Q4i", data, 0) == (0x7F0000040000, 100, 32, 48, 1)
        assert struct.unpack_from("<Q4i", data, 24) == (0x7F0000050000, 100, 32, 32, 1)
    assert "{ptr addrspace(1), i32, i32, i32, i32}" in ck.asm["llir"]
    assert "global_load" in ck.asm["amdgcn"] and "global_store" in ck.asm["amdgcn"]


@pytest.mark.parametrize("change, message", [
    ({"padding": "nan"}, "pad with zeros only"),
    ({"shape": [1 << 31, 32]}, "must fit in 31 bits"),
])
def test_descriptor_fields_refused(fake_hip: Any, load_kernels: Any, change: dict[str, Any], message: str) -> None:
    mod = load_kernels(COPY_DESC)
    good = _descriptor(0x7F0000040000, [100, 32], [32, 1])
    bad = _descriptor(0x7F0000060000, change.get("shape", [100, 32]), [32, 1], padding=change.get("padding", "zero"))
    try:
        with pytest.raises(LaunchError, match=message):
            mod.copy_desc[(2,)](bad, good, BM=64)
    except CompilationError as e:
        if "TLXC-TOOL-001" in str(e):
            pytest.skip(str(e).splitlines()[0])
        raise


def test_descriptor_sizes_that_are_multiples_of_16_get_a_vectorized_variant(fake_hip: Any, load_kernels: Any) -> None:
    """A descriptor whose sizes are all multiples of 16 is specialized as
    ``tensordesc<...>:16`` (as an ``i32:16``): the kernel's bounds checks then hold for
    whole vectors (16-byte loads and stores); other sizes take the per-element variant."""
    mod = load_kernels(COPY_DESC)
    try:
        even = mod.copy_desc[(2,)](_descriptor(0x7F0000040000, [128, 32], [32, 1]),
                                   _descriptor(0x7F0000050000, [128, 32], [32, 1]), BM=64)
    except CompilationError as e:
        if "TLXC-TOOL-001" in str(e):
            pytest.skip(str(e).splitlines()[0])
        raise
    odd = mod.copy_desc[(2,)](_descriptor(0x7F0000040000, [100, 32], [32, 1]),
                              _descriptor(0x7F0000050000, [100, 32], [32, 1]), BM=64)
    assert str(even.signature["src"]) == "tensordesc<fp16[64,32]>:16"
    assert str(odd.signature["src"]) == "tensordesc<fp16[64,32]>"
    assert "global_load_dwordx4" in even.asm["amdgcn"] and "global_store_dwordx4" in even.asm["amdgcn"]
    assert "global_load_dwordx4" not in odd.asm["amdgcn"]
    # the variant's promise is checked at launch, as an int's divisibility is
    loaded = AmdLoadedKernel.from_spec(even.asm["hsaco"], even.launch_spec)
    with pytest.raises(LaunchError, match=r"not all multiples of 16"):
        loaded((2, 1, 1), (_descriptor(0x7F0000040000, [100, 32], [32, 1]),
                           _descriptor(0x7F0000050000, [128, 32], [32, 1])))
