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

_ACTIONS = {
    "start": "start a gateway in the background; returns once it serves",
    "start-foreground": "run a gateway in this terminal until Ctrl-C or SIGTERM",
    "stop": "stop the gateway started last",
    "stop-all": "stop every gateway started with 'start'",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sparkgate", description="A multi-session SQL gateway for Apache Spark."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    gateway = commands.add_parser(
        "gateway",
        help="run or stop the gateway",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="\n".join(f"  {name:18} {text}" for name, text in _ACTIONS.items()),
    )
    gateway.add_argument("action", choices=list(_ACTIONS), metavar="ACTION")
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


def _gateway(args: argparse.Namespace) -> int:
    from sparkgate.server import launcher

    if args.action in ("stop", "stop-all"):
        stopped = launcher.stop_background(stop_all=args.action == "stop-all")
        if not stopped:
            sys.stdout.write("No sparkgate gateway is running.\n")
            return 1
        sys.stdout.write(f"Stopped sparkgate gateway {', '.join(map(str, stopped))}.\n")
        return 0
    conf_dir = args.conf_dir or default_conf_dir()
    config = launcher.load_gateway_configuration(conf_dir, parse_dynamic_options(args.dynamic))
    if args.action == "start-foreground":
        launcher.run_foreground(config)
    elif args.action == "start":
        forwarded = [f"-D{item}" for item in args.dynamic]
        if args.conf_dir is not None:
            forwarded += ["--conf-dir", str(args.conf_dir.resolve())]
        addresses = launcher.start_background(config, forwarded)
        sys.stdout.write(f"sparkgate gateway started: {', '.join(addresses) or 'no endpoints'}\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _gateway(args)
    except GatewayError as exc:
        sys.stderr.write(f"sparkgate: {exc}\n")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
