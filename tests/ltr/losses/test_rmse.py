"""RMSE starts its predictions at the data set's mean grade, and so learns on the full MQ2008 (issue 34)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ltr.losses import make_loss
from ltr.losses._common import TrainingData


def test_the_offset_starts_predictions_at_the_training_mean_grade():
    data = TrainingData(max_grade=2, list_lengths=np.array([5, 8]), slate_length=None, mean_grade=0.25)
    defaults = make_loss("rmse").dataset_defaults({}, data)
    assert defaults["n_levels"] == 3
    assert 3 / (1 + math.exp(-defaults["offset"])) == pytest.approx(0.25, rel=1e-9)
    # an explicit number of levels is the scale the offset is computed for
    assert 5 / (1 + math.exp(-make_loss("rmse").dataset_defaults({"n_levels": 5}, data)["offset"])) \
        == pytest.approx(0.25, rel=1e-9)
    # all-0 training labels: a finite offset
    zero = TrainingData(max_grade=2, list_lengths=np.array([3]), slate_length=None, mean_grade=0.0)
    assert math.isfinite(make_loss("rmse").dataset_defaults({}, zero)["offset"])


def test_the_offset_shifts_the_scores_inside_the_sigmoid_and_nothing_else():
    scores, labels = torch.tensor([[0.3, -1.0, 2.0, 0.0]]), torch.tensor([[2.0, 0.0, 1.0, -1.0]])
    shifted = make_loss("rmse", n_levels=3, offset=-1.5)(scores, labels)
    plain = make_loss("rmse", n_levels=3)(scores - 1.5, labels)  # padded slot: 0 either way
    assert shifted.item() == pytest.approx(plain.item(), rel=1e-6)
    with pytest.raises(ValueError, match="offset"):
        make_loss("rmse", offset=float("nan"))


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_rmse_learns_on_the_full_mq2008(shared_dir, tmp_path):
    """Before: best epoch 0 on every fold, test NDCG@10 below a random ranking (the scores came out
    anti-correlated with the grades). Four epochs on Fold1 must now improve on epoch 0 and beat random."""
    from ltr.data.datasets import load_fold
    from ltr.metrics import ndcg_at_k
    from ltr.store import RunStore
    from ltr.train import RunConfig, train_run

    data = str(shared_dir / "data" / "letor" / "MQ2008")
    config = RunConfig(data=data, fold=1, loss="rmse", model="mlp", epochs=4, patience=0, seed=0)
    with RunStore(tmp_path / "runs.sqlite") as store:
        result = train_run(config, store)
        run = store.find_run(result.run_id)
        stored = run["config"]
    assert run["best_epoch"] > 0
    assert stored["loss_dataset_defaults"]["n_levels"] == 3 and stored["loss_dataset_defaults"]["offset"] < -1
    # a random ranking's NDCG@10 on the same test queries: the mean over 20 random score draws
    test = load_fold(data, 1, "test")
    n = int(np.diff(test.query_ptr).max())
    labels = torch.full((test.n_queries, n), -1.0)
    for q in range(test.n_queries):
        a, b = test.query_ptr[q], test.query_ptr[q + 1]
        labels[q, :b - a] = torch.from_numpy(test.labels[a:b])
    generator = torch.Generator().manual_seed(0)
    random = np.mean([ndcg_at_k(torch.rand(labels.shape, generator=generator), labels, 10).mean().item()
                      for _ in range(20)])
    assert result.summary["test"]["ndcg@10"] > random + 0.05


def test_tables_name_rmse_with_its_offset():
    """Issue 41: tables labelled the loss "rmse" although it adds logit(mean grade / n_levels) inside allRank's
    sigmoid; every table now names it by its declared label, variants included, other losses by their name."""
    import pandas as pd

    from ltr.losses import loss_label
    from ltr.paper_table import table_lines
    from ltr.report.text import display_table

    assert loss_label("rmse") == "RMSE (allRank + mean-grade offset)"
    assert loss_label("rmse(tuned per fold)") == "RMSE (allRank + mean-grade offset) (tuned per fold)"
    assert loss_label("listnet") == "listnet" and loss_label("learndcg(normalisation=standard)") \
        == "learndcg(normalisation=standard)"
    table = pd.DataFrame({"loss": ["learndcg", "rmse"], "folds": [5, 5], "ndcg@10": [0.78, 0.77]})
    assert list(display_table(table, ks=[10])["loss"]) == ["learndcg", "RMSE (allRank + mean-grade offset)"]
    lines = table_lines({"rows": [{"loss": "rmse", "ndcg@10": 0.77}]}, {})
    assert lines[-1].startswith("| RMSE (allRank + mean-grade offset) |")
