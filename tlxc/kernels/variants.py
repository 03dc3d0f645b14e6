"""The compiled variants of a kernel, in memory: ``VariantCache`` (``kernel.cache``), and
``global_value``, with which a lookup (``KernelFunction.get_compiled``) checks that the
module globals a variant read still hold their values."""

from __future__ import annotations

import sys
from typing import Any

from ..language.core import constexpr


class VariantCache(dict):
    """``KernelFunction.cache``: a dict that empties the fast table (``fast``) when an
    entry is replaced or removed (a new one leaves the table as it is)."""

    fast: dict[Any, Any] | None = None

    def _changed(self) -> None:
        if self.fast is not None:
            self.fast.clear()

    def __setitem__(self, key: Any, value: Any) -> None:
        if key in self:
            self._changed()
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        self._changed()

    def clear(self) -> None:
        super().clear()
        self._changed()

    def pop(self, *args: Any) -> Any:
        self._changed()
        return super().pop(*args)

    def popitem(self) -> Any:
        self._changed()
        return super().popitem()

    def update(self, *args: Any, **kwargs: Any) -> None:
        super().update(*args, **kwargs)
        self._changed()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._changed()
        return super().setdefault(key, default)


def global_value(qualified: str) -> Any:
    """The value that the module global ``module.name`` holds now (None if it has none)."""
    module, _, name = qualified.rpartition(".")
    mod = sys.modules.get(module)
    v = getattr(mod, name, None) if mod is not None else None
    return v.value if isinstance(v, constexpr) else v
