"""The zone the client prints TIMESTAMP_LTZ values in, when it renders Arrow itself.

The embedded executor and the REST executor's Arrow transport print
TIMESTAMP_LTZ instants as wall-clock time in the session's zone, as Flink's
client does with ``table.local-time-zone``. The zone is what Spark itself uses
(``current_timezone()``, so values print as ``CAST(ts AS STRING)`` does), else
the session's settings; a name the client cannot use (``<undefined>``, a typo)
never ends the client: values print in UTC and the user is told once.

Spark takes Java zone IDs; pyarrow takes IANA names and ``+HH:MM``. Java's
offset forms (``GMT+8``, ``UTC+08:00``), short IDs (``PST``) and
``SystemV/`` zones are translated to what pyarrow accepts.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from sparkgate.api.session_options import TIME_ZONE_KEYS, configured_time_zones

__all__ = ["ZONE_KEYS", "ZONE_QUERY", "SessionTimeZone", "usable_zone"]

log = logging.getLogger(__name__)

ZONE_QUERY = "SELECT current_timezone()"
"""Asks Spark for the session's effective zone (its default when nothing set one)."""

ZONE_KEYS = TIME_ZONE_KEYS
"""Session settings that name the zone, in the order the gateway reads them."""

_FALLBACK = "UTC"
_OFFSET = re.compile(r"^(?:GMT|UTC|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?$")
_SYSTEM_V_FIXED = re.compile(r"^SystemV/[A-Z]ST(\d{1,2})$")  # Java's SystemV/PST8: -08:00
_UTC_NAMES = frozenset({"Z", "UT", "UTC", "GMT", "UCT"})
# java.time.ZoneId.SHORT_IDS (Spark accepts them; the tz database does not know most).
_JAVA_SHORT_IDS = {
    "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo",
    "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare",
    "CNT": "America/St_Johns",
    "CST": "America/Chicago",
    "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris",
    "EST": "-05:00",
    "HST": "-10:00",
    "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo",
    "MIT": "Pacific/Apia",
    "MST": "-07:00",
    "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
}


@functools.lru_cache(maxsize=64)
def usable_zone(name: str | None) -> str | None:
    """``name`` as a zone pyarrow can print in, or None when it is not a zone."""
    if name is None:
        return None
    text = name.strip()
    if not text:
        return None
    if text.upper() in _UTC_NAMES:
        return _FALLBACK
    text = _JAVA_SHORT_IDS.get(text, text)
    fixed = _SYSTEM_V_FIXED.match(text)
    if fixed is not None:
        text = f"-{int(fixed.group(1)):02d}:00"
    elif text.startswith("SystemV/"):
        text = text[len("SystemV/") :]  # SystemV/PST8PDT is the tz database's PST8PDT
    offset = _OFFSET.match(text)
    if offset is not None:
        sign, hours, minutes, seconds = offset.groups()
        if int(hours) > 18 or int(minutes or 0) > 59 or int(seconds or 0):
            return None
        text = f"{sign}{int(hours):02d}:{minutes or '00'}"
    try:
        pc.local_timestamp(pa.array([0], pa.timestamp("s", tz=text)))
    except (pa.ArrowException, ValueError):
        return None
    return text


class SessionTimeZone:
    """The zone of one session, asked for lazily and kept until the session may change it.

    ``ask`` runs :data:`ZONE_QUERY` on the session and returns its value (None
    when it failed); ``settings`` returns the session configuration.
    """

    def __init__(
        self,
        ask: Callable[[], str | None],
        settings: Callable[[], Mapping[str, str]],
    ) -> None:
        self._ask = ask
        self._settings = settings
        self._zone: str | None = None

    def invalidate(self) -> None:
        """Forget the zone: a statement may have changed it."""
        self._zone = None

    def resolve(self) -> tuple[str, str | None]:
        """The zone, and a warning for the user when it had to fall back to UTC."""
        if self._zone is not None:
            return self._zone, None
        seen: list[str] = []
        for candidate in self._candidates():
            if candidate is None:
                continue
            zone = usable_zone(candidate)
            if zone is not None:
                self._zone = zone
                return zone, None
            seen.append(candidate)
        self._zone = _FALLBACK
        if not seen:
            return _FALLBACK, None
        names = ", ".join(f"'{s}'" for s in dict.fromkeys(seen))
        warning = (
            f"The session time zone ({names}) is not a zone the client knows; "
            "TIMESTAMP_LTZ values print in UTC."
        )
        log.warning("%s", warning)
        return _FALLBACK, warning

    def _candidates(self) -> list[str | None]:
        candidates: list[str | None] = []
        try:
            candidates.append(self._ask())
        except Exception:  # any failure here only means: use the settings
            log.warning("Could not ask the session for its time zone", exc_info=True)
        try:
            settings = self._settings()
        except Exception:
            log.warning("Could not read the session configuration", exc_info=True)
            settings = {}
        candidates.extend(configured_time_zones(settings))
        return candidates
