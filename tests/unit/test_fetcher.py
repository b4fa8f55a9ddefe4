from __future__ import annotations

import pyarrow as pa
import pytest

from sparkgate.api.errors import InvalidTokenError
from sparkgate.api.results import FetchOrientation, ResultType
from sparkgate.api.types import BIGINT, ResultSchema
from sparkgate.service.result.buffer import ResultBuffer
from sparkgate.service.result.fetcher import ResultFetcher, ResultTraits

SCHEMA = ResultSchema.of(("x", BIGINT))


def fetcher_with(n: int, finish: bool = True) -> ResultFetcher:
    buf = ResultBuffer(1000)
    if n:
        buf.put(pa.RecordBatch.from_arrays([pa.array(range(n), pa.int64())], ["x"]))
    if finish:
        buf.finish()
    return ResultFetcher(SCHEMA, buf, ResultTraits(is_query_result=True))


def test_token_walk_to_end_of_stream() -> None:
    f = fetcher_with(5)
    p0 = f.fetch(0, 2)
    assert p0.result_type is ResultType.PAYLOAD and p0.next_token == 1
    assert p0.rows() == [(0,), (1,)]
    assert f.fetch(1, 2).rows() == [(2,), (3,)]
    p2 = f.fetch(2, 2)
    assert p2.rows() == [(4,)] and p2.next_token == 3
    eos = f.fetch(3, 2)
    assert eos.result_type is ResultType.EOS and eos.next_token is None and eos.rows() == []
    assert eos.is_query_result


def test_previous_token_replays_the_same_page() -> None:
    f = fetcher_with(5)
    f.fetch(0, 2)
    again = f.fetch(1, 2)
    assert f.fetch(1, 2) is again
    assert f.fetch(2, 2).rows() == [(4,)]


@pytest.mark.parametrize("token", [1, 2, -1, 7])
def test_other_tokens_are_errors_before_first_page(token: int) -> None:
    with pytest.raises(InvalidTokenError, match="expecting 0"):
        fetcher_with(3).fetch(token, 2)


@pytest.mark.parametrize("token", [0, 4, 10])
def test_token_jumps_are_errors(token: int) -> None:
    f = fetcher_with(10)
    f.fetch(0, 2)
    f.fetch(1, 2)
    f.fetch(2, 2)
    with pytest.raises(InvalidTokenError, match=r"expecting 3 .* or 2"):
        f.fetch(token, 2)


def test_open_stream_gives_empty_payload_and_advances() -> None:
    f = fetcher_with(0, finish=False)
    page = f.fetch(0, 10, wait=0.05)
    assert page.result_type is ResultType.PAYLOAD and page.rows() == [] and page.next_token == 1


def test_orientation_forward_and_one_step_back() -> None:
    f = fetcher_with(4)
    first = f.fetch_orientation(FetchOrientation.FORWARD, 2)
    assert first.rows() == [(0,), (1,)]
    assert f.fetch_orientation(FetchOrientation.BACKWARD, 2) is first
    with pytest.raises(InvalidTokenError, match="BACKWARD once"):
        f.fetch_orientation(FetchOrientation.BACKWARD, 2)
    assert f.fetch_orientation(FetchOrientation.FORWARD, 2).rows() == [(2,), (3,)]


def test_max_rows_must_be_positive() -> None:
    with pytest.raises(ValueError):
        fetcher_with(1).fetch(0, 0)
