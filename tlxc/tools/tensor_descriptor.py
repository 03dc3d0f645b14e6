"""``tlxc.tools.tensor_descriptor.TensorDescriptor``, Triton's import path for
``tlxc.TensorDescriptor`` (code written for Triton runs unchanged)."""

from ..tensor_descriptor import TensorDescriptor

__all__ = ["TensorDescriptor"]
