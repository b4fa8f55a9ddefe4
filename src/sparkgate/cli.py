"""The ``sparkgate`` command line."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from sparkgate.api.errors import GatewayError
from sparkgate.server.config import default_conf_dir, parse_dynamic_options

__all__ = ["main"]

log = logging.getLogger("sparkgate")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sparkgate", description="A multi-session SQL gateway for Apache Spark."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    gateway = commands.add_parser("gateway", help="run the gateway")
    gateway.add_argument(
        "action", choices=["start-foreground"], help="start-foreground: run in this terminal"
    )
    gateway.add_argument(
        "-D",
        dest="dynamic",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set an option, overriding conf/config.yaml (repeatable)",
    )
    gateway.add_argument(
        "--conf-dir",
        type=Path,
        default=None,
        help="directory holding config.yaml (default: $SPARKGATE_CONF_DIR or ./conf)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        from sparkgate.server.launcher import load_gateway_configuration, run_foreground

        overrides = parse_dynamic_options(args.dynamic)
        config = load_gateway_configuration(args.conf_dir or default_conf_dir(), overrides)
        run_foreground(config)
    except GatewayError as exc:
        sys.stderr.write(f"sparkgate: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
