"""Kernel source + specialization -> a ``module`` with one ``func``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import CompilationError
from ..ir import ops
from ..ir.builder import Builder
from ..ir.core import Block, Region
from .semantics.tlx_sync import check_named_barriers
from .semantics.tlx_tasks import KERNEL, KernelFacts
from .specialize import ArgSpec
from .tuple_args import TupleArg, leaf_order, rebuild
from .values import wrap
from .visitor import CodeGenerator

if TYPE_CHECKING:  # pragma: no cover
    from .function import KernelDef


def build_module(kernel: "KernelDef", specs: dict[str, ArgSpec], constants: dict[str, Any],
                 num_warps: int, arch: str = "sm_90a",
                 fp32_default: str | None = None) -> tuple[ops.ModuleOp, dict[str, Any], list[KernelDef]]:
    """Walk the kernel's AST with its runtime parameters typed by ``specs`` and its
    constexprs bound to ``constants``. Returns the module, the module-level globals the
    kernel read (so that a cached variant can be invalidated when they change) and the
    kernel functions it inlined, at any depth (whose sources the variant depends on)."""
    src = kernel.source
    module = ops.ModuleOp([], [], {"source": src.file}, [Region(Block())], src.loc(src.tree))
    # a runtime parameter without a spec was given None (specialize.py): a constant, as in Triton;
    # one given a tuple is its leaves (tuple_args.py)
    runtime = leaf_order([p for p in kernel.params if p not in kernel.constexpr_params], specs, constants)
    body = Block([specs[p].type for p in runtime], runtime)
    func = ops.FuncOp([], [], {"sym_name": src.name, "arg_divisibility": tuple(specs[p].divisibility for p in runtime),
                               "num_warps": num_warps}, [Region(body)], src.loc(src.tree))
    module.body.append(func)
    scope: dict[str, Any] = dict(constants)
    for p, arg in zip(runtime, body.args):
        scope[p] = 1 if specs[p].equals_one else wrap(arg)
    for p in kernel.params:
        if isinstance(constants.get(p), TupleArg):
            scope[p] = rebuild(constants[p], scope.__getitem__)
    builder = Builder(body, src.loc(src.tree))
    used: dict[str, Any] = {}
    gen = CodeGenerator(src, builder, scope, used_globals=used)
    kernel_facts = KernelFacts(num_warps, arch=arch, fp32_default=fp32_default)
    kernel_facts.const_pointers.update(id(arg) for p, arg in zip(runtime, body.args) if p in kernel.const_params)
    facts = KERNEL.set(kernel_facts)  # async_tasks place partitions after the kernel's warps
    try:
        gen.visit_block(src.tree.body)
    finally:
        KERNEL.reset(facts)
    if gen.ret is not None:
        raise CompilationError("TLXC-SYNTAX-001", f"a kernel cannot return a value (got {gen.ret!r})",
                               src.loc(src.tree))
    end = src.tree.body[-1]
    builder.loc = src.loc(end)
    builder.create(ops.ReturnOp, [])
    check_named_barriers(module)
    return module, used, gen.callees
