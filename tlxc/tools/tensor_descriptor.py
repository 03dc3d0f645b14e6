"""``tlxc.tools.tensor_descriptor.TensorDescriptor``, Triton's import path for
``tlxc.TensorDescriptor`` (drop-in rule, DESIGN.md)."""

from ..tensor_descriptor import TensorDescriptor

__all__ = ["TensorDescriptor"]
