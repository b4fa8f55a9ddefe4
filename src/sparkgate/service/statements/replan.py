"""A streaming job's INSERTs as data, to prepare them again (strategy.Replanner).

An engine death or a gateway restart leaves a streaming job's checkpoints on
disk; what is lost is its plan. The job keeps the INSERT texts and the
runtime options they ran under, and plans them again, in the session they
ran in or one made again from the job's record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sparkgate.service.plan import planner
from sparkgate.service.session.session import Session
from sparkgate.service.streaming.strategy import InsertPlan, RuntimeOptions, plan_insert

__all__ = ["Replan"]


@dataclass(frozen=True)
class Replan:
    """The INSERTs ``texts`` under the options ``runtime``; ``compiled``: planned
    through the gateway's plan compiler (state TTL), as they first were."""

    texts: tuple[str, ...]
    runtime: Mapping[str, str] = field(default_factory=dict)
    compiled: bool = False

    @classmethod
    def of(cls, texts: Sequence[str], runtime: RuntimeOptions, *, compiled: bool = False) -> Replan:
        return cls(tuple(texts), runtime.snapshot(), compiled)

    @property
    def options(self) -> RuntimeOptions:
        snapshot = dict(self.runtime)
        return RuntimeOptions(snapshot.get, lambda: snapshot)

    def plans(self, session: Session) -> list[InsertPlan]:
        runtime = self.options
        if self.compiled:
            text = self.texts[0]
            plan = planner.compile_inserts(session, list(self.texts), runtime, text)
            return planner.insert_plans(session, plan, runtime)
        return [plan_insert(session, text, runtime) for text in self.texts]

    def to_json(self) -> dict[str, Any]:
        return {"texts": list(self.texts), "runtime": dict(self.runtime), "compiled": self.compiled}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Replan:
        return cls(
            tuple(str(t) for t in data.get("texts") or ()),
            {str(k): str(v) for k, v in (data.get("runtime") or {}).items()},
            bool(data.get("compiled")),
        )
