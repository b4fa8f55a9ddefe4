"""A catalog as the user defined it: name, options (``type`` among them) and comment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from sparkgate.sql.secrets import masked_options as masked

__all__ = ["TYPE_KEY", "CatalogDefinition"]

TYPE_KEY = "type"


def _frozen(options: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(options))


@dataclass(frozen=True)
class CatalogDefinition:
    """``CREATE CATALOG name [COMMENT comment] WITH (options)``; ``options`` holds ``type``."""

    name: str
    options: Mapping[str, str] = field(default_factory=dict, hash=False)
    comment: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", _frozen(self.options))

    @property
    def type(self) -> str:
        return self.options.get(TYPE_KEY, "")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "comment": self.comment, "options": dict(self.options)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CatalogDefinition:
        options = data.get("options") or {}
        comment = data.get("comment")
        return cls(
            str(data["name"]),
            {str(k): str(v) for k, v in options.items()},
            str(comment) if comment is not None else None,
        )

    def __repr__(self) -> str:  # never a secret in a log line or a traceback
        return f"CatalogDefinition({self.name!r}, {masked(self.options)!r}, {self.comment!r})"
