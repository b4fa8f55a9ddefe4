"""bench.suite_time: per-tree sums from JUnit files, failed tests left out of both."""

from __future__ import annotations

from pathlib import Path

from bench.suite_time import chunk_times


def _junit(path: Path, cases: list[tuple[str, float, str | None]]) -> Path:
    body = "".join(
        f'<testcase classname="t" name="{name}" time="{time}">'
        + (f"<{outcome} message='x'/>" if outcome else "")
        + "</testcase>"
        for name, time, outcome in cases
    )
    path.write_text(f'<testsuites><testsuite name="pytest">{body}</testsuite></testsuites>')
    return path


def test_each_test_counts_its_mean_and_a_failure_anywhere_leaves_it_out(tmp_path: Path) -> None:
    old = [
        _junit(tmp_path / "o1.xml", [("a", 1.0, None), ("b", 2.0, None), ("c", 5.0, None)]),
        _junit(tmp_path / "o2.xml", [("a", 3.0, None), ("b", 2.0, None), ("c", 5.0, None)]),
    ]
    new = [
        _junit(tmp_path / "n1.xml", [("a", 1.0, None), ("b", 4.0, None), ("c", 1.0, "failure")]),
        _junit(tmp_path / "n2.xml", [("a", 1.0, None), ("b", 4.0, None), ("c", 1.0, None)]),
    ]
    assert chunk_times({"old": old, "new": new}) == (4.0, 5.0, 1)


def test_a_test_only_one_tree_ran_counts_for_neither(tmp_path: Path) -> None:
    old = [_junit(tmp_path / "o.xml", [("a", 2.0, None), ("gone", 9.0, None)])]
    new = [_junit(tmp_path / "n.xml", [("a", 1.0, None), ("added", 9.0, "skipped")])]
    assert chunk_times({"old": old, "new": new}) == (2.0, 1.0, 1)
