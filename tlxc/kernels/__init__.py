"""The JIT layer, above the compiler: the kernel object behind ``@tlxc.kernel`` (alias
``tlxc.jit``), specialization at call time, the variant cache in memory and on disk,
the launch path and the autotuner.

It calls the frontend and the compile driver (``tlxc.compiler``) and hands compiled
variants to the runtime; nothing below it imports it (tests/test_layering.py).

Why this package is called ``kernels`` and not ``jit``: ``tlxc.jit`` is the decorator
(Triton's spelling), and importing a submodule ``tlxc.jit`` would make Python set the
attribute ``tlxc.jit`` to the module, replacing the decorator -- or the package would
have to make its module object callable. A package with another name keeps the two apart.

Modules, one idea each: ``function`` (the kernel object and how a launch binds and
specializes its arguments), ``variants`` (the in-memory variant cache),
``options`` (launch and compile options: which are honoured, which refused),
``launch`` (``kernel[grid]``: the slow and fast paths), ``disk`` (the on-disk cache
shared by processes), ``autotune`` (``Config``, ``autotune``, ``heuristics``),
``tune_cache`` (autotuning results kept on disk).
"""
