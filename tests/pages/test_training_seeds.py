"""The Training form takes several losses and seeds in one submission: one job (and run) per loss, fold and
seed (issue 34, item 1); a bad seed count queues nothing."""
from __future__ import annotations

import numpy as np
from streamlit.testing.v1 import AppTest

from core import jobs
from tests.pages.support import TIMEOUT, page_alone
from tests.support.paths import PAGES


def _page() -> AppTest:
    return page_alone("training")


def _number(at: AppTest, label: str):
    return next(n for n in at.number_input if n.label.startswith(label))



def _store_completed(store, cfg, values: dict[str, float]) -> None:
    """A completed run of ``cfg`` whose per-query NDCG@k is ``values`` at every k."""
    store.register_run(cfg.run_id, cfg.result_config())
    store.start_run(cfg.run_id, device="cpu")
    store.finish_run(cfg.run_id, test_means={f"ndcg@{k}": float(np.mean(list(values.values()))) for k in (1, 3, 5, 10)},
                     per_query={f"ndcg@{k}(gain=exp,norel=1)": values for k in (1, 3, 5, 10)}, train_seconds=1.0)

def test_the_form_submits_losses_by_folds_by_seeds_jobs(cache, monkeypatch):
    monkeypatch.setattr(jobs, "ensure_worker", lambda: None)  # the jobs stay queued: only the queue is read
    monkeypatch.setattr(jobs.queue, "ensure_worker", lambda: None)
    at = _page()
    next(m for m in at.multiselect if m.label == "Losses").set_value(["approxndcg", "learndcg"])
    next(m for m in at.multiselect if m.label == "Folds").set_value([1, 2])
    _number(at, "Seed").set_value(3)  # "Seed" (the first) and "Seeds (...)" (how many)
    _number(at, "Seeds (").set_value(2)
    next(b for b in at.button if b.label == "Start training").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    queued = jobs.list_jobs(limit=None)
    assert len(queued) == 2 * 2 * 2
    runs = {(j.meta["loss"], j.meta["fold"], j.meta["seed"]) for j in queued}
    assert runs == {(loss, fold, seed) for loss in ("approxndcg", "learndcg") for fold in (1, 2) for seed in (3, 4)}
    assert len({j.meta["run_ids"][0] for j in queued}) == 8  # eight distinct runs, none trained twice
    assert all(f"seed {j.meta['seed']}" in j.label for j in queued)
    assert any("Queued 8 job(s) (2 loss(es) x 2 fold(s) x 2 seed(s))" in s.value for s in at.success)


def test_a_seed_count_below_one_is_named_and_nothing_is_queued(cache):
    at = _page()
    _number(at, "Seeds (").set_value(0)
    next(b for b in at.button if b.label == "Start training").click().run()
    assert "Seeds (runs per fold and loss: seed, seed+1, ...): expected an integer >= 1, got 0" in \
        " | ".join(e.value for e in at.error)
    assert jobs.list_jobs(limit=None) == []


def test_results_page_shows_the_seed_spread_and_the_fold_by_seed_table(cache):
    """2 folds x 2 seeds of two losses: one configuration (seeds=0,1), each loss's mean ± seed sd, and the
    per-fold x seed table beside the paired test."""
    import numpy as np

    from ltr.store import RunStore
    from ltr.train import RunConfig

    rng = np.random.default_rng(0)
    with RunStore(cache / "runs.sqlite") as store:
        for loss in ("approxndcg", "learndcg"):
            for fold in (1, 2):
                for seed in (0, 1):
                    cfg = RunConfig(data="synthetic-mq2008", fold=fold, loss=loss, model="mlp", seed=seed)
                    values = dict(zip([f"{fold}_{i}" for i in range(15)], rng.uniform(0.3, 0.8, 15)))
                    _store_completed(store, cfg, values)
    at = AppTest.from_file(str(PAGES / "results.py"), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "seeds=0,1" in at.selectbox[3].value
    spread = at.dataframe[2].value.set_index("loss")
    assert (spread["seeds"] == 2).all() and (spread["runs"] == 4).all() and "±" in spread.loc["approxndcg", "NDCG@10"]
    per_run = at.dataframe[3].value
    assert list(per_run.columns) == ["loss", "fold", "seed 0", "seed 1", "mean over seeds"] and len(per_run) == 4
    assert any("averaged over the 2 seeds" in c.value for c in at.caption)


def test_the_form_submits_lambdamart_as_a_ranker_without_a_loss(cache, monkeypatch):
    """Issue 34: LambdaMART is a Ranker choice; the Losses field gives way to what the fields mean for it, and one
    job per fold and seed trains model lambdamart with its objective as the loss and the neural-only settings left
    at their defaults (RunConfig refuses others). Before, the Ranker choices had no lambdamart."""
    from ltr.train import RunConfig

    monkeypatch.setattr(jobs, "ensure_worker", lambda: None)
    monkeypatch.setattr(jobs.queue, "ensure_worker", lambda: None)
    at = _page()
    ranker = next(s for s in at.selectbox if s.label == "Ranker")
    assert "lambdamart" in ranker.options
    ranker.set_value("lambdamart").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [m for m in at.multiselect if m.label == "Losses"]
    assert any("tree ranker trained by LightGBM" in c.value for c in at.caption)
    assert _number(at, "Learning rate").disabled and _number(at, "Batch size").disabled
    next(m for m in at.multiselect if m.label == "Folds").set_value([1, 2])
    _number(at, "Epochs").set_value(50)
    _number(at, "Seeds (").set_value(2)
    next(b for b in at.button if b.label == "Start training").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    queued = jobs.list_jobs(limit=None)
    assert {(j.meta["loss"], j.meta["fold"], j.meta["seed"]) for j in queued} == {
        ("lambdamart", fold, seed) for fold in (1, 2) for seed in (0, 1)}
    expected = RunConfig(data="synthetic-mq2008", fold=1, loss="lambdamart", model="lambdamart", epochs=50,
                         patience=10, seed=0)
    assert expected.run_id in {j.meta["run_ids"][0] for j in queued}
    assert any("Queued 4 job(s) (lambdamart x 2 fold(s) x 2 seed(s))" in s.value for s in at.success)


def test_results_page_shows_lambdamart_as_a_baseline_row(cache):
    """Issue 34: LambdaMART's runs (model lambdamart) appear on the MLP's Results: a row of the significance table,
    of the NDCG-vs-time table and figure, its own settings named in the legend. Before, only the Ranker choice
    'lambdamart' showed them, alone and with nothing to test."""
    import json

    import numpy as np

    from ltr.store import RunStore
    from ltr.train import RunConfig

    rng = np.random.default_rng(0)
    with RunStore(cache / "runs.sqlite") as store:
        for loss, model in (("approxndcg", "mlp"), ("learndcg", "mlp"), ("lambdamart", "lambdamart")):
            for fold in (1, 2):
                for seed in (0, 1):
                    tree = {"epochs": 300, "patience": 30} if model == "lambdamart" else {}
                    cfg = RunConfig(data="synthetic-mq2008", fold=fold, loss=loss, model=model, seed=seed, **tree)
                    values = dict(zip([f"{fold}_{i}" for i in range(15)], rng.uniform(0.3, 0.8, 15)))
                    _store_completed(store, cfg, values)
    at = AppTest.from_file(str(PAGES / "results.py"), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox[1].value == "mlp"
    tree = "lambdamart (LightGBM)"
    assert tree in list(at.dataframe[0].value["loss"])  # the NDCG-vs-time table
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert tree in {trace.get("name") for trace in figure["data"]}
    assert tree in list(at.dataframe[1].value["loss"])  # the significance table
    # the legend (each note capitalised) names its own settings
    assert any("(LightGBM): a tree-ranker baseline trained with its own settings (rounds=300 · patience=30" in c.value
               for c in at.caption)
