"""The CPU interpreter: runs a kernel's tile IR with numpy, the backbone of CI.

Layout of the package:

* ``numerics`` -- conversions and rounding that behave like the GPU (fp8 saturation,
  single rounding to bf16, round toward zero, float->int saturation, tf32);
* ``memory`` -- the virtual address space that maps pointers onto the caller's arrays,
  with bounds and alignment checks;
* ``registry`` -- the tables of rules, one per op class;
* ``compiler`` -- turns the IR into closures over value slots, once per launch;
* ``rules/`` -- the rules, one module per area (arith, shape, reduce, memory, misc,
  control);
* ``run`` -- ``run_kernel``, the driver.

Values are numpy arrays of the IR type's numpy dtype (``numpy_dtype``; int64 addresses for
pointers), 0-d for scalars. Rules never write into a value, so tiles may be read-only
views (``broadcast_to``, ``transpose``) shared between values.
"""

from .run import run_kernel  # noqa: F401

__all__ = ["run_kernel"]
