"""A run's id never changes: the store finds a finished run by it, and ``ltr train`` skips a config
whose id is stored. The literals below were computed by the code before the digest moved to
``core.digest`` (hand-written sha256 over sorted-key JSON); they are reference values of stored ids
and must never change."""
from __future__ import annotations

from ltr.train.config import RunConfig


def test_a_run_id_is_the_one_stored_runs_carry():
    config = RunConfig(data="Synthetic-MQ2008:seed=3,n_queries=40", fold=1, loss="lambdaloss", model="mlp",
                       lr=0.0005, loss_lr=0.01, slate_length=20,
                       loss_params={"sigma": 1.5, "weighing_scheme": "ndcgLoss2PP_scheme"},
                       model_params={"hidden": [64, 32], "dropout": 0.1},
                       log_every=5, experiment="not part of the id")
    assert config.run_id == "synthetic-mq2008_n_queries_40_seed_3-f1-lambdaloss-mlp-9126f2b27167"


def test_a_default_run_id_is_the_one_stored_runs_carry():
    assert RunConfig(data="mq2008", fold=2, loss="softmax", model="linear").run_id == "mq2008-f2-softmax-linear-5f773daed771"
