"""sparkgate."""

from __future__ import annotations

__all__ = ["version"]


def version() -> str:
    """The installed package's version ("0.0.0" when run from a bare source tree)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("sparkgate")
    except PackageNotFoundError:
        return "0.0.0"
