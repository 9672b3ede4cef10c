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


def test_a_prediction_of_imported_answers_names_them_and_their_encoder():
    from pipeline.predict.jobs import predict_command

    argv = predict_command(["dl19"], [], generators=["text-davinci-003"], encoder="minilm")
    assert argv[argv.index("predict") + 1:] == ["--dataset", "dl19", "--generator", "text-davinci-003",
                                                "--setup", "binary", "--encoder", "minilm"]
    assert "--encoder" not in predict_command(["dl19"], ["bm25"], encoder="minilm")  # no generator: no BERTScore
    with pytest.raises(ValueError, match="encoder must be one of auto, roberta-large, minilm, got 'bert'"):
        predict_command(["dl19"], [], generators=["g"], encoder="bert")
    with pytest.raises(ValueError, match="at least one retriever, judge or generator"):
        predict_command(["dl19"], [])
