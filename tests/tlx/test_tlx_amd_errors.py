"""Bad uses of TLX's AMD operations and of scaled dot: each is a CompilationError with its
code, at the user's line, with the caret under the ``# ERR <text>`` marker (as in
tests/test_errors.py, which holds one case per code).

Rules that need the target are checked at the start of code generation
(``tlxc.codegen.target_ops``): the NVIDIA ones through ``asm['ptx']``, the AMD ones by
calling ``check_amd`` on the compiled IR, as the AMD code generator does first."""

from __future__ import annotations

from typing import Any

import pytest

import tlxc
from tlxc.codegen import target_ops

HEAD = """
import tlxc.tlx as tlx
from tlxc.codegen import target_ops
MMA = tlx.amd_mfma_layout(version=4, instr_shape=[16, 16, 32], transposed=True, warps_per_cta=[2, 2])
"""

# a [32, 32] x [32, 32] scheduled MFMA whose call is on the ERR line; {args} completes it
MFMA = HEAD + """
@tlxc.jit
def k(x, A_T: tl.constexpr, C_T: tl.constexpr):
    a = tl.zeros((32, 32), A_T)
    b = tl.zeros((32, 32), A_T)
    c = tlx.amd_scheduled_mfma(a, b, tl.zeros((32, 32), C_T), {args})  # ERR tlx.amd_scheduled_mfma
    tl.store(x + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], c)
"""

GFX = "target_ops.check_amd(k.compile('*fp32', constants={consts}, arch='{arch}').func, '{arch}')"
BF16 = "dict(A_T=tl.bfloat16, C_T=tl.float32)"

CASES: list[tuple[str, str, str]] = [
    # -- the target (TLXC-TLX-006) -----------------------------------------------------------
    ("TLXC-TLX-006", MFMA.format(args='"transient"'),
     "k.compile('*fp32', constants=" + BF16 + ", arch='sm_100a').asm['ptx']"),
    ("TLXC-TLX-006", HEAD + """
@tlxc.jit
def k(x):
    z = tlx.zeros((32, 32), tl.float32, layout=MMA)  # ERR tlx.zeros
    tl.store(x + tl.arange(0, 32), tl.sum(z, 0))
""", "k.compile('*fp32', arch='sm_90a').asm['ptx']"),
    ("TLXC-TLX-006", MFMA.format(args='"transient", accumulator_register_class="agpr"'),
     GFX.format(consts=BF16, arch="gfx942")),
    ("TLXC-TLX-006", MFMA.format(args='"persistent"'), GFX.format(consts=BF16, arch="gfx942")),
    ("TLXC-TLX-006", MFMA.format(args='"transient"'), GFX.format(consts=BF16, arch="gfx1250")),
    ("TLXC-TLX-006", HEAD + """
@tlxc.jit
def k(x):
    v = tlx.amd_register_class_anchor(tl.load(x + tl.arange(0, 64)), "agpr")  # ERR tlx.amd_register_class_anchor
    tl.store(x + tl.arange(0, 64), v)
""", "target_ops.check_amd(k.compile('*fp32', arch='gfx1250').func, 'gfx1250')"),
    ("TLXC-TLX-006", HEAD + """
@tlxc.jit
def k(x):
    a = tlx.local_alloc((64, 16), tl.float16, 1)
    b = tlx.local_alloc((16, 64), tl.float16, 1)
    c = tlx.async_dot(a[0], b[0])  # ERR tlx.async_dot
    tl.store(x + tl.arange(0, 64), tl.sum(tlx.async_dot_wait(0, c), 0))
""", "target_ops.check_amd(k.compile('*fp32', arch='gfx950').func, 'gfx950')"),
    ("TLXC-TLX-006", HEAD + """
@tlxc.jit
def k(x, d):
    bufs = tlx.local_alloc((64, 64), tl.float16, 1)
    bars = tlx.alloc_barriers(1)
    tlx.async_descriptor_load(d, bufs[0], [0, 0], bars[0])  # ERR tlx.async_descriptor_load
""", "target_ops.check_amd(k.compile('*fp32,tensordesc<fp16[64,64]>', arch='gfx1250').func, 'gfx1250')"),
    # -- the operation itself (TLXC-TLX-007) -------------------------------------------------
    ("TLXC-TLX-007", MFMA.format(args='"transient"'),
     "k.compile('*fp32', constants=dict(A_T=tl.float32, C_T=tl.float32))"),
    ("TLXC-TLX-007", MFMA.format(args='"transient"'),
     "k.compile('*fp32', constants=dict(A_T=tl.float16, C_T=tl.float16))"),
    ("TLXC-TLX-007", MFMA.format(args='"eager"'), "k.compile('*fp32', constants=" + BF16 + ")"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    a = tl.zeros((32,), tl.bfloat16)
    c = tlx.amd_scheduled_mfma(a, a, tl.zeros((32,), tl.float32), "transient")  # ERR tlx.amd_scheduled_mfma
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    a = tlx.require_layout(tl.zeros((32, 32), tl.bfloat16), tlx.dot_operand_layout(0, MMA, k_width=2))
    b = tlx.require_layout(tl.zeros((32, 32), tl.bfloat16), tlx.dot_operand_layout(1, MMA, k_width=8))
    c = tlx.amd_scheduled_mfma(a, b, tlx.zeros((32, 32), tl.float32, MMA), "transient")  # ERR tlx.amd
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    other: tl.constexpr = tlx.amd_mfma_layout(4, [32, 32, 16], True, [2, 2])
    a = tlx.require_layout(tl.zeros((32, 32), tl.bfloat16), tlx.dot_operand_layout(0, other))
    b = tlx.require_layout(tl.zeros((32, 32), tl.bfloat16), tlx.dot_operand_layout(1, MMA))
    c = tlx.amd_scheduled_mfma(a, b, tlx.zeros((32, 32), tl.float32, MMA), "transient")  # ERR tlx.amd
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 16))
    v = tlx.amd_register_resident(v, "agpr", 32)  # ERR tlx.amd_register_resident
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 16))
    v = tlx.amd_register_class_anchor(v, register_class="sgpr")  # ERR tlx.amd_register_class_anchor
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    v = tl.load(x.to(tl.pointer_type(tl.int8)) + tl.arange(0, 16))
    v = tlx.amd_register_resident(v)  # ERR tlx.amd_register_resident
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    tlx.amd_sched_barrier(0x1000)  # ERR tlx.amd_sched_barrier
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    v = tl.zeros((32, 32), tl.float32)
    s = tlx.extract_slice(v, [16, 32], [24, 0])  # ERR tlx.extract_slice
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    v = tlx.require_layout(tl.zeros((32,), tl.float32), MMA)  # ERR tlx.require_layout
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    c = tlx.amd_mfma_commit(tl.zeros((32, 32), tl.float16))  # ERR tlx.amd_mfma_commit
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    a = tl.zeros((32, 32), tl.bfloat16)
    c = tlx.amd_scheduled_mfma(a, a, tl.zeros((32, 32), tl.float32), "transient", initialize=True)
    c = tlx.amd_scheduled_mfma(a, a, c, "transient")
    tl.store(x + tl.arange(0, 32), tl.sum(c, 0))
    c = tlx.amd_mfma_commit(c)  # ERR tlx.amd_mfma_commit
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    a = tl.zeros((32, 32), tl.bfloat16)
    c = tlx.amd_scheduled_mfma(a, a, tl.zeros((32, 32), tl.float32), "transient", initialize=True)
    d = c + 1.0
    c = tlx.amd_scheduled_mfma(a, a, c, "transient")
    c = tlx.amd_mfma_commit(c)  # ERR tlx.amd_mfma_commit
""", "k.compile('*fp32')"),
    ("TLXC-TLX-007", HEAD + """
@tlxc.jit
def k(x):
    a = tl.zeros((32, 32), tl.bfloat16)
    c = tlx.amd_scheduled_mfma(a, a, tl.zeros((32, 32), tl.float32), "persistent")
    c, b = tlx.amd_mfma_commit(c, preserve=a)  # ERR tlx.amd_mfma_commit
""", "k.compile('*fp32')"),
    ("TLXC-CALL-002", HEAD + """
@tlxc.jit
def k(x):
    mma: tl.constexpr = tlx.amd_mfma_layout(4, [8, 8, 4], True, [2, 2])  # ERR tlx.amd_mfma_layout
""", "k.compile('*fp32')"),
    # -- scaled dot ----------------------------------------------------------------------
    ("TLXC-DOT-001", HEAD + """
@tlxc.jit
def k(x):
    a = tl.zeros((32, 64), tl.float8e4nv)
    b = tl.zeros((64, 32), tl.float8e4nv)
    s = tl.zeros((32, 2), tl.uint8)
    c = tlx.dot_scaled(a, s, "e4m3", b, s, "e4m3", tiles_per_warp=[1, 4])  # ERR tlx.dot_scaled
""", "k.compile('*fp32')"),
    ("TLXC-DOT-001", HEAD + """
@tlxc.jit
def k(x):
    a = tl.zeros((32, 64), tl.float8e4nv)
    b = tl.zeros((64, 32), tl.float8e4nv)
    c = tlx.dot_scaled(a, None, "e4m3", b, None, "e4m3", tiles_per_warp=[1, 0])  # ERR tlx.dot_scaled
""", "k.compile('*fp32')"),
    ("TLXC-DOT-001", HEAD + """
@tlxc.jit
def k(x):
    a = tl.zeros((32, 64), tl.uint8)
    b = tl.zeros((64, 32), tl.float8e5)
    c = tl.dot_scaled(a, None, "e2m1", b, None, "e5m2")  # ERR tl.dot_scaled
""", "k.compile('*fp32')"),
    ("TLXC-DOT-001", HEAD + """
@tlxc.jit
def k(x):
    a = tl.zeros((32, 64), tl.float8e5)
    s = tl.zeros((32, 8), tl.uint8)
    c = tl.dot_scaled(a, s, "e5m2", tl.trans(a), None, "e5m2")  # ERR tl.dot_scaled
""", "k.compile('*fp32')"),
    ("TLXC-DOT-002", HEAD + """
@tlxc.jit
def k(x):
    a = tl.zeros((32, 64), tl.float16)
    c = tl.dot_scaled(a, None, "e3m2", tl.trans(a), None, "fp16")  # ERR tl.dot_scaled
""", "k.compile('*fp32')"),
    ("TLXC-DOT-002", HEAD + """
@tlxc.jit
def k(x):
    a = tl.zeros((32, 64), tl.float16)
    c = tl.dot_scaled(a, None, "bf16", tl.trans(a), None, "fp16")  # ERR tl.dot_scaled
""", "k.compile('*fp32')"),
    ("TLXC-CODEGEN-001", HEAD + """
@tlxc.jit
def k(x):
    a = tl.zeros((2, 32, 64), tl.float16)
    b = tl.zeros((2, 64, 32), tl.float16)
    c = tl.dot_scaled(a, None, "fp16", b, None, "fp16")  # ERR tl.dot_scaled
    tl.store(x + tl.arange(0, 32), tl.sum(tl.sum(c, 0), 0))
""", "k.compile('*fp32', arch='sm_90a').asm['ptx']"),
]


def _expected(source: str) -> tuple[int, int, str]:
    """(line, column, text) of the ``# ERR`` marker within the loaded file (3 header lines)."""
    for i, line in enumerate(source.splitlines()):
        if "# ERR " in line:
            code, marker = line.split("# ERR ", 1)
            return i + 4, code.index(marker.strip()), code.rstrip()
    raise AssertionError("case without # ERR marker")


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_error_points_at_user_line(index: int, load_kernels: Any) -> None:
    code, source, run = CASES[index]
    mod = load_kernels(source)
    line, col, text = _expected(source)
    with pytest.raises(tlxc.CompilationError) as info:
        eval(run, vars(mod))
    err = info.value
    assert err.code == code, str(err)
    assert err.loc is not None and err.loc.file == mod.__path_str__
    assert (err.loc.line, err.loc.col) == (line, col), str(err)
    rendered = str(err).splitlines()
    assert rendered[0].startswith(f"{mod.__path_str__}:{line}:{col + 1}: error[{code}]: ")
    assert rendered[1].startswith("    " + text)
    assert rendered[2].startswith(" " * (4 + col) + "^")


def test_the_same_kernels_pass_where_they_are_valid(load_kernels: Any) -> None:
    """The scheduled-MFMA case passes gfx950's checks, and on gfx942 with a VGPR accumulator."""
    for args, arch in (('"persistent"', "gfx950"), ('"transient", accumulator_register_class="agpr"', "gfx950"),
                       ('"persistent", accumulator_register_class="vgpr"', "gfx942")):
        mod = load_kernels(MFMA.format(args=args))
        k = mod.k.compile("*fp32", constants={"A_T": mod.tl.bfloat16, "C_T": mod.tl.float32}, arch=arch)
        target_ops.check_amd(k.func, arch)


def _line_of(mod: Any, text: str) -> int:
    with open(mod.__path_str__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_register_groups_and_wmma_period_need_the_layout(load_kernels: Any) -> None:
    """The code generator's checks, once it knows per-thread elements and warps."""
    mod = load_kernels(HEAD + """
@tlxc.jit
def k(x):
    v = tlx.amd_register_resident(tl.load(x + tl.arange(0, 1024)), registers_per_group=16)
    a = tl.zeros((32, 64), tl.float8e4nv)
    c = tlx.dot_scaled(a, None, "e4m3", tl.trans(a), None, "e4m3", tiles_per_warp=[2, 1])
    tl.store(x + tl.arange(0, 1024), v)
    tl.store(x + tl.arange(0, 32), tl.sum(c, 0))
""")
    func = mod.k.compile("*fp32", arch="gfx950").func
    resident = next(op for op in func.walk() if op.name == "amd_register_resident")
    target_ops.check_register_groups(resident, 16)
    with pytest.raises(tlxc.CompilationError, match="do not split into groups of 16") as info:
        target_ops.check_register_groups(resident, 8)
    assert info.value.code == "TLXC-TLX-007" and info.value.line == _line_of(mod, "amd_register_resident(")
    dot = next(op for op in func.walk() if op.name == "dot_scaled")
    target_ops.check_wmma_period(dot, (16, 16, 128), (1, 2))
    with pytest.raises(tlxc.CompilationError, match="period along result dim 0 is 16 x 2 warps x 2 = 64") as info:
        target_ops.check_wmma_period(dot, (16, 16, 128), (2, 2))
    assert info.value.code == "TLXC-DOT-001" and info.value.line == _line_of(mod, "tlx.dot_scaled(")


def test_nvidia_targets_run_rematerialized_ranges_and_released_layouts(load_kernels: Any) -> None:
    mod = load_kernels(HEAD + """
@tlxc.jit
def k(x, y):
    r = tlx.rematerialized_range(0, 64, identity=1)
    tl.store(y + r, tlx.release_layout(tl.load(x + r)))
""")
    assert ".entry k(" in mod.k.compile("*fp32,*fp32", arch="sm_90a").asm["ptx"]
