"""The benchmark's pure logic, without a JVM: goals, ratios, the quiet-machine
accounting and refusal, the JDBC client's line protocol."""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

import bench.report as report
import bench.run as bench_run
import orjson
import pytest
from bench.machine import MachineMonitor, is_noisy, noisy_sources
from bench.targets.jdbc import escape, jdbc_url, unescape

pytestmark = pytest.mark.unit


def _lat(median: float, p99: float, **extra: Any) -> dict[str, Any]:
    return {"n": 10, "unit": "ms", "median": median, "p99": p99, "min": 1, "max": p99, **extra}


def _conc(target: str, sessions: int, qps: float, p99: float, errors: int = 0) -> dict[str, Any]:
    return {
        "target": target,
        "sessions": sessions,
        "queries_per_session": 5,
        "queries_per_s": qps,
        "errors": errors,
        "latency_ms": _lat(p99 / 2, p99),
    }


def _workloads() -> dict[str, Any]:
    return {
        "select1": {
            "inprocess": {"target": "inprocess", **_lat(10.0, 20.0)},
            "rest": {
                "target": "rest",
                **_lat(12.5, 22.0),
                "eos_fetch_ms": _lat(1.2, 2.0),
                "keepalive_ms": _lat(0.4, 0.9),
            },
            "hs2": {"target": "hs2", **_lat(9.0, 30.0)},
            "thrift": {"target": "thrift", **_lat(11.0, 25.0)},
        },
        "select100": {
            "inprocess": {"target": "inprocess", **_lat(10.0, 20.0)},
            "rest": {"target": "rest", **_lat(14.0, 22.0)},
            "thrift": {"target": "thrift", **_lat(15.0, 25.0)},
        },
        "fetch_large": {
            "_rows": 1_000_000,
            "inprocess/arrow": {"target": "inprocess", "n": 1, "rows_per_s": 1_000_000},
            "rest/json": {"target": "rest", "n": 1, "rows_per_s": 600_000},
            "hs2/rows": {"target": "hs2", "n": 1, "rows_per_s": 60_000},
            "hs2/jdbc": {"target": "hs2", "n": 1, "rows_per_s": 900_000},
            "thrift/rows": {"target": "thrift", "n": 1, "rows_per_s": 50_000},
            "thrift/jdbc": {"target": "thrift", "n": 1, "rows_per_s": 400_000},
        },
        "concurrency": {
            "rest@16": _conc("rest", 16, 40.0, 300.0),
            "thrift@16": _conc("thrift", 16, 30.0, 400.0),
            "rest@64": _conc("rest", 64, 40.0, 900.0),
            "thrift@64": _conc("thrift", 64, 35.0, 800.0),
        },
    }


def _goals(workloads: dict[str, Any]) -> dict[str, dict[str, Any]]:
    ratios = report.compute_ratios(workloads)
    return {g["goal"]: g for g in report.compute_goals(workloads, ratios)}


def test_statement_goals_compare_median_and_p99() -> None:
    goals = _goals(_workloads())
    # 12.5 <= 10 + 3 and 22 <= 20 + 3.
    assert goals["select1_vs_inprocess"]["met"] is True
    assert goals["select1_vs_thrift"]["met"] is False  # median 12.5 is not below 11
    # HiveServer2's median is below the Thrift server's, its p99 is not.
    assert goals["select1_hs2_vs_thrift"]["met"] is False
    assert goals["select100_vs_inprocess"]["met"] is False  # 14 > 10 + 3
    assert goals["select100_vs_thrift"]["met"] is True
    assert goals["select100_hs2_vs_thrift"]["met"] is None  # not measured
    assert goals["eos_fetch"]["met"] is True
    assert "keep-alive round trip median 0.40 ms" in goals["eos_fetch"]["value"]


def test_a_last_page_answering_eos_meets_the_eos_goal() -> None:
    workloads = _workloads()
    rest = workloads["select1"]["rest"]
    rest["eos_fetch_ms"] = {"n": 0, "unit": "ms"}
    rest["eos_with_rows"] = 10
    goal = _goals(workloads)["eos_fetch"]
    assert goal["met"] is True
    assert goal["value"].startswith("no EOS fetch")


def test_jdbc_fetch_is_compared_with_the_thrift_servers_jdbc_fetch() -> None:
    workloads = _workloads()
    ratios = report.compute_ratios(workloads)
    assert ratios["fetch_large"]["hs2/jdbc"]["vs_thrift"] == pytest.approx(2.25)
    assert ratios["fetch_large"]["hs2/rows"]["vs_thrift"] == pytest.approx(1.2)
    # Clients the Thrift server has no entry for are compared with PyHive.
    assert ratios["fetch_large"]["rest/json"]["vs_thrift"] == pytest.approx(12.0)
    goals = _goals(workloads)
    assert goals["hs2_jdbc_fetch"]["met"] is True
    assert goals["fetch_json"]["met"] is True


def test_concurrency_goals_per_level_need_throughput_and_p99() -> None:
    goals = _goals(_workloads())
    assert goals["concurrency"]["met"] is True
    assert "16 concurrent sessions" in goals["concurrency"]["text"]
    # Faster at 64 sessions, but a higher p99 than the Thrift server's.
    assert goals["concurrency_high"]["met"] is False
    assert "64 concurrent sessions" in goals["concurrency_high"]["text"]
    ratios = report.compute_ratios(_workloads())
    assert ratios["concurrency"]["rest@64"]["vs_thrift"] == pytest.approx(40 / 35, abs=1e-3)


def test_concurrency_results_of_one_level_still_read() -> None:
    """Results written before the levels (keys ``rest``, ``thrift``)."""
    workloads = {
        "concurrency": {"rest": _conc("rest", 32, 30, 900), "thrift": _conc("thrift", 32, 36, 800)}
    }
    goals = _goals(workloads)
    assert goals["concurrency"]["met"] is False
    assert goals["concurrency_high"]["met"] is None
    assert report.compute_ratios(workloads)["concurrency"]["rest"]["vs_thrift"] == pytest.approx(
        30 / 36, abs=1e-3
    )


# -- the quiet-machine check -------------------------------------------------------------


def test_monitor_splits_cpu_between_ours_kernel_and_others() -> None:
    monitor = MachineMonitor(root_pid=100)
    # (pid, create_time) -> (name, ppid, cpu seconds incl. reaped children)
    first = {
        (2, 0.0): ("kthreadd", 0, 0.0),
        (30, 0.0): ("ksoftirqd/0", 2, 1.0),
        (100, 1.0): ("python", 1, 5.0),
        (101, 2.0): ("java", 100, 50.0),
        (102, 2.5): ("python3", 101, 1.0),
        (500, 3.0): ("make", 1, 1.0),
        (501, 3.5): ("cc1", 500, 2.0),
    }
    monitor._account(first, first=True)
    second = {
        (2, 0.0): ("kthreadd", 0, 0.0),
        (30, 0.0): ("ksoftirqd/0", 2, 1.5),
        (100, 1.0): ("python", 1, 6.0),
        (101, 2.0): ("java", 100, 54.0),
        # The JVM's child, orphaned (reparented to init), stays ours.
        (102, 2.5): ("python3", 1, 4.0),
        # cc1 (2 s when last seen, 2.5 s at its end) was reaped by make.
        (500, 3.0): ("make", 1, 1.0 + 2.5 + 0.1),
        (600, 9.5): ("pytest", 1, 4.0),
    }
    monitor._account(second, first=False)
    totals = monitor._totals
    assert totals.ours == pytest.approx(1.0 + 4.0 + 3.0)
    assert totals.kernel == pytest.approx(0.5)
    # make: 0.1 of its own + cc1's last 0.5; pytest: all of its 4 s.
    assert totals.others == pytest.approx(4.6)
    assert dict(totals.by_name) == pytest.approx({"make": 0.6, "pytest": 4.0})


def test_monitor_credits_a_chain_that_ended_to_the_ancestor_that_reaped_it() -> None:
    """A JVM under its launcher script, both gone between two samples: the test
    runner that reaped the script took in both lives at once."""
    monitor = MachineMonitor(root_pid=100)
    monitor._account(
        {
            (600, 1.0): ("pytest", 1, 10.0),
            (700, 2.0): ("bash", 600, 1.0),
            (701, 2.5): ("java", 700, 20.0),
        },
        first=True,
    )
    # The JVM used 5 s more before it ended; pytest 2 s of its own.
    monitor._account({(600, 1.0): ("pytest", 1, 10.0 + 2.0 + 1.0 + 25.0)}, first=False)
    assert monitor._totals.others == pytest.approx(7.0)


def _doc(noisy: bool | None) -> dict[str, Any]:
    quiet = {
        "wall_s": 100.0,
        "other_cpu_s": 30.0 if noisy else 1.0,
        "other_core_share": 0.3 if noisy else 0.01,
        "top": [{"name": "java", "cpu_s": 29.0, "processes": 3}],
        "threshold_core_share": 0.1,
        "noisy": noisy,
    }
    return {
        "schema": 2,
        "mode": "quick",
        "started_at": "2026-01-01 00:00 UTC",
        "duration_s": 100.0,
        "complete": True,
        "quiet": quiet,
        "machine": {
            "cores": 2,
            "cpu": "cpu",
            "memory_gib": 1.0,
            "os": "os",
            "python": "3",
            "java": "java",
            "spark": "4",
            "pyspark": "4",
            "pyarrow": "1",
        },
        "settings": {
            "spark": {"master": "local[2]", "driver_memory": "1g", "shuffle_partitions": 2}
        },
        "targets": {"rest": {"label": "sparkgate REST", "available": True}},
        "workloads": {"select1": {"rest": {"target": "rest", **_lat(1.0, 2.0)}}},
        "ratios": {},
        "goals": [],
    }


def test_noisy_runs_are_found_in_merged_runs_too() -> None:
    assert not is_noisy(_doc(False))
    assert is_noisy(_doc(True))
    base, partial = _doc(False), _doc(True)
    partial["complete"] = False
    partial["load_avg"] = {"start": 1.0, "end": 2.0}
    merged = report.merge(base, partial)
    assert is_noisy(merged)
    assert "java 29.0 s (3 processes)" in noisy_sources(merged)[0]


def test_render_refuses_a_noisy_result_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    md = tmp_path / "BENCHMARKS.md"
    original = f"intro\n{report.MARK_START}\nold\n{report.MARK_END}\n"
    md.write_text(original, encoding="utf-8")
    monkeypatch.setattr(bench_run, "BENCHMARKS_MD", md)
    saved = tmp_path / "noisy.json"
    saved.write_bytes(orjson.dumps(_doc(True)))

    with caplog.at_level(logging.ERROR):
        assert bench_run._render(saved, docs=True) == 2
    assert md.read_text(encoding="utf-8") == original
    assert "--allow-noisy" in caplog.text and "java" in caplog.text

    assert bench_run._render(saved, docs=True, allow_noisy=True) == 0
    text = md.read_text(encoding="utf-8")
    assert "**Noisy run**" in text and "intro" in text

    quiet = tmp_path / "quiet.json"
    quiet.write_bytes(orjson.dumps(_doc(False)))
    assert bench_run._render(quiet, docs=True) == 0
    text = md.read_text(encoding="utf-8")
    assert "Noisy run" not in text and "quiet (at most 10% of one core)" in text


def test_merge_refuses_a_noisy_partial_without_writing(tmp_path: Path) -> None:
    complete = tmp_path / "latest.json"
    complete.write_bytes(orjson.dumps(_doc(False)))
    before = complete.read_bytes()
    partial = copy.deepcopy(_doc(True))
    partial["complete"] = False
    part = tmp_path / "partial.json"
    part.write_bytes(orjson.dumps(partial))
    assert bench_run._merge(part, complete, docs=False) == 2
    assert complete.read_bytes() == before
    assert bench_run._merge(part, complete, docs=False, allow_noisy=True) == 0
    assert is_noisy(orjson.loads(complete.read_bytes()))


# -- the JDBC client's line protocol -----------------------------------------------------


@pytest.mark.parametrize("text", ["SELECT 1", "a\tb\nc\\d\re", "\\t is not a tab", ""])
def test_jdbc_escaping_round_trips(text: str) -> None:
    escaped = escape(text)
    assert "\t" not in escaped and "\n" not in escaped
    assert unescape(escaped) == text


def test_jdbc_url_matches_the_servers_authentication() -> None:
    assert jdbc_url(10000, "NOSASL") == "jdbc:hive2://127.0.0.1:10000/default;auth=noSasl"
    assert jdbc_url(10000, "NONE") == "jdbc:hive2://127.0.0.1:10000/default"
