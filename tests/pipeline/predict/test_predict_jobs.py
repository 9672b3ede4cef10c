"""The prediction job kind links a finished job to the Predicting failure page (and nothing else does).

The link once waited for a status ``done`` that the jobs store never writes (it writes ``completed``),
so a finished prediction's row never showed its link."""
from __future__ import annotations

import pytest

from core.jobs.records import JOB_STATUSES, Job
from pipeline.predict.jobs import PREDICTION


def _job(status: str) -> Job:
    return Job(id=1, label="predict on dl19", command=["python", "-m", "pipeline", "predict"], resource="cpu",
               status=status, created=0.0, meta={"kind": PREDICTION.name})


@pytest.mark.parametrize("status", JOB_STATUSES)
def test_only_a_completed_prediction_links_to_its_page(status):
    link = PREDICTION.result_link(_job(status))
    assert link == ("/predicting-failure" if status == "completed" else None)
