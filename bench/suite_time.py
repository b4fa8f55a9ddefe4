"""The test suite's time on two trees, measured interleaved: ``python -m bench.suite_time``.

Two checkouts of the project (``git worktree add``), each run with its own
interpreter (its ``.venv``, else this one with the tree's ``src`` first on the
path). The test ids both trees have are split by top-level test directory; each
chunk runs four times, a ``pytest`` process each, in the order old, new, new, old
(or the reverse, alternating from chunk to chunk), so that a machine's drift
falls on both trees alike. Per-test times come from JUnit XML; a test that failed
or was skipped in any run counts for neither tree.

    python -m bench.suite_time --old ../filing-day --new . --out /tmp/suite
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Tree", "chunk_times", "main"]

log = logging.getLogger("bench.suite_time")


@dataclass(frozen=True)
class Tree:
    """A checkout and how to run its tests."""

    tag: str
    path: Path

    @property
    def python(self) -> str:
        own = self.path / ".venv" / "bin" / "python"
        return str(own) if own.exists() else sys.executable

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.python == sys.executable:
            env["PYTHONPATH"] = str(self.path / "src")
        return env

    def pytest(self, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.python, "-m", "pytest", "-p", "no:cacheprovider", *args],
            cwd=self.path,
            env=self.env(),
            text=True,
            capture_output=True,
            check=False,
        )

    def ids(self) -> set[str]:
        done = self.pytest("--collect-only", "-q")
        return {line for line in done.stdout.splitlines() if "::" in line}


def chunk_times(runs: dict[str, list[Path]]) -> tuple[float, float, int]:
    """Seconds of the old and the new tree (each test's mean over its runs) from
    JUnit files by tree tag (``old``, ``new``), and how many tests were left out."""
    times: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    bad: set[tuple[str, str]] = set()
    for tag, files in runs.items():
        for file in files:
            for case in ET.parse(file).iter("testcase"):
                key = (case.get("classname") or "", case.get("name") or "")
                if any(case.find(k) is not None for k in ("failure", "error", "skipped")):
                    bad.add(key)
                times[key][tag].append(float(case.get("time") or 0.0))
    old = new = 0.0
    for key, by_tag in times.items():
        if key in bad or not by_tag.get("old") or not by_tag.get("new"):
            continue
        old += sum(by_tag["old"]) / len(by_tag["old"])
        new += sum(by_tag["new"]) / len(by_tag["new"])
    return old, new, len(bad)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.suite_time", description=__doc__)
    parser.add_argument("--old", type=Path, required=True, help="the tree to compare against")
    parser.add_argument("--new", type=Path, required=True, help="the tree measured")
    parser.add_argument("--out", type=Path, required=True, help="where the JUnit files go")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    trees = Tree("old", args.old.resolve()), Tree("new", args.new.resolve())
    common = sorted(trees[0].ids() & trees[1].ids())
    chunks: dict[str, list[str]] = defaultdict(list)
    for test_id in common:
        chunks[test_id.split("/")[1] if "/" in test_id else "."].append(test_id)
    log.info("%d tests both trees have, in %d chunks", len(common), len(chunks))
    args.out.mkdir(parents=True, exist_ok=True)
    total_old = total_new = 0.0
    for n, (chunk, ids) in enumerate(sorted(chunks.items())):
        order = [trees[0], trees[1], trees[1], trees[0]]
        runs: dict[str, list[Path]] = defaultdict(list)
        for k, tree in enumerate(order if n % 2 == 0 else order[::-1]):
            junit = args.out / f"{chunk}-{k}-{tree.tag}.xml"
            tree.pytest("-q", f"--junitxml={junit}", *ids)
            runs[tree.tag].append(junit)
        old, new, left_out = chunk_times(runs)
        total_old, total_new = total_old + old, total_new + new
        ratio = new / old if old else float("nan")
        log.info(
            "%-12s old %7.1f s  new %7.1f s  x%.2f  (%d left out)", chunk, old, new, ratio, left_out
        )
    log.info(
        "%-12s old %7.1f s  new %7.1f s  x%.3f", "all", total_old, total_new, total_new / total_old
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
