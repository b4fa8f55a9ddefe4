"""The job status machine is data: every move is an edge of JOB_TRANSITIONS."""

from __future__ import annotations

import itertools

import pytest

from sparkgate.api.errors import IllegalTransitionError
from sparkgate.api.jobs import JOB_TRANSITIONS, JobStatus, check_job_transition

S = JobStatus

ALLOWED = {
    (S.CREATED, S.RUNNING),
    (S.CREATED, S.FAILED),  # could not start
    (S.CREATED, S.CANCELED),
    (S.RUNNING, S.FINISHED),
    (S.RUNNING, S.FAILED),
    (S.RUNNING, S.CANCELED),  # a cancelled synchronous INSERT, a stopping gateway
    (S.RUNNING, S.CANCELLING),  # STOP JOB
    (S.CANCELLING, S.CANCELED),
    (S.CANCELLING, S.FINISHED),  # STOP JOB ... WITH SAVEPOINT, as in Flink
}


def test_the_table_covers_every_status() -> None:
    assert set(JOB_TRANSITIONS) == set(JobStatus)


@pytest.mark.parametrize(("source", "target"), sorted(ALLOWED, key=str))
def test_allowed_transitions(source: S, target: S) -> None:
    check_job_transition(source, target)


@pytest.mark.parametrize(
    ("source", "target"),
    sorted(set(itertools.product(S, S)) - ALLOWED, key=str),
)
def test_every_other_move_is_refused(source: S, target: S) -> None:
    with pytest.raises(IllegalTransitionError, match=f"from {source.value} to {target.value}"):
        check_job_transition(source, target)


def test_ended_jobs_stay_ended() -> None:
    assert {s for s in S if s.is_terminal} == {S.FINISHED, S.FAILED, S.CANCELED}
    # A failure while stopping is taken for the stop: no CANCELLING -> FAILED.
    assert S.FAILED not in JOB_TRANSITIONS[S.CANCELLING]
