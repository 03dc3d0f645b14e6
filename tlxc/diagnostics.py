"""The catalog of user-facing diagnostics: one stable code per mistake, with the message
in the user's terms and how to fix it. Every code has a negative test
(``tests/test_errors.py``) that checks the code, the line and the caret."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Diagnostic:
    code: str
    summary: str
    help: str


_ENTRIES = [
    Diagnostic("TLXC-NAME-001", "undefined name",
               "define the name before use, pass it as an argument, or make it a module-level tl.constexpr"),
    Diagnostic("TLXC-NAME-002", "a Triton builtin that tlxc does not support yet",
               "write it with the builtins tlxc has, or run the kernel with Triton for now"),
    Diagnostic("TLXC-SYNTAX-001", "unsupported Python construct",
               "kernels support assignments, arithmetic, if/for/while, calls to tl.* and @tlxc.kernel "
               "functions, tuples and return; rewrite the construct with those"),
    Diagnostic("TLXC-CALL-001", "call to a plain Python function",
               "decorate the function with @tlxc.kernel (it will be inlined), or compute the value "
               "outside the kernel and pass it as a tl.constexpr"),
    Diagnostic("TLXC-CALL-002", "wrong arguments to a builtin or kernel function",
               "check the function's parameters"),
    Diagnostic("TLXC-SHAPE-001", "incompatible shapes",
               "shapes broadcast when, dimension by dimension from the right, they are equal or one of them is 1"),
    Diagnostic("TLXC-SHAPE-002", "arange length is not a power of two",
               "tile dimensions must be powers of two; round the block size up and mask the extra elements"),
    Diagnostic("TLXC-SHAPE-003", "invalid shape or axis", "check the tile's shape"),
    Diagnostic("TLXC-CONSTEXPR-001", "value must be a compile-time constant",
               "pass the value as a `tl.constexpr` parameter, or annotate the local `NAME: tl.constexpr = ...`; "
               "a plain assignment makes a runtime value"),
    Diagnostic("TLXC-TYPE-001", "invalid operand type", "convert the operand with .to(dtype)"),
    Diagnostic("TLXC-TYPE-002", "branches or loop iterations bind different types",
               "give the variable the same dtype and shape on every path, e.g. with .to(dtype)"),
    Diagnostic("TLXC-DOT-001", "tl.dot operands do not fit",
               "a is [M, K], b is [K, N] and acc is [M, N], all of rank 2 (or 3 with a batch); "
               "K is at least 16 for 8- and 16-bit operands, 8 for 32-bit and 4 for 64-bit ones"),
    Diagnostic("TLXC-DOT-002", "tl.dot operand dtypes differ",
               "convert both operands to one dtype with .to(...)"),
    Diagnostic("TLXC-MEM-001", "store or load through a value that is not a pointer",
               "pass the tensor as a pointer argument and index it: ptr + offsets"),
    Diagnostic("TLXC-LOOP-001", "loop-carried value changes type",
               "initialise the variable before the loop with the type it has inside the loop, "
               "e.g. acc = tl.zeros([M, N], dtype=tl.float32)"),
    Diagnostic("TLXC-LOOP-002", "a multi_cta loop that cannot be split over the CTAs of a cluster",
               "a multi_cta loop may only accumulate sums (acc += x) whose results are reduced with tl.sum "
               "after the loop"),
    Diagnostic("TLXC-ASSERT-001", "static assertion failed", "the condition is false at compile time"),
    Diagnostic("TLXC-LAUNCH-001", "wrong number of kernel arguments",
               "pass one value per kernel parameter (constexprs may be given by keyword)"),
    Diagnostic("TLXC-LAUNCH-002", "constexpr parameter has no value",
               "give every tl.constexpr parameter a value, by keyword or through a default"),
    Diagnostic("TLXC-LAUNCH-003", "invalid kernel argument",
               "pass numpy arrays (interpreter), GPU tensors, or Python/numpy scalars"),
    Diagnostic("TLXC-OPTION-001", "a launch or compile option that tlxc cannot honour, or a bad value for one",
               "leave the option out or give its default; the message says which options tlxc supports instead "
               "(e.g. ctas_per_cga for clusters)"),
    Diagnostic("TLXC-PROFILER-001", "a part of proton's API or an option of it that tlxc.profiler does not implement",
               "tlxc.profiler has sessions, nested scopes with metrics, kernel launches (hook=\"triton\") and the "
               "tree viewer; leave the option at its default"),
    Diagnostic("TLXC-PROFILER-002", "the profiler used out of order",
               "start a session before activating or finalizing it, and exit scopes in the order they were entered"),
    Diagnostic("TLXC-SIG-001", "invalid signature", "use Triton's form, e.g. \"*fp16:16,i32,fp32\""),
    Diagnostic("TLXC-CLI-001", "unknown target architecture",
               "NVIDIA targets are sm_90a (Hopper) and sm_100a (Blackwell); AMD targets are gfx942, gfx950 "
               "and gfx1250"),
    Diagnostic("TLXC-CLI-002", "no single kernel to compile",
               "the file must define a @tlxc.kernel function; pick one with -k NAME when there are several"),
    Diagnostic("TLXC-CLI-003", "output not produced for this target, or a binary output without -o",
               "NVIDIA targets give ptx, cubin and sass, AMD ones llvm, amdgcn and hsaco (all give ir); "
               "write cubin and hsaco to a file with -o PATH"),
    Diagnostic("TLXC-CLI-004", "the input file cannot be loaded",
               "give a Python source file that defines the kernel; a program in it belongs under "
               "`if __name__ == \"__main__\":`, so that importing the file only defines things"),
    Diagnostic("TLXC-CLI-005", "the output file cannot be written",
               "check that the folder of -o PATH exists and is writable, and that PATH is not a folder"),
    Diagnostic("TLXC-CLI-006", "conflicting command-line options",
               "give each -D NAME once, and only the options of the target's family (--maxnreg: NVIDIA, "
               "--waves-per-eu: AMD)"),
    Diagnostic("TLXC-CLI-007", "no pass of that name in the target's pipeline",
               "name a pass the message lists (tlxc compile FILE --arch ARCH --print-after all shows them all)"),
    Diagnostic("TLXC-CODEGEN-001", "construct not supported by this target's code generator yet",
               "run it in the interpreter, or rewrite it with supported operations; see the message for which"),
    Diagnostic("TLXC-RESOURCE-001", "the kernel needs more of a hardware resource than the target has",
               "use smaller blocks (BLOCK sizes), fewer stages, or more warps"),
    Diagnostic("TLXC-TOOL-001", "a required tool was not found",
               "install the CUDA extra (pip install 'tlxc[cuda]') or a CUDA toolkit"),
    Diagnostic("TLXC-TOOL-002", "a tool failed", "see the tool's message"),
    Diagnostic("TLXC-INTERP-001", "out-of-bounds memory access",
               "mask the load or store (mask=offsets < n) or check the grid and block sizes"),
    Diagnostic("TLXC-INTERP-002", "device assertion failed", "the condition was false while running"),
    Diagnostic("TLXC-INTERP-003", "loop with a zero step",
               "a range step of zero never ends; check the value passed as the step"),
    Diagnostic("TLXC-TLX-001", "invalid use of a TLX buffer",
               "allocate with tlx.local_alloc(shape, dtype, NUM) (NUM a tl.constexpr), index the array (bufs[i]) "
               "to get one buffer, and pass register tiles of the buffer's shape and dtype"),
    Diagnostic("TLXC-TLX-002", "invalid use of an mbarrier or named barrier",
               "allocate mbarriers with tlx.alloc_barriers and index them (bars[i]); named barriers take ids 1..15 "
               "and the same multiple-of-32 thread count at every wait and arrive"),
    Diagnostic("TLXC-TLX-003", "a TMA copy the hardware cannot do",
               "TMA blocks have 1-5 dimensions of at most 256 elements, an inner dimension of at least 16 bytes, "
               "and tensors whose strides (except the last, which is 1) are multiples of 16 bytes"),
    Diagnostic("TLXC-TLX-004", "an async_dot the tensor cores cannot do",
               "use M a multiple of 64, N a multiple of 8 up to 256, and K a multiple of the instruction's K step"),
    Diagnostic("TLXC-TLX-005", "TLX operation not supported by tlxc or by this target yet",
               "see the message for what is missing; the interpreter and the listed alternatives work"),
    Diagnostic("TLXC-TLX-006", "operation not available on this target",
               "AMD operations (tlx.amd_*, AMD register layouts) compile for gfx942, gfx950 and gfx1250; NVIDIA "
               "ones (TMA, async_dot, barrier_expect_bytes, named barriers, fences, tensor memory) for sm_90a and "
               "sm_100a; keep target-specific code under a tl.constexpr flag"),
    Diagnostic("TLXC-TLX-008", "a peer CTA named in a kernel launched without clusters",
               "launch with ctas_per_cga=(n, 1, 1) for clusters of n CTAs (NVIDIA), or keep the cluster path under "
               "a tl.constexpr flag (PTX ISA: mapa, barrier.cluster, .multicast::cluster need a cluster)"),
    Diagnostic("TLXC-TLX-007", "invalid register-layout or MFMA-scheduling operation",
               "amd_scheduled_mfma takes bf16 or fp16 a [M, K] and b [K, N] in dot-operand layouts (k_width 4 or "
               "8) of acc's MFMA layout and an fp32 acc [M, N], all of rank 2 (or 3 with a batch); registers come "
               "in groups of 1, 2, 4, 8, 16 or 32; layouts are tlx.amd_mfma_layout, tlx.dot_operand_layout or "
               "tlx.amd_wmma_layout"),
    Diagnostic("TLXC-WS-001", "invalid warp-specialization structure",
               "`with tlx.async_tasks():` holds only `with tlx.async_task(...):` blocks (or a constexpr if around "
               "them), exactly one of them async_task('default'); async_task and async_task_replica_id() are only "
               "valid inside it"),
    Diagnostic("TLXC-WS-002", "invalid async_task or async_tasks option",
               "async_task('default', num_regs=R, replicate=N) or async_task(num_warps=W, num_regs=R, replicate=N, "
               "warp_group_start_id=S): W a power of two, R a multiple of 8 in [24, 256] given on every non-default "
               "task or on none; async_tasks takes exclusive, no_ending_cluster_sync, mbarrier_try_wait_suspend_ns"),
    Diagnostic("TLXC-WS-003", "invalid warp placement of the tasks",
               "give warp_group_start_id on every non-default task or on none, with ranges [S, S + num_warps * "
               "replicate) that do not overlap each other or the default task's warps [0, num_warps)"),
    Diagnostic("TLXC-WS-004", "a register tensor used across the async_tasks boundary",
               "compute the tile inside the task that uses it, or pass it through a shared-memory buffer"),
    Diagnostic("TLXC-INTERP-004", "deadlock: a barrier wait that can never return",
               "check the barrier's arrive count, the expected bytes and the phase passed to barrier_wait"),
    Diagnostic("TLXC-INTERP-005", "a buffer read before its data arrived",
               "wait for asynchronous copies (barrier_wait for TMA, async_load_wait_group for async_load) before "
               "reading their buffers, and write a buffer before reading it"),
    Diagnostic("TLXC-INTERP-006", "a per-thread value in the interpreter",
               "the interpreter runs each program as a whole; avoid tlx.thread_id in kernels you interpret"),
    Diagnostic("TLXC-INTERP-007", "a buffer overwritten while a TMA store still reads it",
               "wait with tlx.async_descriptor_store_wait(pendings) -- at most `pendings` stores stay outstanding -- "
               "before writing the store's source buffer again, or store from another buffer (PTX ISA: "
               "cp.async.bulk.wait_group.read)"),
    Diagnostic("TLXC-INTERP-008", "inline assembly in the interpreter",
               "the interpreter cannot execute PTX: run the kernel on the GPU, or keep tl.inline_asm_elementwise on a "
               "path the interpreted launch does not take"),
    Diagnostic("TLXC-INTERNAL-001", "internal compiler error", "this is a bug in tlxc; please report it"),
]

CATALOG: dict[str, Diagnostic] = {d.code: d for d in _ENTRIES}
