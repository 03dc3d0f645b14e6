"""The targets' pass pipelines as a whole: every pass states its contract, the results a
later pass needs are in the IR (they print, parse back and give the same result), and
the compile driver runs the target's pipeline, not a hidden one."""

from __future__ import annotations

import inspect

import pytest

from tlxc.codegen.targets import TARGETS, backend
from tlxc.ir.parser import parse_ir
from tlxc.ir.passes import PassOptions, membar, run_pipeline, smem_alloc
from tlxc.ir.passes.pipeline import TILE_PIPELINE
from tlxc.ir.printer import print_ir


def _passes(entries):
    for name, what in entries:
        if isinstance(what, list):
            yield from _passes(what)
        else:
            yield name, what


@pytest.mark.parametrize("arch", TARGETS)
def test_every_pass_states_what_it_expects_guarantees_and_refuses(arch: str) -> None:
    pipeline = backend(arch).pipeline
    assert pipeline[:len(TILE_PIPELINE)] == TILE_PIPELINE
    for name, run in _passes(pipeline):
        doc = inspect.getmodule(run).__doc__ or ""
        missing = [w for w in ("Expects", "Guarantees", "Refuses") if w not in doc]
        assert not missing, f"pass '{name}' ({run.__module__}) does not say what it {missing}"
        assert list(inspect.signature(run).parameters)[:2] == ["module", "options"], name


def _lowered_up_to(arch: str, last: str, text: str):
    be = backend(arch)
    names = [n for n, _ in be.lowering]
    module = run_pipeline(parse_ir(text), PassOptions(target=be.info), be.lowering[:names.index(last) + 1],
                          verify_each=True)
    return module, be


@pytest.mark.parametrize("arch,case", [("sm_90a", "matmul-0"), ("gfx950", "amd_gemm_pipelined-0")])
def test_the_shared_memory_plan_is_in_the_ir_and_survives_printing(arch: str, case: str) -> None:
    from codegen_helpers import compile_amd_example, compile_example

    ck = compile_amd_example(case, arch) if arch.startswith("gfx") else compile_example(case, arch)
    module, be = _lowered_up_to(arch, "smem-alloc", ck.asm["ir"])
    text = print_ir(module)
    func = module.funcs[0]
    assert func.attrs["smem_total"] > 0 and f"smem_total = {func.attrs['smem_total']}" in text
    offsets = [op.attrs["smem_offset"] for op in func.walk() if op.NAME in ("local_alloc", "barrier_alloc")]
    assert offsets and all(o >= 0 for o in offsets)
    again = parse_ir(text)
    assert print_ir(again) == text
    assert smem_alloc.read_plan(again.funcs[0]).total == func.attrs["smem_total"]
    # membar reads the plan from the IR: the same barriers whether or not it went through text
    options = PassOptions(target=be.info)
    assert print_ir(membar.run(again, options)) == print_ir(membar.run(module, options))


def test_membar_refuses_to_guess_a_plan() -> None:
    text = """module {
^():
  func {sym_name = "k"} {
  ^():
    return
  }
}
"""
    with pytest.raises(ValueError, match="smem-alloc pass has not run"):
        membar.run(parse_ir(text), PassOptions())


def test_target_info_says_which_ops_each_code_generator_lowers() -> None:
    from tlxc.ir import ops

    nv, amd = backend("sm_90a").info, backend("gfx950").info
    assert nv.lowers(ops.DotOp) and amd.lowers(ops.DotOp)
    assert nv.lowers(ops.AsyncDotOp) and not amd.lowers(ops.AsyncDotOp)
    assert amd.lowers(ops.AmdScheduledMfmaOp) and not nv.lowers(ops.AmdScheduledMfmaOp)
    assert nv.lowers(ops.AsyncTasksOp)  # (AMD has a rule too: it refuses warp specialization by name)
    assert nv.has.wgmma and not backend("sm_100a").info.has.wgmma and amd.has.mfma and not amd.has.tma
