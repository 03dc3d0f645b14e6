"""Host TMA descriptors: ``tlxc.TensorDescriptor`` and its checks, the ``tensordesc``
signature entry, the argument plan's 128-byte descriptor slot (CPU, with a fake encoder
and the fake driver), and a real ``cuTensorMapEncodeTiled`` on a GPU (``-m gpu``)."""

from __future__ import annotations

import ctypes
import struct
from typing import Any

import numpy as np
import pytest
from tlxc.runtime import ArgPlan, LaunchError, LoadedKernel, Param, parse_param, tma
from tlxc.runtime.args import apply_tma_params, split_signature

import tlxc
from tlxc.errors import SemanticError
from tlxc.frontend.specialize import ArgSpec, parse_signature, parse_type, spec_of
from tlxc.ir.types import TensorDescType, bfloat16, float16, float32


class FakeTensor:
    """A torch-like GPU tensor: data_ptr(), dtype, shape, stride(), is_cuda."""

    def __init__(self, ptr: int, shape: tuple[int, ...], dtype: Any = np.float16,
                 strides: tuple[int, ...] | None = None, is_cuda: bool = True) -> None:
        self._ptr, self.shape, self.dtype, self.is_cuda = ptr, tuple(shape), np.dtype(dtype), is_cuda
        self.device = "cuda:0" if is_cuda else "cpu"
        if strides is None:
            strides, step = [], 1
            for n in reversed(shape):
                strides.append(step)
                step *= n
            strides = tuple(reversed(strides))
        self._strides = tuple(strides)

    def data_ptr(self) -> int:
        return self._ptr

    def stride(self) -> tuple[int, ...]:
        return self._strides


class FakeCudaArray:
    def __init__(self, ptr: int, shape: tuple[int, ...], typestr: str = "<f2") -> None:
        self.__cuda_array_interface__ = {"data": (ptr, False), "typestr": typestr, "shape": shape,
                                         "strides": None, "version": 3}


@pytest.fixture
def fake_encoder(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """Replace cuTensorMapEncodeTiled: record the calls, return 128 recognizable bytes."""
    calls: list[tuple] = []

    def encode(address: int, sig: str, shape: tuple, strides: tuple, box: tuple, swizzle: int, padding: str) -> bytes:
        calls.append((address, sig, shape, strides, box, swizzle, padding))
        return struct.pack("<QQ", address, len(calls)) + bytes(range(112))

    monkeypatch.setattr(tma, "ENCODER", encode)
    tma.clear_cache()
    return calls


def _tma_params(block: list[int], element: str = "f16", swizzle: int = 128, index: int = 0) -> list[dict]:
    return [{"index": index, "block_shape": block, "element": element, "swizzle": swizzle}]


# -- TensorDescriptor -------------------------------------------------------------------------------

def test_names_and_fields() -> None:
    from tlxc.tools.tensor_descriptor import TensorDescriptor

    assert TensorDescriptor is tlxc.TensorDescriptor
    t = FakeTensor(0x10000, (128, 64))
    d = tlxc.TensorDescriptor(t, [128, 64], [64, 1], [1, 1])  # a dummy block, fixed later as tutorials do
    assert (d.base, d.shape, d.strides, d.block_shape, d.padding) == (t, [128, 64], [64, 1], [1, 1], "zero")
    d.block_shape = [64, 32]
    # every size a multiple of 16: specialized as such (AMD reads whole vectors then)
    assert str(spec_of(d, True)) == "tensordesc<fp16[64,32]>:16"
    assert str(spec_of(d, False)) == "tensordesc<fp16[64,32]>"
    d.shape = [128, 40]
    assert str(spec_of(d, True)) == "tensordesc<fp16[64,32]>"
    d.shape = [128, 64]
    assert "shape [128, 64]" in repr(d) and "block_shape=[64, 32]" in repr(d)


def test_from_tensor() -> None:
    t = FakeTensor(0x10000, (64, 32), strides=(64, 1))  # a view: rows 64 elements apart
    d = tlxc.TensorDescriptor.from_tensor(t, [16, 16], padding="nan")
    assert (d.shape, d.strides, d.block_shape, d.padding) == ([64, 32], [64, 1], [16, 16], "nan")
    a = np.zeros((4, 8, 16), np.float32)[:, :, :8]  # numpy: byte strides become element strides
    assert tlxc.TensorDescriptor.from_tensor(a, [1, 8, 8]).strides == [128, 16, 1]
    c = tlxc.TensorDescriptor.from_tensor(FakeCudaArray(0x20000, (16, 32)), [16, 16])
    assert c.strides == [32, 1]


@pytest.mark.parametrize("args,message", [
    (((), (), ()), "rank 1 to 5"),
    (((2,) * 6, (1,) * 6, (1,) * 6), "rank 1 to 5"),
    (((64, 64), (64,), (16, 16)), "2 but there are 1 strides"),
    (((64, 64), (1, 64), (16, 16)), r"last stride \(strides\[1\]\) is 64"),
    (((64, 36), (36, 1), (16, 16)), r"strides\[0\] is 36 elements \(72 bytes\), which is not a multiple of 16 bytes"),
    (((8, 8, 64), (516, 64, 1), (1, 1, 16)), r"strides\[0\] is 516 elements \(1032 bytes\)"),
    (((64, 64), (64, 1), (16, 24)), r"block_shape\[1\] is 24; block dimensions must be positive powers of two"),
    (((64, 64), (64, 1), (16,)), "has 1 dimensions but the tensor has 2"),
    (((64, 0), (64, 1), (16, 16)), r"shape\[1\] is 0"),
])
def test_construction_checks(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tlxc.TensorDescriptor(FakeTensor(0x10000, (64, 64)), *args)


def test_construction_checks_base_and_padding() -> None:
    with pytest.raises(ValueError, match="base address 0x10008 is not 16-byte aligned"):
        tlxc.TensorDescriptor.from_tensor(FakeTensor(0x10008, (64, 64)), [16, 16])
    with pytest.raises(ValueError, match="padding must be 'zero' or 'nan'"):
        tlxc.TensorDescriptor.from_tensor(FakeTensor(0x10000, (64, 64)), [16, 16], padding="one")
    with pytest.raises(ValueError, match="padding='nan' needs a floating-point tensor; this one holds i32"):
        tlxc.TensorDescriptor.from_tensor(FakeTensor(0x10000, (64, 64), np.int32), [16, 16], padding="nan")
    # host arrays (the interpreter) have no GPU address to check
    tlxc.TensorDescriptor.from_tensor(np.zeros(100, np.float32)[1:65], [16])


# -- signatures --------------------------------------------------------------------------------------

def test_signature_round_trip() -> None:
    spec = parse_type("tensordesc<fp16[64, 64]>")  # Triton writes a space after the comma
    assert spec == ArgSpec(TensorDescType((64, 64), float16))
    assert str(spec) == "tensordesc<fp16[64,64]>" and parse_type(str(spec)) == spec
    for text, t in [("tensordesc<bf16[128,64]>", TensorDescType((128, 64), bfloat16)),
                    ("tensordesc<fp32[16]>", TensorDescType((16,), float32)),
                    ("tensordesc<f16[1,2,4,8,16]>", TensorDescType((1, 2, 4, 8, 16), float16))]:
        assert parse_type(text).type == t
        assert parse_type(str(parse_type(text))) == parse_type(text)
    specs, consts = parse_signature("tensordesc<fp16[64,64]>, *fp32:16, i32, 128", ["d", "p", "n"], ["B"],
                                    ["d", "p", "n", "B"])
    assert [str(s) for s in specs.values()] == ["tensordesc<fp16[64,64]>", "*fp32:16", "i32"] and consts == {"B": 128}
    specs, _ = parse_signature({"d": "tensordesc<fp16[64,64]>", "n": "i32"}, ["d", "n"], [], ["d", "n"])
    assert specs["d"].type == TensorDescType((64, 64), float16)


@pytest.mark.parametrize("text,message", [
    ("tensordesc<fp16>", "cannot read"), ("tensordesc<float[64]>", "unknown element type"),
    ("tensordesc<fp16[64,48]>", "power of two"), ("tensordesc<fp16[1,1,1,1,1,1]>", "1 to 5"),
    ("tensordesc<fp16[a]>", "cannot read"),
])
def test_bad_signatures(text: str, message: str) -> None:
    with pytest.raises(SemanticError, match=message):
        parse_type(text)


def test_spec_of_numpy_descriptor() -> None:
    d = tlxc.TensorDescriptor.from_tensor(np.zeros((64, 64), np.float32), [32, 16])
    assert spec_of(d, True) == ArgSpec(TensorDescType((32, 16), float32), 16)
    d.block_shape = [32, 12]
    with pytest.raises(SemanticError, match="power of two"):
        spec_of(d, True)


# -- the argument plan -------------------------------------------------------------------------------

def test_parse_param() -> None:
    p = parse_param("tensordesc<fp16[64, 64]>", "a")
    assert p == Param("a", "tensordesc", "fp16", block=(64, 64))
    assert parse_param("tensordesc<fp16[64,64]>:16", "a") == Param("a", "tensordesc", "fp16", block=(64, 64),
                                                                 divisibility=16)
    assert str(parse_param("tensordesc<fp16[64,64]>:16", "a")) == "tensordesc<fp16[64,64]>:16"
    assert str(p) == "tensordesc<fp16[64,64]>" and parse_param(str(p), "a") == p
    assert (p.size, p.alignment, p.format) == (128, 64, "128s")
    assert split_signature("*fp32, tensordesc<bf16[64,64]>,i32") == ["*fp32", "tensordesc<bf16[64,64]>", "i32"]
    for bad, msg in [("tensordesc<fp16[64,x]>", "cannot read"), ("tensordesc<fp16[48]>", "powers of two"),
                     ("tensordesc<float[64]>", "cannot be moved by TMA"), ("nvTmaDesc", "not supported")]:
        with pytest.raises(ValueError, match=msg):
            parse_param(bad, "a")


def test_plan_layout_aligns_descriptors() -> None:
    plan = ArgPlan("i32, tensordesc<fp16[64,64]>, *fp32", ["n", "d", "x"],
                   tma_params=_tma_params([64, 64], swizzle=64, index=1))
    assert plan.offsets == (0, 64, 192) and plan.size == 200
    assert plan.params[1].swizzle == 64 and plan.signature == ["i32", "tensordesc<fp16[64,64]>", "*fp32"]
    for _ in range(3):
        buf, kp = plan.new_slot()
        assert ctypes.addressof(buf) % 64 == 0
        slots = (ctypes.c_void_p * 3).from_address(kp)
        assert [s - ctypes.addressof(buf) for s in slots] == [0, 64, 192]


@pytest.mark.parametrize("entry,message", [
    ({"index": 1, "block_shape": [64, 64], "element": "f16", "swizzle": 128}, "not a tensordesc"),
    ({"index": 0, "block_shape": [64, 32], "element": "f16", "swizzle": 128}, r"blocks of fp16\[64, 32\]"),
    ({"index": 0, "block_shape": [64, 64], "element": "bf16", "swizzle": 128}, "signature is tensordesc<fp16"),
    ({"index": 0, "block_shape": [64, 64], "element": "f16", "swizzle": 16}, "swizzle 16"),
    ({"index": 5, "block_shape": [64, 64], "element": "f16", "swizzle": 128}, "bad tma_params entry"),
])
def test_tma_params_must_match(entry: dict, message: str) -> None:
    params = [parse_param("tensordesc<fp16[64,64]>", "d"), parse_param("i32", "n")]
    with pytest.raises(ValueError, match=message):
        apply_tma_params(params, [entry])


def test_loaded_kernel_needs_the_swizzle() -> None:
    with pytest.raises(ValueError, match="gives no swizzle"):
        LoadedKernel(b"cubin", "k", ["tensordesc<fp16[64,64]>"])
    k = LoadedKernel(b"cubin", "k", ["tensordesc<fp16[64,64]>"], metadata={"tma_params": _tma_params([64, 64])})
    assert k.plan.params[0].swizzle == 128
    again = LoadedKernel.from_metadata(k.to_metadata(), b"cubin")
    assert again.plan.params == k.plan.params


# -- encoding ----------------------------------------------------------------------------------------

def test_encode_arguments_and_cache(fake_encoder: list[tuple]) -> None:
    data = tma.encode(0x10000, "f16", [256, 512], [1024, 1], [64, 128], 128)
    assert len(data) == 128
    # the box is one message: the inner row is the 128-byte swizzle span
    assert fake_encoder == [(0x10000, "fp16", (256, 512), (1024, 1), (64, 64), 128, "zero")]
    assert tma.encode(0x10000, "fp16", (256, 512), (1024, 1), (64, 128), 128) is data and len(fake_encoder) == 1
    tma.encode(0x10000, "fp16", [256, 512], [1024, 1], [512, 16], 32, padding="nan")
    assert fake_encoder[-1][4:] == ((256, 16), 32, "nan")  # at most 256 elements per box dimension
    tma.encode(0x10000, "fp8e4nv", [256, 512], [512, 1], [128, 128], 0, box=[64, 32])
    assert fake_encoder[-1][1] == "fp8e4nv" and fake_encoder[-1][4] == (64, 32)


@pytest.mark.parametrize("args,message", [
    ((0x10000, "f16", [64, 60], [60, 1], [16, 16], 32), r"strides\[0\] is 60 elements \(120 bytes\)"),
    ((0x10004, "f16", [64, 64], [64, 1], [16, 16], 32), "not 16-byte aligned"),
    ((0x10000, "f16", [64, 64], [64, 1], [16, 4], 0), r"inner block dimension is 4 elements \(8 bytes\)"),
    ((0x10000, "f32", [64, 64], [64, 1], [16, 64], 0), None),
    ((0x10000, "f16", [64, 64], [64, 1], [16, 16], 48), "swizzle must be one of"),
    ((0x10000, "i32", [64, 64], [64, 1], [16, 16], 0, "nan"), "floating-point"),
    ((0x10000, "f8e4m3", [64, 64], [64, 1], [16, 64], 32, "zero", [16, 64]), "wider than the 32-byte swizzle"),
])
def test_encode_checks(fake_encoder: list[tuple], args: tuple, message: str | None) -> None:
    if message is None:
        assert len(tma.encode(*args)) == 128
        return
    with pytest.raises(ValueError, match=message):
        tma.encode(*args)
    assert not fake_encoder


def test_launch_packs_the_descriptor(fake_driver: Any, fake_encoder: list[tuple]) -> None:
    k = LoadedKernel(b"cubin", "k", ["*fp32", "tensordesc<fp16[64,64]>", "i32"], arg_names=["x", "desc", "n"],
                     metadata={"tma_params": _tma_params([64, 64], swizzle=128, index=1)})
    a = FakeTensor(0x7F0000010000, (256, 128))
    desc = tlxc.TensorDescriptor.from_tensor(a, [64, 64])
    k((2,), (0x1000, desc, 7))
    k((2,), (0x1000, desc, 8))
    assert len(fake_encoder) == 1 and fake_encoder[0] == (0x7F0000010000, "fp16", (256, 128), (128, 1), (64, 64),
                                                          128, "zero")
    data = fake_driver.launches[-1][2]
    assert len(data) == k.plan.size == 196
    assert data[:8] == struct.pack("<Q", 0x1000)
    assert data[64:192] == tma.encode(0x7F0000010000, "fp16", (256, 128), (128, 1), (64, 64), 128)
    assert data[192:] == struct.pack("<i", 8)
    desc.block_shape = [1, 1]  # a descriptor that no pre_hook fixed
    with pytest.raises(LaunchError, match=r"argument 1 'desc' .*block_shape is \[1, 1\] but this kernel was "
                                          r"compiled for \[64, 64\]") as info:
        k((2,), (0x1000, desc, 8))
    assert info.value.name == "desc"


@pytest.mark.parametrize("make,message", [
    (lambda: "not a descriptor", "takes a tensor descriptor"),
    (lambda: tlxc.TensorDescriptor.from_tensor(FakeTensor(0x10000, (64, 64), np.float32), [64, 64]),
     "compiled for descriptors of fp16"),
    (lambda: tlxc.TensorDescriptor.from_tensor(np.zeros((64, 64), np.float16), [64, 64]), "in host memory"),
    (lambda: tlxc.TensorDescriptor.from_tensor(FakeTensor(0x10000, (64, 64), is_cuda=False), [64, 64]),
     "not on the GPU"),
    (lambda: _bad_strides(), r"strides\[0\] is 100 elements \(200 bytes\)"),
])
def test_launch_errors(fake_driver: Any, fake_encoder: list[tuple], make: Any, message: str) -> None:
    k = LoadedKernel(b"cubin", "k", ["tensordesc<fp16[64,64]>"], arg_names=["desc"],
                     metadata={"tma_params": _tma_params([64, 64])})
    with pytest.raises(LaunchError, match=message):
        k((1,), (make(),))
    assert not fake_driver.launches


def _bad_strides() -> Any:
    d = tlxc.TensorDescriptor.from_tensor(FakeTensor(0x10000, (64, 64)), [64, 64])
    d.strides = [100, 1]  # changed after construction: the launch checks again
    return d


# -- on a GPU ----------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_encode_on_the_gpu() -> None:
    from tlxc.runtime import DeviceArray

    tma.clear_cache()
    x = DeviceArray.zeros((256, 512), np.float16)
    d = tlxc.TensorDescriptor.from_tensor(x, [64, 128])
    assert d.strides == [512, 1]
    for swizzle in (0, 32, 64, 128):
        data = tma.encode(x.data_ptr(), "f16", d.shape, d.strides, [64, 64] if swizzle == 0 else d.block_shape,
                          swizzle)
        assert len(data) == 128 and any(data)
    assert len(tma.encode(x.data_ptr(), "bf16", [256, 512], [512, 1], [16, 64], 128, padding="nan")) == 128
    assert len(tma.encode(x.data_ptr(), "u8", [8, 64, 1024], [65536, 1024, 1], [2, 8, 128], 128)) == 128
    with pytest.raises(ValueError, match=r"strides\[0\] is 500 elements"):
        tma.encode(x.data_ptr(), "f16", [256, 500], [500, 1], [64, 64], 128)
    torch = pytest.importorskip("torch")
    t = torch.zeros((128, 256), dtype=torch.float16, device="cuda")
    td = tlxc.TensorDescriptor.from_tensor(t, [64, 64])
    assert len(tma.encode(t.data_ptr(), "f16", td.shape, td.strides, td.block_shape, 128)) == 128
    with pytest.raises(ValueError, match=r"strides\[0\] is 250 elements"):
        tlxc.TensorDescriptor.from_tensor(torch.zeros((128, 250), dtype=torch.float16, device="cuda"), [64, 64])


# A TMA load of one block into shared memory at (row, col), copied out byte for byte (so a
# swizzled block arrives swizzled): the descriptor as the launcher passes it, read by the hardware.
TMA_TILE = r"""
.version 8.0
.target sm_90a
.address_size 64

.visible .entry tma_tile(.param .align 64 .b8 desc[128], .param .u64 out, .param .u32 row, .param .u32 col,
                         .param .u32 nbytes)
{
    .reg .pred %p<4>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 tile[8192];
    .shared .align 8 .b64 bar;

    mov.u64 %rd1, desc;
    cvta.param.u64 %rd2, %rd1;
    ld.param.u64 %rd3, [out];
    cvta.to.global.u64 %rd3, %rd3;
    ld.param.u32 %r1, [row];
    ld.param.u32 %r2, [col];
    ld.param.u32 %r3, [nbytes];
    mov.u32 %r4, %tid.x;
    mov.u32 %r5, tile;
    mov.u32 %r6, bar;
    setp.eq.u32 %p1, %r4, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r6], 1;
    fence.mbarrier_init.release.cluster;
    bar.sync 0;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r6], %r3;
    @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
        [%r5], [%rd2, {%r2, %r1}], [%r6];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r6], 0;
    @!%p2 bra WAIT;
    shl.b32 %r7, %r4, 4;
LOOP:
    setp.ge.u32 %p3, %r7, %r3;
    @%p3 bra DONE;
    add.u32 %r8, %r5, %r7;
    ld.shared.v4.u32 {%r9, %r10, %r11, %r12}, [%r8];
    cvt.u64.u32 %rd4, %r7;
    add.u64 %rd5, %rd3, %rd4;
    st.global.v4.u32 [%rd5], {%r9, %r10, %r11, %r12};
    add.u32 %r7, %r7, 2048;
    bra LOOP;
DONE:
    ret;
}
"""


def _unswizzle(raw: np.ndarray, rows: int, row_bytes: int, swizzle: int) -> np.ndarray:
    """Shared-memory bytes of a block swizzled by ``swizzle`` bytes, back in row-major order:
    the 16-byte chunk j of row r sits at chunk j ^ ((r // (128 // swizzle)) % (swizzle // 16))."""
    chunks = raw.reshape(rows, row_bytes // 16, 16)
    if not swizzle:
        return chunks.reshape(-1)
    out = np.empty_like(chunks)
    for r in range(rows):
        for j in range(row_bytes // 16):
            out[r, j] = chunks[r, j ^ ((r // (128 // swizzle)) % (swizzle // 16))]
    return out.reshape(-1)


@pytest.mark.gpu
@pytest.mark.parametrize("swizzle,block,padding", [(0, [64, 64], "zero"), (32, [64, 16], "zero"),
                                                   (64, [64, 32], "nan"), (128, [64, 64], "zero")])
def test_tma_load_on_the_gpu(swizzle: int, block: list[int], padding: str) -> None:
    from tlxc.runtime import DeviceArray, assemble, find_ptxas, synchronize

    if find_ptxas() is None:
        pytest.skip("no ptxas")
    rng = np.random.default_rng(swizzle)
    a = rng.standard_normal((100, 80)).astype(np.float16)
    x = DeviceArray.from_numpy(a)
    nbytes = block[0] * block[1] * 2
    k = LoadedKernel(assemble(TMA_TILE), "tma_tile", [f"tensordesc<fp16[{block[0]},{block[1]}]>", "*u8", "i32", "i32",
                                                      "i32"],
                     num_warps=4, metadata={"tma_params": _tma_params(block, swizzle=swizzle)})
    desc = tlxc.TensorDescriptor.from_tensor(x, block, padding=padding)
    for row, col in [(0, 0), (8, 16), (64, 64), (-8, -16)]:  # the last two are partly out of bounds
        out = DeviceArray.zeros(nbytes, np.uint8)
        k((1,), (desc, out, row, col, nbytes))
        synchronize()
        got = _unswizzle(out.numpy(), block[0], block[1] * 2, swizzle).view(np.float16).reshape(block)
        expected = np.full(block, np.nan if padding == "nan" else 0, np.float16)
        r0, c0 = max(row, 0), max(col, 0)
        r1, c1 = min(row + block[0], 100), min(col + block[1], 80)
        expected[r0 - row:r1 - row, c0 - col:c1 - col] = a[r0:r1, c0:c1]
        np.testing.assert_array_equal(got, expected, err_msg=f"swizzle {swizzle}, block at ({row}, {col})")
