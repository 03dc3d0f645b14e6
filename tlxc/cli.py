"""The ``tlxc`` command line.

    tlxc compile FILE --arch {sm_90a,sm_100a,gfx942,gfx950,gfx1250} [-k NAME]
                 [--signature SIG] [-D NAME=VALUE ...] [--emit ir|ptx|cubin|sass|llvm|amdgcn|hsaco]
                 [-o PATH] [--num-warps N] [--num-stages N] [--maxnreg N] [--waves-per-eu N]
                 [--print-before PASS] [--print-after PASS] [--time-passes]

Errors print as compiler diagnostics (file:line:col, the line, a caret) and exit 1,
without a Python traceback; that includes a FILE that cannot be loaded (not a Python
source file, a syntax error, an exception or ``sys.exit`` while it is imported) and an
output path that cannot be written. An interrupted compile (Ctrl-C, SIGTERM) stops the
tool it was running and removes its temporary folder (``tlxc.runtime.child``).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import stat
import sys
import traceback
from typing import Any, NoReturn, Sequence

from . import __version__
from .compiler import TARGETS, CompileOptions, compile_kernel
from .errors import CompilationError, TlxcError
from .ir.core import Location
from .ir.printer import print_ir

EMITS = {"ir": "ir", "target-ir": "target_ir", "ptx": "ptx", "cubin": "cubin", "sass": "sass", "llvm": "llir",
         "llir": "llir", "amdgcn": "amdgcn", "hsaco": "hsaco"}
_FAMILY = {"ptx": "sm_", "cubin": "sm_", "sass": "sm_", "llir": "gfx", "amdgcn": "gfx", "hsaco": "gfx"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tlxc", description="Compile TLX-style GPU kernels written in Python.",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
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
    c.add_argument("--num-stages", type=_positive, default=3, metavar="N",
                   help="Triton's num_stages, as kernel.compile(num_stages=N) takes it (default 3): the loads "
                        "that feed tl.dot in a loop are issued N-1 iterations ahead (loops in warp-specialized "
                        "partitions are the user's own pipelines and stay as written)")
    c.add_argument("--maxnreg", type=int, default=None, metavar="N",
                   help="NVIDIA: at most N registers per thread (16-255; PTX .maxnreg)")
    c.add_argument("--waves-per-eu", type=int, default=0, metavar="N",
                   help="AMD: waves each SIMD should hold at least (LLVM's amdgpu-waves-per-eu; default 0: LLVM "
                        "decides); refused for NVIDIA targets")
    c.add_argument("--print-before", action="append", default=[], metavar="PASS",
                   help="print the IR before the named pass of the target's pipeline (or 'all'); "
                        "runs the whole pipeline")
    c.add_argument("--print-after", action="append", default=[], metavar="PASS",
                   help="print the IR after the named pass of the target's pipeline (or 'all'); "
                        "runs the whole pipeline")
    c.add_argument("--time-passes", action="store_true", help="print the time spent in each compiler stage")
    c.add_argument("--verify-each", action="store_true", help="verify the IR after every pass")
    # `tlxc --help` shows the options of every command, not only the command names
    p.epilog = "\n".join(f"{name} options:\n" + _options_help(sp) for name, sp in sub.choices.items())
    return p


def _options_help(parser: argparse.ArgumentParser) -> str:
    text = parser.format_help()
    start = text.find("positional arguments:")
    return text[start:] if start >= 0 else text


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of 1 or more, got {value}")
    return value


def parse_defines(texts: Sequence[str]) -> dict[str, Any]:
    """The -D values by name; a name given twice is refused (which one was meant?)."""
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    for text in texts:
        name, value = parse_define(text)
        if name in given:
            raise CompilationError("TLXC-CLI-006", f"-D {name} is given twice: -D {given[name]} and -D {text}",
                                   help=f"give -D {name}=VALUE once")
        given[name] = text
        out[name] = value
    return out


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


def _load_error(path: str, message: str, loc: Location | None = None, help: str | None = None) -> NoReturn:
    raise CompilationError("TLXC-CLI-004", message, loc or Location(os.path.abspath(path), 0, 0), help)


def read_source(path: str) -> str:
    """The text of the Python file FILE; anything else (a folder, a device or pipe such as
    /dev/stdin, a binary file) is refused with what it is. The source must be a file
    because the frontend reads each kernel's source back (inspect), as Triton does."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise CompilationError("TLXC-CLI-002", f"no such file: {path}") from None
    except OSError as e:
        _load_error(path, f"cannot read {path}: {e.strerror}")
    if stat.S_ISDIR(st.st_mode):
        _load_error(path, f"{path} is a directory, not a Python file", help="give the .py file that defines "
                    "the kernel")
    if not stat.S_ISREG(st.st_mode):
        _load_error(path, f"{path} is not a regular file (a device, pipe or socket)", help="save the source to "
                    "a .py file: tlxc reads each kernel's source back from its file")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        _load_error(path, f"cannot read {path}: {e.strerror}")
    if b"\0" in data:
        _load_error(path, f"{path} is not a Python source file: it contains NUL bytes (a binary file?)")
    try:
        return data.decode("utf-8")  # PEP 3120; a coding cookie for another encoding is rare enough
    except UnicodeDecodeError as e:
        _load_error(path, f"{path} is not a Python source file: byte {e.start} is not UTF-8 text")


def _user_frame(tb: Any, path: str) -> Location | None:
    """The innermost line of FILE in a traceback (where the file failed), or None."""
    where = None
    for frame in traceback.extract_tb(tb):
        if os.path.abspath(frame.filename) == path and frame.lineno:
            line = frame.lineno
            col = (frame.colno or 0) if hasattr(frame, "colno") else 0
            end = getattr(frame, "end_colno", None) if getattr(frame, "end_lineno", line) == line else None
            where = Location(path, line, col, end)
    return where


def load_module(path: str) -> Any:
    source = read_source(path)
    full = os.path.abspath(path)
    try:
        code = compile(source, full, "exec", dont_inherit=True)
    except SyntaxError as e:  # IndentationError and TabError too
        line = e.lineno or 0
        col = max((e.offset or 1) - 1, 0)
        end = e.end_offset - 1 if e.end_lineno == e.lineno and e.end_offset and e.end_offset - 1 > col else None
        _load_error(path, f"syntax error: {e.msg}", Location(full, line, col, end))
    name = "_tlxc_cli_" + "".join(ch if ch.isalnum() else "_" for ch in os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, full)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, os.path.dirname(full))
    try:
        exec(code, vars(module))
    except SystemExit as e:
        status = e.code if e.code is not None else 0
        _load_error(path, f"{path} called sys.exit({status!r}) while it was loaded, before a kernel could be "
                    "compiled", _user_frame(e.__traceback__, full),
                    "put the file's program under `if __name__ == \"__main__\":`")
    except TlxcError:
        raise
    except Exception as e:
        _load_error(path, f"cannot load {path}: it raised {type(e).__name__}: {e}", _user_frame(e.__traceback__, full))
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
    if what in ("cubin", "sass"):
        from .codegen.nvptx.toolchain import find_tool

        for tool in ("ptxas", "nvdisasm") if what == "sass" else ("ptxas",):
            if find_tool(tool) is None:
                raise CompilationError("TLXC-TOOL-001", f"--emit {args.emit} needs {tool}, which was not found")
    if args.waves_per_eu and args.arch.startswith("sm_"):
        raise CompilationError("TLXC-CLI-006", f"--waves-per-eu is an AMD option; {args.arch} has no use for it")
    if args.maxnreg is not None and args.arch.startswith("gfx"):
        raise CompilationError("TLXC-CLI-006", f"--maxnreg is an NVIDIA option; {args.arch} has no use for it",
                               help="on AMD targets, --waves-per-eu sizes the register budget")
    constants = parse_defines(args.defines)
    options = CompileOptions(args.arch, args.num_warps, num_stages=args.num_stages, verify_each_pass=args.verify_each,
                             maxnreg=args.maxnreg, waves_per_eu=args.waves_per_eu)
    options.check(None)
    check_pass_names(args.arch, args.print_before + args.print_after)
    module = load_module(args.file)
    kernel = find_kernel(module, args.file, args.kernel)
    specs, consts = kernel.resolve_aot(args.signature, constants, None)

    def dump(when: str, name: str, ir: Any) -> None:
        wanted = args.print_before if when == "before" else args.print_after
        if name in wanted or "all" in wanted:
            sys.stderr.write(f"// -----// IR {when} {name} //----- //\n{print_ir(ir)}\n")

    printing = bool(args.print_before or args.print_after)
    compiled = compile_kernel(kernel, specs, consts, options, dump=dump if printing else None)
    if printing or args.time_passes:
        compiled.lowered()  # the target's passes print (and are timed) whatever is emitted
    text = compiled.asm[what]
    if what in ("cubin", "hsaco") and not args.output:
        raise CompilationError("TLXC-CLI-003", f"--emit {args.emit} writes a binary: give -o PATH")
    if args.output:
        write_output(args.output, text)
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


def check_pass_names(arch: str, names: list[str]) -> None:
    """``--print-before``/``--print-after`` name passes of ``arch``'s pipeline, or ``all``."""
    from .codegen.targets import backend
    from .ir.passes.pipeline import pass_names

    known = pass_names(backend(arch).pipeline)
    unknown = [n for n in names if n != "all" and n not in known]
    if unknown:
        raise CompilationError("TLXC-CLI-007", f"no pass named {', '.join(map(repr, unknown))} in the {arch} "
                               f"pipeline; its passes are: {', '.join(known)} (or 'all')")


def write_output(path: str, data: str | bytes) -> None:
    try:
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
    except OSError as e:
        why = e.strerror or str(e)
        raise CompilationError("TLXC-CLI-005", f"cannot write the output file {path}: {why}") from None


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
    except KeyboardInterrupt:
        sys.stderr.write("tlxc: interrupted\n")
        return 130
    except Exception as e:  # a bug in tlxc: one diagnostic, not a traceback
        bug = CompilationError("TLXC-INTERNAL-001", f"internal compiler error: {type(e).__name__}: {e}")
        sys.stderr.write(f"{bug}\n")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
