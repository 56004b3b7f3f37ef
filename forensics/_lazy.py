"""Names a package exports but imports only on first use (PEP 562), so start-up stays fast.

    __getattr__, __dir__ = lazy_exports(__name__, {"analyze": ".analysis", ...})

`import forensics`, `forensics --version` and the text report then load neither pandas nor
matplotlib until a name that needs them is used.
"""
from __future__ import annotations

import importlib
import sys
from typing import Callable


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module-level `__getattr__` and `__dir__` of `package` for `exports` (name -> relative module)."""

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # the next access is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
