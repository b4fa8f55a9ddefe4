"""The SQL client finds a plan statement's file of its own machine (gateway mode)."""

from __future__ import annotations

from pathlib import Path

from sparkgate.client.plans import local_plan


def test_compile_names_a_local_path_even_before_it_exists(tmp_path: Path) -> None:
    target = tmp_path / "plans" / "my plan.json"
    plan = local_plan(f"COMPILE AND EXECUTE PLAN '{target}' FOR INSERT INTO s SELECT 1")
    assert plan is not None and plan.compiles and plan.path == target
    assert plan.statement == (
        f"COMPILE AND EXECUTE PLAN 'sparkgate-resource:{plan.name}' FOR INSERT INTO s SELECT 1"
    )
    assert plan.name.endswith("-my_plan.json")
    # The same file, by URI: the same resource.
    again = local_plan(f"COMPILE PLAN '{target.as_uri()}' FOR INSERT INTO s SELECT 1")
    assert again is not None and again.name == plan.name


def test_execute_and_explain_take_files_that_are_there(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    assert local_plan(f"EXECUTE PLAN '{path}'") is None  # not here: the gateway's path
    path.write_text("{}")
    plan = local_plan(f"-- a comment\nEXPLAIN PLAN '{path}';")
    assert plan is not None and not plan.compiles
    assert "sparkgate-resource:" in plan.statement and plan.statement.endswith("';")


def test_other_statements_and_remote_uris_are_left_alone() -> None:
    assert local_plan("SELECT 'COMPILE PLAN'") is None
    assert local_plan("EXPLAIN SELECT 1") is None
    assert local_plan("COMPILE PLAN 'hdfs://nn/p.json' FOR INSERT INTO s SELECT 1") is None
    assert local_plan("EXECUTE STATEMENT SET BEGIN INSERT INTO s SELECT 1; END") is None
