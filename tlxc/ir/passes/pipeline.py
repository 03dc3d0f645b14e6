"""The pass runner, and the stage of the pipeline that every target shares.

An entry is ``(name, run)`` for a pass -- ``run(module, options) -> module`` -- or
``(name, [entries])`` for a group that is repeated until the IR stops changing (at most
``options.max_iterations`` rounds; structural edits are counted). ``TILE_PIPELINE`` is the
target-independent stage that makes the tile IR (``asm["ir"]``, what the interpreter
runs); each target's whole pipeline is one list in ``codegen/<target>/pipeline.py`` that
starts with it. The CLI's ``--print-before``/``--print-after``/``--time-passes`` map onto
``run_pipeline``'s ``dump`` and ``timings`` arguments (``ir_dumper`` builds the former);
``pass_names`` lists the names a pipeline answers to.

A pass that fails with anything but a ``CompilationError`` is a bug in tlxc: it is
re-raised as an ``InternalCompilerError`` naming the pass and, where the pass knew it,
the user's line of the op it was rewriting.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from typing import Callable, Iterable, TextIO, Union

from ...errors import CompilationError, InternalCompilerError
from ..core import Location, Operation, VerificationError, edit_count
from ..printer import print_ir
from . import cse, dce, flatten_loops, fold, loop_unroll, multi_cta, reassociate_pointers, rebase_pointers
from .options import DEFAULT_OPTIONS, PassOptions
from .rewrite import tagged_op

PassFn = Callable[[Operation, PassOptions], Operation]
Entry = tuple[str, Union[PassFn, "list[Entry]"]]
# dump(when, pass_name, module), when being "before" or "after"
DumpHook = Callable[[str, str, Operation], None]

CANONICALIZE: list[Entry] = [
    ("fold", fold.run),
    ("cse", cse.run),
    ("dce", dce.run),
]

TILE_PIPELINE: list[Entry] = [
    ("multi-cta", multi_cta.run),  # tl.range(multi_cta=True): split over the cluster, sums combined
    ("flatten-loops", flatten_loops.run),  # tl.range(flatten=True): a loop nest fused into one loop
    ("loop-unroll", loop_unroll.run),  # tl.range(loop_unroll_factor=F): the body F times
    ("reassociate-pointers", reassociate_pointers.run),  # (base + row) + col -> (base + col) + row in loops
    ("rebase-pointers", rebase_pointers.run),  # p += splat(runtime s) carried as a scalar base + offsets
    ("canonicalize", CANONICALIZE),
]


def pass_names(entries: list[Entry]) -> list[str]:
    """Every name in ``entries``, groups and the passes inside them, in order, once each."""
    out: list[str] = []
    for name, what in entries:
        for n in [name] + (pass_names(what) if isinstance(what, list) else []):
            if n not in out:
                out.append(n)
    return out


def run_pipeline(
    module: Operation,
    options: PassOptions | None = None,
    passes: list[Entry] | None = None,
    *,
    verify_each: bool = False,
    dump: DumpHook | None = None,
    timings: dict[str, float] | None = None,
) -> Operation:
    """Run ``passes`` (default ``TILE_PIPELINE``) over ``module`` in order and return it.

    verify_each -- verify the input and the IR after every pass (the verifier of
                   ``tlxc.ir.verifier`` where it exists, else every op's ``verify()``);
    dump        -- called before and after every pass with ("before"|"after", name, module);
    timings     -- seconds spent in each pass are added to ``timings[name]``.
    """
    runner = _Runner(options or DEFAULT_OPTIONS, verify_each, dump, timings)
    if verify_each:
        runner.verify(module, "the input of the pass pipeline")
    return runner.run_list(module, TILE_PIPELINE if passes is None else passes)


def canonicalize(module: Operation, options: PassOptions | None = None) -> Operation:
    """Run ``CANONICALIZE`` to a fixed point."""
    return run_pipeline(module, options, [("canonicalize", CANONICALIZE)])


class _Runner:
    def __init__(self, options: PassOptions, verify_each: bool, dump: DumpHook | None,
                 timings: dict[str, float] | None) -> None:
        self.options = options
        self.verify_each = verify_each
        self.dump = dump
        self.timings = timings
        self.verifier = _find_verifier() if verify_each else None

    def run_list(self, module: Operation, entries: list[Entry]) -> Operation:
        for name, what in entries:
            if isinstance(what, list):
                module = self.run_group(module, name, what)
            else:
                module = self.run_pass(module, name, what)
        return module

    def run_group(self, module: Operation, name: str, entries: list[Entry]) -> Operation:
        """Run ``entries`` until a round leaves the module as it was: no structural edit
        (``core.edit_count``; passes edit only through the core's methods) and the same
        module object."""
        for _ in range(self.options.max_iterations):
            before, given = edit_count(), module
            module = self.run_list(module, entries)
            if edit_count() == before and module is given:
                break
        return module

    def run_pass(self, module: Operation, name: str, fn: PassFn) -> Operation:
        if self.dump is not None:
            self.dump("before", name, module)
        start = time.perf_counter()
        try:
            result = fn(module, self.options)
        except CompilationError:
            raise
        except Exception as e:
            op = tagged_op(e)
            raise InternalCompilerError(f"pass '{name}'", f"{type(e).__name__}: {e}", _loc(op)) from e
        if self.timings is not None:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start
        if not isinstance(result, Operation):
            raise InternalCompilerError(f"pass '{name}'", f"returned {result!r} instead of the module")
        if self.dump is not None:
            self.dump("after", name, result)
        if self.verify_each:
            self.verify(result, f"pass '{name}'")
        return result

    def verify(self, module: Operation, where: str) -> None:
        assert self.verifier is not None
        try:
            self.verifier(module)
        except VerificationError as e:
            raise InternalCompilerError(where, f"produced invalid IR: {e}", _loc(e.op)) from e



def _loc(op: Operation | None) -> Location | None:
    return op.loc if op is not None else None


def _find_verifier() -> Callable[[Operation], None]:
    if importlib.util.find_spec("tlxc.ir.verifier") is not None:
        from ..verifier import verify

        return verify
    return _verify_each_op


def _verify_each_op(module: Operation) -> None:
    for op in module.walk():
        op.verify()


def ir_dumper(before: Iterable[str] = (), after: Iterable[str] = (),
              stream: TextIO | None = None) -> DumpHook:
    """A ``dump`` hook that prints the IR before the passes named in ``before`` and after
    those in ``after`` (``"all"`` names every pass), MLIR-style."""
    before_set, after_set = set(before), set(after)

    def hook(when: str, name: str, module: Operation) -> None:
        wanted = before_set if when == "before" else after_set
        if name in wanted or "all" in wanted:
            out = stream if stream is not None else sys.stderr
            out.write(f"// -----// IR Dump {when.capitalize()} {name} //----- //\n")
            out.write(print_ir(module))

    return hook


def format_timings(timings: dict[str, float]) -> str:
    """A ``--time-passes`` report: one line per pass, slowest first, and the total."""
    total = sum(timings.values())
    lines = ["  time (ms)    share  pass"]
    for name, t in sorted(timings.items(), key=lambda kv: -kv[1]):
        share = 100.0 * t / total if total > 0 else 0.0
        lines.append(f"{t * 1e3:11.3f}  {share:6.1f}%  {name}")
    lines.append(f"{total * 1e3:11.3f}  100.0%  total")
    return "\n".join(lines) + "\n"
