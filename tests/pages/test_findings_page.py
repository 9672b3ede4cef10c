"""The Findings page under AppTest: both sections, with a stored run-store experiment (LearnDCG clearly
above ApproxNDCG on every query) and no study: the LearnDCG claims read from the store, the failure claims
"not measurable here" with their reasons, and store text (a configuration label) shown as text."""
from __future__ import annotations

import numpy as np

from ltr.store import RunStore
from tests.pages.support import app_page
from tests.pipeline.stored_figures import write_preference_result

DATA, MODEL, EXPERIMENT = "synthetic-mq2008", "mlp", "tiny-grid"


def _seed(cache, losses=("learndcg", "approxndcg")) -> None:
    rng = np.random.default_rng(0)
    with RunStore(cache / "runs.sqlite") as store:
        for fold in (1, 2, 3):
            base = rng.uniform(0.2, 0.7, 40)
            for loss in losses:
                values = base + 0.1 if loss == "learndcg" else base
                run_id = f"{loss}-{fold}"
                store.register_run(run_id, {"data": DATA, "fold": fold, "loss": loss, "model": MODEL, "seed": 0,
                                            "epochs": 2, "lr": 0.001, "experiment": EXPERIMENT},
                                   experiment=EXPERIMENT)
                store.start_run(run_id, device="cpu")
                per_query = {f"ndcg@{k}": {f"{fold}_{i}": float(v) for i, v in enumerate(values)} for k in (1, 3, 5, 10)}
                store.finish_run(run_id, test_means={m: float(np.mean(list(pq.values()))) for m, pq in per_query.items()},
                                 per_query=per_query, train_seconds=2.0 if loss == "learndcg" else 1.0)


def test_findings_page_both_sections(cache):
    _seed(cache)
    at = app_page("findings")
    texts = "\n".join(t.value for t in at.text)
    assert "reason: dl19: no study for dl19" in texts  # the failure section, nothing stored
    assert at.selectbox(key="ltr_experiment").value == EXPERIMENT
    frames = [df.value for df in at.dataframe]
    ltr_summary = next(f for f in frames if "learndcg_highest" in set(f.get("finding", [])))
    verdicts = dict(zip(ltr_summary["finding"], ltr_summary["verdict"]))
    assert verdicts["learndcg_highest"] == "holds" and verdicts["neuralloss_vs_learndcg"] == "not measurable here"
    cost = next(f for f in frames if "minutes_mean" in f.columns)
    assert list(cost["loss"]) == ["approxndcg", "learndcg"]  # cheapest first
    from ltr.cost import MINUTES_CONVENTION  # the cost ranking names its minutes' convention
    assert any(MINUTES_CONVENTION in c.value for c in at.caption)
    labels = {b.label for b in at.get("download_button")}
    assert {"Download findings (CSV)", "Download LearnDCG findings (LaTeX)",
            "Download the comparison's figures and tables (ZIP)"} <= labels
    assert not at.markdown or all("<" not in m.value for m in at.markdown)


def _summary(at, finding: str) -> str:
    """The verdict of ``finding`` in the page's summary tables."""
    for frame in (df.value for df in at.dataframe):
        if finding in set(frame.get("finding", [])):
            return dict(zip(frame["finding"], frame["verdict"]))[finding]
    raise AssertionError(f"{finding} is not on the page")


def test_a_rerun_checks_again_only_what_changed(cache, monkeypatch):
    """Both sections are cached per state of the stores they read: a rerun with nothing new checks
    nothing again; a new preference result and a new completed run are checked and shown at once."""
    import ltr.findings
    import pipeline.findings.registry

    calls = {"ltr": 0, "pipeline": 0}

    def count(module, key):
        original = module.check_findings

        def counted(*args, **kwargs):
            calls[key] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, "check_findings", counted)

    count(ltr.findings, "ltr")
    count(pipeline.findings.registry, "pipeline")
    _seed(cache)
    at = app_page("findings")
    assert calls == {"ltr": 1, "pipeline": 1}
    assert _summary(at, "difficulty_aware_preferred") == "not measurable here"
    assert _summary(at, "neuralloss_vs_learndcg") == "not measurable here"
    at.run()
    at.run()
    assert not at.exception and calls == {"ltr": 1, "pipeline": 1}

    write_preference_result(cache, "dl20", ["win"] * 6 + ["loss"] * 6)  # a new result: the interval straddles 50%
    at.run()
    assert calls == {"ltr": 1, "pipeline": 2}
    assert _summary(at, "difficulty_aware_preferred") == "inconclusive"  # issue 33 (it read "does not hold")

    _seed(cache, losses=("neuralloss",))  # new runs: NeuralLoss on the same folds
    at.run()
    assert calls == {"ltr": 2, "pipeline": 2}
    assert _summary(at, "neuralloss_vs_learndcg") == "holds"


def test_runs_trained_from_the_training_page_appear_as_an_experiment(cache):
    """Issue 34: the Training page stores runs without an experiment name, and the LearnDCG section listed only
    named experiments ("No experiment with completed runs"). They appear under their own label, are checked,
    and the page says why they have no comparison export."""
    from ltr.findings import NO_EXPERIMENT

    rng = np.random.default_rng(0)
    with RunStore(cache / "runs.sqlite") as store:
        for fold in (1, 2, 3):
            base = rng.uniform(0.2, 0.7, 40)
            for loss in ("learndcg", "approxndcg"):
                run_id = f"dashboard-{loss}-{fold}"
                store.register_run(run_id, {"data": DATA, "fold": fold, "loss": loss, "model": MODEL, "seed": 0,
                                            "epochs": 2, "lr": 0.001})
                store.start_run(run_id, device="cpu")
                values = base + 0.1 if loss == "learndcg" else base
                per_query = {f"ndcg@{k}": {f"{fold}_{i}": float(v) for i, v in enumerate(values)} for k in (1, 3, 5, 10)}
                store.finish_run(run_id, test_means={m: float(np.mean(list(pq.values()))) for m, pq in per_query.items()},
                                 per_query=per_query, train_seconds=1.0)
    at = app_page("findings")
    assert not at.exception
    assert at.selectbox(key="ltr_experiment").options == [NO_EXPERIMENT]
    assert _summary(at, "learndcg_highest") == "holds"
    assert any("takes a named experiment" in i.value for i in at.info)
