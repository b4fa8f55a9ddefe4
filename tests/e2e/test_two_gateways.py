"""Two gateway processes, one service, behind one address: a round-robin TCP proxy
in front of both, a PostgreSQL database holding their Hive metastore and another
their state (``sql-gateway.state.url``), one warehouse.

A REST client that knows only the proxy's address opens a session, makes tables,
a materialized table refreshed every two seconds and a streaming job; its calls
reach either gateway (the one that does not serve the session forwards them).
Then the gateway serving the session is killed (SIGKILL, with its Spark). The
client retries its calls as a client behind a load balancer does (on 503 and on
connection errors) and goes on: once the dead gateway's lease ends, the survivor
takes over the session, with its properties and temporary objects, and resumes
the streaming job from its checkpoint, every row written once; no fire time of
the refresh schedule is refreshed twice.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_postgres_metastore import metastore_options
from tests.e2e.test_restart import counts, jobs
from tests.postgres import PostgresServer
from tests.processes import Rest, gateway, kill_with_spark, wait_for
from tests.proxy import RoundRobinProxy

pytestmark = pytest.mark.timeout(900)

LEASE_S = 4


class Retrying(httpx.HTTPTransport):
    """What a client behind a load balancer does: a new connection per call (so the
    balancer may pick another gateway), and the call again after a 503 or a
    connection that failed, for up to a minute."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + 60
        while True:
            try:
                response = super().handle_request(request)
            except (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError):
                if time.monotonic() > deadline:
                    raise
            else:
                if response.status_code != 503 or time.monotonic() > deadline:
                    return response
                response.read()
                response.close()
            time.sleep(0.5)


@pytest.fixture
def service_options(postgres: PostgresServer, tmp_path: Path) -> Iterator[tuple[str, ...]]:
    postgres.psql("DROP DATABASE IF EXISTS service_state", database="postgres")
    postgres.psql("CREATE DATABASE service_state", database="postgres")
    state = (
        f"postgresql+psycopg://{postgres.user}:{postgres.password}"
        f"@{postgres.host}:{postgres.port}/service_state"
    )
    yield (
        *metastore_options(postgres, tmp_path / "warehouse"),
        f"-Dsql-gateway.state.url={state}",
        f"-Dsql-gateway.state.lease={LEASE_S} s",
        "-Dexecution.checkpointing.interval=500 ms",
    )


def scheduled_refreshes(rest: Rest, table: str) -> list[str]:
    """The fire times the listed refresh jobs of ``table`` were for."""
    fired = []
    for row in rest.rows("SHOW JOBS"):
        if str(row[1]) == f"{table} refresh":
            statement = str(rest.record(f"DESCRIBE JOB '{row[0]}'")["statement"])
            match = re.search(r"/\* scheduled ([^*]+) \*/", statement)
            assert match is not None, statement
            fired.append(match.group(1))
    return fired


def _serves(url: str, session: str) -> bool:
    """Whether the gateway at ``url`` serves ``session`` itself (asked not to forward)."""
    answer = httpx.get(
        f"{url}/v4/sessions/{session}", headers={"x-sparkgate-forwarded": "1"}, timeout=30
    )
    return answer.status_code == 200


def test_a_client_behind_a_balancer_outlives_the_gateway_serving_it(
    service_options: tuple[str, ...], tmp_path: Path
) -> None:
    with (
        gateway(tmp_path / "a", tmp_path / "data-a", *service_options) as (url_a, process_a),
        gateway(tmp_path / "b", tmp_path / "data-b", *service_options) as (url_b, process_b),
    ):
        ports = [int(url.rsplit(":", 1)[1]) for url in (url_a, url_b)]
        with RoundRobinProxy([("127.0.0.1", port) for port in ports]) as proxy:
            base = f"http://127.0.0.1:{proxy.port}"
            http = httpx.Client(
                base_url=base,
                transport=Retrying(),
                headers={"Connection": "close"},
                timeout=120,
            )
            client = Rest(base, http=http)
            client.run("SET 'shop.owner' = 'ann'")
            client.run("CREATE DATABASE shop")
            client.run("USE shop")
            client.run(
                "CREATE TEMPORARY TABLE seq (id BIGINT) WITH ('connector' = 'datagen', "
                "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
                "'fields.id.end' = '100000', 'rows-per-second' = '20')"
            )
            client.run("CREATE TEMPORARY VIEW answer AS SELECT 42 AS n")
            client.run("CREATE TABLE sink (id BIGINT) USING json")
            # Refreshed every 2 s by the scheduler both gateways run on the shared store.
            client.run(
                "CREATE MATERIALIZED TABLE totals FRESHNESS = INTERVAL '2' SECOND "
                "REFRESH_MODE = FULL AS SELECT count(*) AS n FROM sink"
            )
            client.run(
                "INSERT INTO sink SELECT id FROM seq",
                {"execution.runtime-mode": "streaming", "pipeline.name": "feed"},
            )
            wait_for(
                lambda: counts(client, "sink")[0] >= 40, 120, lambda: str(counts(client, "sink"))
            )
            # Calls went to both gateways; one serves the session, the other forwarded.
            assert all(proxy.connections), proxy.connections
            serving = [_serves(url, client.session) for url in (url_a, url_b)]
            assert sorted(serving) == [False, True], serving
            owner, survivor = (process_a, url_b) if serving[0] else (process_b, url_a)
            before = counts(client, "sink")

            kill_with_spark(owner)

            # The same session, through the same address.
            assert client.rows("SELECT current_database(), n FROM answer") == [["shop", 42]]
            assert _serves(survivor, client.session)
            config = client.http.get(f"/v4/sessions/{client.session}").json()["properties"]
            assert config["shop.owner"] == "ann"
            listed: dict[str, Any] = jobs(client)
            assert listed["feed"]["status"] == "RUNNING"
            # The job goes on from its checkpoint: new rows, none twice, none missing.
            wait_for(
                lambda: counts(client, "sink")[0] >= before[0] + 100,
                180,
                lambda: str(counts(client, "sink")),
            )
            [[rows, ids, last]] = client.rows(
                "SELECT count(*), count(DISTINCT id), max(id) FROM sink"
            )
            assert rows == ids == last, (rows, ids, last)
            http.close()
