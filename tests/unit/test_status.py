from __future__ import annotations

import itertools

import pytest

from sparkgate.api.errors import IllegalTransitionError
from sparkgate.api.status import TRANSITIONS, OperationStatus, check_transition

S = OperationStatus

ALLOWED = {
    (S.INITIALIZED, S.PENDING),
    (S.PENDING, S.RUNNING),
    (S.RUNNING, S.FINISHED),
    (S.FINISHED, S.CLOSED),
    (S.RUNNING, S.ERROR),
    (S.RUNNING, S.TIMEOUT),
    (S.PENDING, S.CANCELED),
    (S.FINISHED, S.CANCELED),
    (S.ERROR, S.CLOSED),
    (S.CANCELED, S.CLOSED),
    (S.TIMEOUT, S.CLOSED),
}
FORBIDDEN = {
    (S.FINISHED, S.RUNNING),
    (S.CLOSED, S.RUNNING),
    (S.CLOSED, S.CLOSED),
    (S.ERROR, S.FINISHED),
    (S.CANCELED, S.RUNNING),
    (S.INITIALIZED, S.FINISHED),
    (S.PENDING, S.FINISHED),
    (S.TIMEOUT, S.ERROR),
}


@pytest.mark.parametrize(("source", "target"), sorted(ALLOWED, key=str))
def test_allowed_transitions(source: S, target: S) -> None:
    check_transition(source, target)


@pytest.mark.parametrize(("source", "target"), sorted(FORBIDDEN, key=str))
def test_forbidden_transitions_raise(source: S, target: S) -> None:
    with pytest.raises(IllegalTransitionError, match=f"{source.value} to {target.value}"):
        check_transition(source, target)


def test_table_covers_every_status_and_closed_is_final() -> None:
    assert set(TRANSITIONS) == set(S)
    assert TRANSITIONS[S.CLOSED] == frozenset()
    for source, target in itertools.product(S, S):
        if target in TRANSITIONS[source]:
            assert source is not S.CLOSED


def test_terminal_statuses() -> None:
    assert {s for s in S if s.is_terminal} == {S.FINISHED, S.CANCELED, S.CLOSED, S.ERROR, S.TIMEOUT}
