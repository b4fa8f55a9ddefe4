"""Logging for the gateway process: concise lines on stderr, full ones in a file,
secret values masked in both (:mod:`sparkgate.sql.secret_logs`)."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from sparkgate.sql.secret_logs import SecretMaskingFilter, install_secret_masking

__all__ = ["configure_logging"]

_FORMAT = "%(asctime)s %(levelname)-5s %(name)s: %(message)s"
_NOISY = ("py4j", "pyspark", "SQLQueryContextLogger", "DataFrameQueryContextLogger")


def configure_logging(log_dir: Path | None, *, console_level: int = logging.INFO) -> None:
    """Send sparkgate's logs to stderr and, when given, ``<log_dir>/sparkgate.log``.

    PySpark's own loggers (py4j traffic, the query-context logger that dumps
    JVM stack traces for every failed statement) go to the file only. No
    record shows a secret value (statement text, Spark's errors echoing it).
    """
    install_secret_masking()
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    console = logging.StreamHandler()
    console.setLevel(console_level)
    console.setFormatter(logging.Formatter(_FORMAT, "%H:%M:%S"))
    console.addFilter(lambda record: not record.name.startswith(_NOISY))
    console.addFilter(SecretMaskingFilter())
    root.addHandler(console)
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        file_handler = logging.handlers.RotatingFileHandler(
            log_dir / "sparkgate.log", maxBytes=50 * 1024 * 1024, backupCount=5
        )
        file_handler.setFormatter(logging.Formatter(_FORMAT))
        file_handler.addFilter(SecretMaskingFilter())
        root.addHandler(file_handler)
    logging.getLogger("py4j").setLevel(logging.WARNING)
