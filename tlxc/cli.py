"""The ``tlxc`` command line.

    tlxc compile FILE --arch {sm_90a,sm_100a,gfx942,gfx950,gfx1250} [-k NAME]
                 [--signature SIG] [-D NAME=VALUE ...] [--emit ir|ptx|cubin|sass|llvm|amdgcn|hsaco]
                 [-o PATH] [--num-warps N] [--print-before PASS] [--print-after PASS] [--time-passes]

Errors print as compiler diagnostics (file:line:col, the line, a caret) and exit 1,
without a Python traceback.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import sys
from typing import Any, Sequence

from . import __version__
from .compiler import TARGETS, CompileOptions, compile_kernel
from .errors import CompilationError, TlxcError
from .ir.core import Location
from .ir.printer import print_ir

EMITS = {"ir": "ir", "ptx": "ptx", "cubin": "cubin", "sass": "sass", "llvm": "llir", "llir": "llir",
         "amdgcn": "amdgcn", "hsaco": "hsaco"}
_FAMILY = {"ptx": "sm_", "cubin": "sm_", "sass": "sm_", "llir": "gfx", "amdgcn": "gfx", "hsaco": "gfx"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tlxc", description="Compile TLX-style GPU kernels written in Python.")
    p.add_argument("--version", action="version", version=f"tlxc {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    c = sub.add_parser("compile", help="compile one kernel of a Python file",
                       description="Compile one @tlxc.kernel function of FILE for a target.")
    c.add_argument("file", metavar="FILE", help="Python file that defines the kernel")
    c.add_argument("--arch", required=True, metavar="ARCH", help=f"target: one of {', '.join(TARGETS)}")
    c.add_argument("-k", "--kernel", metavar="NAME", help="which kernel, when the file defines several")
    c.add_argument("--signature", metavar="SIG", default=None,
                   help='runtime argument types in Triton\'s form, e.g. "*fp16:16,i32,fp32" '
                        '(constexprs may be given inline, or with -D)')
    c.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="value of a tl.constexpr parameter (Python literal or dtype name such as float16)")
    c.add_argument("--emit", default="ir", choices=sorted(EMITS), help="what to write (default: ir)")
    c.add_argument("-o", "--output", metavar="PATH", help="write the output here instead of stdout")
    c.add_argument("--num-warps", type=int, default=4, metavar="N", help="warps per program (default 4)")
    c.add_argument("--print-before", action="append", default=[], metavar="PASS",
                   help="print the IR before the named pass (or 'all')")
    c.add_argument("--print-after", action="append", default=[], metavar="PASS",
                   help="print the IR after the named pass (or 'all')")
    c.add_argument("--time-passes", action="store_true", help="print the time spent in each compiler stage")
    c.add_argument("--verify-each", action="store_true", help="verify the IR after every pass")
    return p


def parse_define(text: str) -> tuple[str, Any]:
    from .ir.types import BY_NAME, BY_SIG_NAME, BY_TL_NAME

    if "=" not in text:
        raise CompilationError("TLXC-SIG-001", f"-D {text}: expected NAME=VALUE")
    name, raw = text.split("=", 1)
    raw = raw.strip()
    short = raw.split(".")[-1]
    if raw.startswith(("tl.", "tlxc.language.")) or short in BY_TL_NAME:
        if short in BY_TL_NAME:
            return name.strip(), BY_TL_NAME[short]
    if raw in BY_SIG_NAME or raw in BY_NAME:
        return name.strip(), BY_SIG_NAME.get(raw) or BY_NAME[raw]
    try:
        return name.strip(), ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return name.strip(), raw


def load_module(path: str) -> Any:
    if not os.path.exists(path):
        raise CompilationError("TLXC-CLI-002", f"no such file: {path}")
    name = "_tlxc_cli_" + "".join(ch if ch.isalnum() else "_" for ch in os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, os.path.abspath(path))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    return module


def find_kernel(module: Any, path: str, name: str | None) -> Any:
    from .kernels.function import KernelFunction

    kernels = {k: v for k, v in vars(module).items()
               if isinstance(v, KernelFunction) and v.fn.__module__ == module.__name__ and k == v.__name__}
    file_loc = Location(os.path.abspath(path), 1, 0)
    if name is not None:
        if name not in kernels:
            found = ", ".join(sorted(kernels)) or "none"
            raise CompilationError("TLXC-CLI-002", f"no kernel named '{name}' in {path} (kernels: {found})", file_loc)
        return kernels[name]
    if not kernels:
        raise CompilationError("TLXC-CLI-002", f"{path} defines no @tlxc.kernel function", file_loc)
    if len(kernels) == 1:
        return next(iter(kernels.values()))
    # helpers that other kernels call are not candidates: pick the one kernel nobody calls
    called = set()
    for k in kernels.values():
        for node in ast.walk(k.source.tree):
            if isinstance(node, ast.Name) and node.id in kernels and node.id != k.__name__:
                called.add(node.id)
    top = [k for n, k in kernels.items() if n not in called]
    if len(top) == 1:
        return top[0]
    names = ", ".join(f"{k.__name__} (line {k.source.tree.lineno})" for k in (top or kernels.values()))
    raise CompilationError("TLXC-CLI-002", f"{path} defines several kernels: {names}; choose one with -k NAME",
                           file_loc)


def compile_command(args: argparse.Namespace) -> int:
    if args.arch not in TARGETS:
        raise CompilationError("TLXC-CLI-001", f"unknown target architecture {args.arch!r}; choose one of "
                               f"{', '.join(TARGETS)}")
    what = EMITS[args.emit]
    if what in _FAMILY and not args.arch.startswith(_FAMILY[what]):
        raise CompilationError("TLXC-CLI-003", f"--emit {args.emit} is not an output of {args.arch}; "
                               f"{'NVIDIA' if args.arch.startswith('sm_') else 'AMD'} targets give "
                               f"{'ptx, cubin, sass' if args.arch.startswith('sm_') else 'llvm, amdgcn, hsaco'} "
                               "and ir")
    if what == "cubin":
        from .codegen.nvptx.toolchain import find_tool

        if find_tool("ptxas") is None:
            raise CompilationError("TLXC-TOOL-001", "--emit cubin needs ptxas, which was not found")
    module = load_module(args.file)
    kernel = find_kernel(module, args.file, args.kernel)
    constants = dict(parse_define(d) for d in args.defines)
    options = CompileOptions(args.arch, args.num_warps, verify_each_pass=args.verify_each)
    options.check(None)
    specs, consts = kernel.resolve_aot(args.signature, constants, None)

    def dump(when: str, name: str, ir: Any) -> None:
        wanted = args.print_before if when == "before" else args.print_after
        if name in wanted or "all" in wanted:
            sys.stderr.write(f"// -----// IR {when} {name} //----- //\n{print_ir(ir)}\n")

    compiled = compile_kernel(kernel, specs, consts, options,
                              dump=dump if (args.print_before or args.print_after) else None)
    text = compiled.asm[what]
    if what in ("cubin", "hsaco") and not args.output:
        raise CompilationError("TLXC-CLI-003", f"--emit {args.emit} writes a binary: give -o PATH")
    if args.output:
        mode = "wb" if isinstance(text, bytes) else "w"
        with open(args.output, mode) as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.time_passes and what in ("ptx", "cubin", "sass"):
        compiled.asm["ptx"]  # make sure the code generator ran, so its stages are timed
    if args.time_passes and what in ("llir", "amdgcn", "hsaco"):
        compiled.asm["amdgcn"]
    if args.time_passes:
        total = sum(compiled.timings.values())
        sys.stderr.write("stage            seconds\n")
        for k, v in compiled.timings.items():
            sys.stderr.write(f"{k:<16} {v:8.4f}\n")
        sys.stderr.write(f"{'total':<16} {total:8.4f}\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return compile_command(args)
    except TlxcError as e:
        sys.stderr.write(f"{e}\n")
        return 1
    except SyntaxError as e:
        sys.stderr.write(f"{e.filename}:{e.lineno}:{e.offset}: error: {e.msg}\n")
        return 1
    except Exception as e:  # the user's file failed while being imported
        sys.stderr.write(f"error: cannot load {args.file}: {type(e).__name__}: {e}\n")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
