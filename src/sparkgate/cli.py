"""The ``sparkgate`` command line."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from sparkgate.api.config import Configuration
from sparkgate.api.errors import ConfigurationError, GatewayError
from sparkgate.server.config import default_conf_dir, parse_dynamic_options

__all__ = ["main"]

log = logging.getLogger("sparkgate")

_ACTIONS = {
    "start": "start a gateway in the background; returns once it serves",
    "start-foreground": "run a gateway in this terminal until Ctrl-C or SIGTERM",
    "stop": "stop a gateway of the data directory: the one on --port, else the last started",
    "stop-all": "stop every gateway of the data directory",
    "status": "whether each gateway of the data directory is ready (its engine up); "
    "exit status 0 when all are",
}
_PID_FILES = (
    "Pid files: <data-dir>/run/gateway-<pid>.json, one per running gateway (foreground or "
    "background). stop and stop-all act on the gateways of one data directory: "
    "sql-gateway.data-dir from config.yaml or -D (default ~/.sparkgate)."
)


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
        epilog=_PID_FILES,
    )
    gateway.add_argument("action", choices=list(_ACTIONS), metavar="ACTION")
    gateway.add_argument(
        "--port",
        type=int,
        default=None,
        help="stop: the gateway with an endpoint on this port",
    )
    _add_config_arguments(gateway)
    _add_sql_parser(commands)
    _add_user_parser(commands)
    commands.add_parser(
        "beeline",
        help="run beeline, the HiveServer2 client PySpark ships (arguments go to beeline)",
        description="Run beeline with Spark and Java found; e.g. "
        "'sparkgate beeline -u jdbc:hive2://127.0.0.1:10000/default'. "
        "Every argument is beeline's ('sparkgate beeline --help' shows them).",
        add_help=False,
    )
    return parser


def _add_sql_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sql = commands.add_parser(
        "sql",
        help="the SQL client: embedded (default) or on a running gateway",
        description=(
            "Run SQL interactively, from a script (-f) or after init statements (-i). "
            "'embedded' (the default) runs the gateway service and Spark in this process; "
            "'gateway -e HOST:PORT' talks to a running sparkgate or Flink SQL Gateway over REST."
        ),
    )
    sql.add_argument(
        "mode", nargs="?", choices=["embedded", "gateway"], default="embedded", metavar="MODE"
    )
    sql.add_argument(
        "-e",
        "--endpoint",
        metavar="HOST:PORT",
        help="the gateway's REST address (gateway mode); https://HOST:PORT for one with TLS",
    )
    sql.add_argument(
        "--cacert",
        type=Path,
        metavar="FILE",
        help="trust the CA certificates (PEM) in FILE for an https:// endpoint, besides the "
        "system's ($SSL_CERT_FILE replaces those)",
    )
    sql.add_argument(
        "-u",
        "--user",
        help="log in as USER (gateway mode; the password from $SPARKGATE_PASSWORD or a "
        "prompt); without it $SPARKGATE_TOKEN is sent as a bearer token if set",
    )
    sql.add_argument("-f", "--file", type=Path, help="run this SQL script and exit")
    sql.add_argument("-i", "--init", type=Path, help="run these initialization statements first")
    sql.add_argument(
        "-D",
        dest="dynamic",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a session property (repeatable); in embedded mode also a gateway option",
    )
    sql.add_argument(
        "-j", "--jar", dest="jars", action="append", default=[], help="add a jar to the session"
    )
    sql.add_argument(
        "--history",
        type=Path,
        help="history file (default: <data-dir>/sql-history; gateway mode: "
        "~/.local/state/sparkgate/sql-history, see docs/sql-client.md)",
    )
    sql.add_argument(
        "--conf-dir",
        type=Path,
        default=None,
        help="directory holding config.yaml (default: $SPARKGATE_CONF_DIR or ./conf)",
    )


def _add_user_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    user = commands.add_parser(
        "user",
        help="add, change or remove users of the password file (password authentication)",
        description="Manage the password file of 'password' authentication "
        "(sql-gateway.authentication.password.file, default <data-dir>/users): salted "
        "PBKDF2 hashes, never the passwords. A running gateway sees changes at once "
        "(a password it accepted stays accepted for up to a minute).",
    )
    user.add_argument("action", choices=["add", "passwd", "remove", "list"])
    user.add_argument("name", nargs="?", help="the user (not for list)")
    user.add_argument("--stdin", action="store_true", help="read the password from standard input")
    _add_config_arguments(user)


def _add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """-D and --conf-dir: the gateway's configuration, as ``sparkgate gateway`` reads it."""
    parser.add_argument(
        "-D",
        dest="dynamic",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set an option, overriding conf/config.yaml (repeatable)",
    )
    parser.add_argument(
        "--conf-dir",
        type=Path,
        default=None,
        help="directory holding config.yaml (default: $SPARKGATE_CONF_DIR or ./conf)",
    )


def _user(args: argparse.Namespace) -> int:
    from sparkgate.security import passwords
    from sparkgate.security.password import password_file
    from sparkgate.server import launcher
    from sparkgate.service import options

    conf_dir = args.conf_dir or default_conf_dir()
    config = launcher.load_gateway_configuration(conf_dir, parse_dynamic_options(args.dynamic))
    path = password_file(config, str(config.get(options.DATA_DIR)))
    if args.action == "list":
        for name in passwords.users(path):
            print(name)
        return 0
    if not args.name:
        raise ConfigurationError(f"sparkgate user {args.action} needs a user name")
    if args.action == "passwd" and args.name not in passwords.users(path):
        raise ConfigurationError(
            f"No user {args.name!r} in {path}; add it with 'sparkgate user add'"
        )
    action = "remove" if args.action == "remove" else "add"
    argv = [str(path), action, args.name, *(["--stdin"] if args.stdin else [])]
    path.parent.mkdir(parents=True, exist_ok=True)
    code = passwords.main(argv)
    if code == 0:
        done = {"add": "added to", "passwd": "changed in", "remove": "removed from"}[args.action]
        print(f"User {args.name!r} {done} {path}")
    return code


def _endpoint(text: str | None) -> tuple[str, str, int]:
    """``HOST:PORT`` (plain HTTP) or ``http(s)://HOST:PORT`` -> (scheme, host, port)."""
    if not text:
        raise ConfigurationError("Gateway mode needs the gateway's address: -e HOST:PORT")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "http", text
    host, sep, port = rest.rstrip("/").rpartition(":")
    if scheme not in ("http", "https") or not sep or not host or not port.isdigit():
        raise ConfigurationError(
            f"Invalid gateway address {text!r}; expected HOST:PORT or https://HOST:PORT"
        )
    return scheme, host.strip("[]"), int(port)


def _sql(args: argparse.Namespace) -> int:
    from sparkgate.api.config import Configuration
    from sparkgate.client import EmbeddedExecutor, RestExecutor, Terminal, run_client
    from sparkgate.client.credentials import client_auth, trusted_certificates
    from sparkgate.client.executor import Executor
    from sparkgate.client.files import DATA_DIR_KEY, HISTORY_FILE, gateway_mode_client_dir
    from sparkgate.server import embedded

    dynamic = parse_dynamic_options(args.dynamic)
    gateway_mode = args.mode == "gateway" or bool(args.endpoint)
    if gateway_mode:  # the client's own files: see sparkgate.client.files
        client_dir, dynamic = gateway_mode_client_dir(dynamic)
        config = Configuration({DATA_DIR_KEY: str(client_dir)})
    else:
        config = embedded.load_client_configuration(args.conf_dir or default_conf_dir(), dynamic)
    embedded.configure_client_logging(config)
    history = args.history or embedded.data_dir(config) / HISTORY_FILE
    terminal = Terminal()
    jars = [str(Path(jar).expanduser().resolve()) for jar in args.jars]
    executor: Executor
    service = None
    with contextlib.ExitStack() as held:
        if gateway_mode:
            scheme, host, port = _endpoint(args.endpoint)
            auth = client_auth(args.user)
            executor = RestExecutor(
                host,
                port,
                properties=dynamic,
                jars=jars,
                auth=auth,
                scheme=scheme,
                verify=trusted_certificates(args.cacert),
            )
        else:
            # Refused at once if a gateway holds the data directory's metastore.
            held.enter_context(embedded.holding_data_dir(config))
            service = embedded.build_embedded_service(config)
            terminal.status("Starting Spark...")
            try:
                service.start()
            finally:
                terminal.clear_status()
            # -D options are already the gateway configuration, hence every session's defaults.
            executor = EmbeddedExecutor(service, jars=jars)
        try:
            return run_client(
                executor,
                terminal=terminal,
                init_file=args.init,
                script_file=args.file,
                history_file=history,
            )
        finally:
            if service is not None:
                service.stop()


def _gateway(args: argparse.Namespace) -> int:
    from sparkgate.server import launcher

    conf_dir = args.conf_dir or default_conf_dir()
    config = launcher.load_gateway_configuration(conf_dir, parse_dynamic_options(args.dynamic))
    if args.action in ("stop", "stop-all"):
        return _stop(launcher, config, args.port, stop_all=args.action == "stop-all")
    if args.action == "status":
        return _status(config)
    if args.port is not None:
        raise ConfigurationError(
            "--port is for stop; set ports with -Dsql-gateway.endpoint.rest.port=N"
        )
    if args.action == "start-foreground":
        launcher.run_foreground(config)
    elif args.action == "start":
        forwarded = [f"-D{item}" for item in args.dynamic]
        if args.conf_dir is not None:
            forwarded += ["--conf-dir", str(args.conf_dir.resolve())]
        addresses = launcher.start_background(config, forwarded)
        sys.stdout.write(f"sparkgate gateway started: {', '.join(addresses) or 'no endpoints'}\n")
    return 0


def _status(config: Configuration) -> int:
    """Ask each running gateway's readiness probe (docs/operations.md)."""
    import httpx

    from sparkgate.server.pidfiles import running_gateways
    from sparkgate.service.options import DATA_DIR

    data_dir = Path(config.get(DATA_DIR))
    gateways = running_gateways(data_dir)
    if not gateways:
        sys.stdout.write(f"No sparkgate gateway is running (data directory {data_dir}).\n")
        return 1
    all_ready = True
    for gateway in gateways:
        rest = [a for a in gateway.addresses if a.startswith("http")]
        if not gateway.serving or not rest:
            state = "starting" if not gateway.serving else "no REST endpoint to ask"
            all_ready = all_ready and gateway.serving
        else:
            try:
                # A liveness probe of the gateway its own pid file names, with no
                # credentials: its certificate (often from a private CA) is not checked.
                body = httpx.get(f"{rest[0]}/health/ready", timeout=5, verify=False).json()
            except (httpx.HTTPError, ValueError) as exc:
                body = {"status": "DOWN", "engine": "unknown", "cause": str(exc)}
            ready = body.get("status") == "UP"
            all_ready = all_ready and ready
            state = "ready" if ready else f"NOT ready: engine {body.get('engine')}"
            if body.get("cause"):
                state += f" ({body['cause']})"
            if body.get("restarts"):
                state += f"; engine restarts: {body['restarts']}"
        sys.stdout.write(f"sparkgate gateway {gateway.describe()}: {state}\n")
    return 0 if all_ready else 3


def _beeline(args: Sequence[str]) -> int:
    from sparkgate.service.spark.beeline import beeline_command

    command, env = beeline_command(args)
    sys.stdout.flush()
    os.execve(command[0], command, env)  # beeline owns the terminal from here


def _stop(launcher: ModuleType, config: Configuration, port: int | None, *, stop_all: bool) -> int:
    from sparkgate.server.pidfiles import running_gateways
    from sparkgate.service.options import DATA_DIR

    data_dir = Path(config.get(DATA_DIR))
    stopped = launcher.stop_background(data_dir, port=port, stop_all=stop_all)
    if stopped:
        for gateway in stopped:
            sys.stdout.write(f"Stopped sparkgate gateway {gateway.describe()}.\n")
        return 0
    where = f"data directory {data_dir}"
    if port is None:
        sys.stdout.write(f"No sparkgate gateway is running ({where}).\n")
    else:
        others = running_gateways(data_dir)
        sys.stdout.write(
            f"No sparkgate gateway serves port {port} ({where}); running: "
            + ("; ".join(g.describe() for g in others) or "none")
            + ".\n"
        )
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["beeline"]:  # every later argument is beeline's, --help too
        try:
            return _beeline(argv[1:])
        except GatewayError as exc:
            sys.stderr.write(f"sparkgate: {exc}\n")
            return 2
    args = _parser().parse_args(argv)
    try:
        if args.command == "user":
            return _user(args)
        return _sql(args) if args.command == "sql" else _gateway(args)
    except GatewayError as exc:
        sys.stderr.write(f"sparkgate: {exc}\n")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
