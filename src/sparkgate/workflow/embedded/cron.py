"""Quartz cron expressions (Flink's) as APScheduler cron triggers.

Quartz has six or seven fields: seconds, minutes, hours, day of month,
month, day of week (1 = Sunday), year; ``?`` means "no specific value" and
``a/n`` "from a, every n". APScheduler writes the latter ``a-max/n`` and
numbers days of the week from 0 = Monday.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sparkgate.api.workflow import WorkflowError

__all__ = ["cron_trigger", "last_fire_time"]

# (APScheduler field, largest value) in Quartz's field order.
_FIELDS = (
    ("second", 59),
    ("minute", 59),
    ("hour", 23),
    ("day", 31),
    ("month", 12),
    ("day_of_week", 7),
    ("year", 2099),
)
# How far back the last fire time is looked for, nearest first.
_LOOK_BACK = (
    timedelta(seconds=1),
    timedelta(minutes=1),
    timedelta(hours=1),
    timedelta(days=1),
    timedelta(days=32),
    timedelta(days=367),
)


def _day_of_week(value: str) -> str:
    """Quartz's 1..7 (Sunday first) as APScheduler's 0..6 (Monday first); names stay."""
    if value.isdigit():
        number = int(value)
        if not 1 <= number <= 7:
            raise ValueError(f"day of week {value} is not in 1-7")
        return str((number + 5) % 7)
    return value.lower()


def _field(name: str, largest: int, text: str) -> str | None:
    if text == "?":
        return None
    if "/" in text:
        start, step = text.split("/", 1)
        if start in ("*", ""):
            return f"*/{step}"
        if name == "day_of_week":
            start = _day_of_week(start)
            largest = 6
        return f"{start}-{largest}/{step}"
    if name == "day_of_week" and text != "*":
        parts = []
        for item in text.split(","):
            bounds = item.split("-")
            parts.append("-".join(_day_of_week(b) for b in bounds))
        return ",".join(parts)
    return text


def cron_trigger(expression: str) -> Any:
    """The APScheduler trigger of a Quartz cron expression, in the local time zone."""
    from apscheduler.triggers.cron import CronTrigger

    fields = expression.split()
    if len(fields) not in (6, 7):
        raise WorkflowError(
            f"Not a cron expression of six or seven fields (Quartz syntax): '{expression}'"
        )
    kwargs: dict[str, str] = {}
    try:
        for (name, largest), text in zip(_FIELDS, fields, strict=False):
            value = _field(name, largest, text)
            if value is not None:
                kwargs[name] = value
        return CronTrigger(timezone=datetime.now().astimezone().tzinfo, **kwargs)
    except ValueError as exc:
        raise WorkflowError(f"Invalid cron expression '{expression}': {exc}") from exc


def last_fire_time(expression: str, now: datetime) -> datetime | None:
    """The latest fire time of ``expression`` at or before ``now`` (aware), if any
    within a year: the schedule time of the fire that runs now."""
    trigger = cron_trigger(expression)
    for back in _LOOK_BACK:
        found = trigger.get_next_fire_time(None, now - back)
        if found is not None and found <= now:
            while True:
                following = trigger.get_next_fire_time(found, found + timedelta(microseconds=1))
                if following is None or following > now:
                    return found  # type: ignore[no-any-return]
                found = following
    return None
