"""The two homes of the gateway's records (service/state.py): files under the data
directory and a state database (SQLite here; PostgreSQL in tests/service): one
contract, the same answers."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from sparkgate.api.errors import ConfigurationError
from sparkgate.service.state import (
    FileRecords,
    Records,
    RecordTakenError,
    StateDatabase,
    StateWriteError,
    gateway_id,
)


@pytest.fixture(params=["files", "database"])
def records(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Records]:
    if request.param == "files":
        yield FileRecords(tmp_path / "jobs", private=True)
        return
    database = StateDatabase(f"sqlite:///{tmp_path / 'state.sqlite'}")
    yield database.records("jobs", "gateway-a")
    database.close()


def test_records_are_put_replaced_deleted_and_loaded_by_key(records: Records) -> None:
    assert records.load() == []
    records.put("b", {"n": 1})
    records.put("a/../x.y", {"n": 2, "text": "ü"})  # any key, kept as given
    records.put("b", {"n": 3})
    assert {key: orjson.loads(text) for key, text in records.load()} == {
        "a/../x.y": {"n": 2, "text": "ü"},
        "b": {"n": 3},
    }
    records.delete("b")
    records.delete("b")  # twice is fine
    records.delete("never")
    assert [key for key, _ in records.load()] == ["a/../x.y"]


def test_files_stay_in_their_directory_and_private(tmp_path: Path) -> None:
    records = FileRecords(tmp_path / "sessions", private=True)
    records.put("../../evil", {"x": 1})
    (written,) = tmp_path.rglob("*.json")
    assert written.parent == tmp_path / "sessions"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "sessions").stat().st_mode) == 0o700
    assert not [p for p in (tmp_path / "sessions").iterdir() if p.name.endswith(".tmp")]


def test_a_file_that_cannot_be_written_is_a_state_write_error(tmp_path: Path) -> None:
    (tmp_path / "jobs").write_text("a file where the directory should be")
    records = FileRecords(tmp_path / "jobs")
    with pytest.raises(StateWriteError, match="Could not write"):
        records.put("a", {})
    with pytest.raises(OSError):  # what the stores catch
        records.put("a", {})


def test_gateways_sharing_a_database_keep_their_own_records_apart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.sqlite'}"
    one, other = StateDatabase(url), StateDatabase(url)
    mine, theirs = one.records("jobs", "a"), other.records("jobs", "b")
    shared = one.records("catalogs")
    mine.put("j1", {"by": "a"})
    theirs.put("j2", {"by": "b"})
    other.records("catalogs").put("c", {"by": "b"})
    assert [key for key, _ in mine.load()] == ["j1"]
    assert [key for key, _ in theirs.load()] == ["j2"]
    assert [key for key, _ in shared.load()] == ["c"]
    # The same key of another kind is another record.
    one.records("sessions", "a").put("j1", {"kind": "session"})
    assert len(mine.load()) == 1
    one.close()
    other.close()


def test_an_unreachable_database_is_named_without_its_password(tmp_path: Path) -> None:
    database = StateDatabase("sqlite:////nonexistent-dir/for/sure/state.sqlite")
    with pytest.raises(ConfigurationError, match="cannot be used") as failure:
        database.create_tables()
    assert "unable to open database file" in str(failure.value)
    secret = StateDatabase("postgresql+psycopg://me:s3cret-pw@127.0.0.1:1/state")
    with pytest.raises(ConfigurationError) as refused:
        secret.create_tables()
    assert "s3cret-pw" not in str(refused.value)
    assert "postgresql+psycopg://me:***@127.0.0.1:1/state" in str(refused.value)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("not a url", "is not a SQLAlchemy URL"),
        ("nosuchdb://x/y", "no driver for it"),
    ],
)
def test_a_wrong_url_is_a_configuration_error(url: str, expected: str) -> None:
    with pytest.raises(ConfigurationError, match=expected):
        StateDatabase(url)


def test_a_gateway_keeps_its_name_across_restarts(tmp_path: Path) -> None:
    first = gateway_id(tmp_path)
    assert len(first) == 32
    assert gateway_id(tmp_path) == first
    assert gateway_id(tmp_path / "other") != first


def test_a_record_taken_over_is_never_written_over_by_its_old_owner(tmp_path: Path) -> None:
    database = StateDatabase(f"sqlite:///{tmp_path / 'state.sqlite'}")
    old, new = database.records("sessions", "a"), database.records("sessions", "b")
    old.put("s1", {"n": 1})
    assert database.take("sessions", "a", "b") == [("s1", b'{"n":1}')]
    with pytest.raises(RecordTakenError, match="another gateway's now"):
        old.put("s1", {"n": 2})
    old.delete("s1")  # not its record any more: left alone
    assert [(key, orjson.loads(text)) for key, text in new.load()] == [("s1", {"n": 1})]
    database.close()
