"""The Predicting failure page (AppTest) and pipeline.views.predicting_failure, on a stored result built
from scripted predictor values and targets (the evaluation itself is real)."""
from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from pipeline.predict import catalog, evaluation, store
from pipeline.predict.compute import Prediction
from pipeline.predict.llm_signals import Absent
from pipeline.views import predicting_failure as view
from tests.support.paths import PAGES, ROOT

PAGE = str(PAGES / "predicting-failure.py")


def scripted_prediction() -> Prediction:
    rng = np.random.default_rng(5)
    predictors, targets, provenance = {}, {}, {"index": {}, "runs": {}, "models": ["imported:judge_x"]}
    for dataset, n in (("dl19", 30), ("dl20", 36)):
        qids = [f"{dataset[-2:]}{i:03d}" for i in range(n)]
        easy = rng.normal(size=n)
        ndcg = dict(zip(qids, 1 / (1 + np.exp(-easy))))
        disagreement = dict(zip(qids, np.clip(0.3 - 0.1 * easy + rng.normal(0, 0.05, n), 0, 1)))
        hard_r = {q for q in qids if ndcg[q] <= np.quantile(list(ndcg.values()), 0.25)}
        hard_j = {q for q in qids if disagreement[q] >= np.quantile(list(disagreement.values()), 0.75)}
        targets[dataset] = [evaluation.Target("nDCG@10[bm25]", "h2r", dataset, ndcg, True, frozenset(hard_r)),
                            evaluation.Target("disagreement[judge_x (binary)]", "h2j", dataset, disagreement, False,
                                              frozenset(hard_j))]
        predictors[dataset] = {
            "sd@100[bm25]": catalog.PredictorValues("sd@100[bm25]", "sd@100", catalog.POST, "bm25",
                                                    dict(zip(qids, easy + rng.normal(0, 0.5, n)))),
            "avg_idf": catalog.PredictorValues("avg_idf", "avg_idf", catalog.PRE, "", dict(zip(qids, rng.normal(size=n))),
                                               partial=True)}
        provenance["index"][dataset] = {"partial": True, "description": f"the data folder's passages ({dataset})"}
        provenance["runs"][dataset] = [{"name": "bm25", "provenance": "imported full-corpus run (runs/run.bm25.txt)"}]
    rows = evaluation.evaluate(predictors, targets, n_boot=100)
    provenance["bootstrap"] = {"n_boot": 100, "seed": 0, "confidence": 0.95}
    return Prediction(["dl19", "dl20"], predictors, targets, rows, provenance,
                      {"retrievers": ["bm25"], "judges": ["judge_x"], "k": 100},
                      [Absent("expected_grade_sd[judge_x]", "judge_x: imported judgments hold labels only")])


def test_views_heatmap_cell_and_downloads(cache):
    result_id, _ = store.save(scripted_prediction().as_dict())
    result = view.load(result_id)
    assert view.scopes(result) == ["dl19", "dl20", "pooled"]
    fig = view.heatmap(result, "dl19")
    heat, points = fig.data
    assert list(heat.y) == ["avg_idf", "sd@100[bm25]"] and list(heat.x) == ["nDCG@10[bm25]",
                                                                             "disagreement[judge_x (binary)]"]
    row = next(r for r in result["evaluation"] if r["dataset"] == "dl19" and r["predictor"] == "sd@100[bm25]"
               and r["target"].startswith("disagreement"))
    assert heat.z[1][1] == pytest.approx(-row["kendall_tau"])  # oriented: disagreement's higher is harder
    assert heat.z[1][1] > 0 and heat.text[1][1].endswith("*") == (row["kendall_p_holm"] < 0.05)
    clicked = {"points": [{"customdata": list(points.customdata[3])}]}
    assert view.cell_from_selection(clicked) == ("sd@100[bm25]", "disagreement[judge_x (binary)]")
    frame = view.cell_frame(result, "pooled", "sd@100[bm25]", "disagreement[judge_x (binary)]")
    n_hard = sum(len(result["targets"][d]["disagreement[judge_x (binary)]"]["hard"]) for d in ("dl19", "dl20"))
    assert len(frame) == 66 and frame["hard"].sum() == n_hard > 0
    scatter = view.cell_scatter(frame, "sd@100[bm25]", "disagreement[judge_x (binary)]")
    assert [t.name for t in scatter.data] == ["not in the hard set", "in the task's hard set"]
    table = view.table_frame(result)
    assert len(table) == 12 and set(table["dataset"]) == {"dl19", "dl20", "pooled"}
    assert view.table_csv(table).splitlines()[0].startswith("dataset,predictor,family,target")
    latex = view.table_latex(table, "caption")
    assert r"\toprule" in latex and r"\bottomrule" in latex and r"sd@100[bm25]".replace("_", r"\_") in latex
    assert r"avg\_idf" in latex and r"AUC \textgreater{} 0.5" in latex  # one escaping (core.export)
    assert "partial" in view.partial_warning(result)
    assert "runs/run.bm25.txt" in view.provenance_line(result)


def test_page_shows_heatmap_table_and_downloads(cache):
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception
    assert any("No prediction stored yet" in i.value for i in at.info)
    store.save(scripted_prediction().as_dict())
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("partial" in w.value for w in at.warning)
    texts = " ".join(t.value for t in at.text)
    assert "Not computed: expected_grade_sd[judge_x]" in texts and "Index statistics" in texts
    assert any("AUC > 0.5" in c.value for c in at.caption)
    assert len(at.dataframe) == 1 and len(at.dataframe[0].value) == 4  # dl19: 2 predictors x 2 targets
    at.radio[0].set_value("pooled").run()
    assert not at.exception and set(at.dataframe[0].value["dataset"]) == {"pooled"}


SHARED = ROOT.parent / "shared" / "data" / "trec_dl"


@pytest.mark.skipif(not (SHARED / "runs").is_dir(), reason="no shared TREC DL data")
def test_page_queues_a_prediction_job_of_the_folders_runs_and_judges(cache, monkeypatch):
    from core import jobs

    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(SHARED))
    monkeypatch.setattr(jobs, "ensure_worker", lambda: None)  # nothing starts: the queue is only read
    monkeypatch.setattr(jobs.queue, "ensure_worker", lambda: None)
    assert view.shared_components(view.folder_components(SHARED), ["dl19", "dl21"]) == (["bm25"], [])
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    datasets = next(m for m in at.multiselect if m.label == "Datasets")
    datasets.set_value(["dl19", "dl20"]).run()
    setups = next(m for m in at.multiselect if m.label == "Judging setups")
    setups.set_value(["binary", "graded"]).run()
    next(b for b in at.button if b.label == "Compute").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (job,) = view.PREDICTION.jobs()
    assert job.meta["datasets"] == ["dl19", "dl20"] and job.meta["retrievers"] == ["bm25", "tasb"]
    assert job.meta["judges"] == ["flan-t5-large", "llama-3.3-70b"]
    assert "predict on dl19+dl20" in job.label and "binary/graded" in job.label
    argv = job.command[job.command.index("predict") + 1:]
    assert argv == ["--dataset", "dl19", "--dataset", "dl20", "--retriever", "bm25", "--retriever", "tasb",
                    "--judge", "flan-t5-large", "--judge", "llama-3.3-70b", "--setup", "binary", "--setup", "graded",
                    "--data", str(SHARED)]


def test_a_sub_1b_generator_is_said_not_to_be_a_finding():
    result = {"provenance": {"generators": {"dl19": [{"generator": {"label": "embedded:SmolLM2 (sub-1B)", "small": True}}]},
                             "judges": {"dl19": [{"judge": "llama", "provenance": {"label": "imported:llama"}}]}}}
    assert "embedded:SmolLM2 (sub-1B): a sub-1B model" in view.small_model_warning(result)
    result["provenance"]["generators"]["dl19"][0]["generator"]["small"] = False
    assert view.small_model_warning(result) is None


def prediction_with_ceiling() -> dict:
    """dl19 with one H2G target whose generator has a stored ceiling (planted: two samples, one swap, τ 0.8)
    and one whose h2g-samples result was scored with another quantile."""
    from pipeline.predict.ceiling import MEANING, sampling_ceiling

    rng = np.random.default_rng(3)
    qids = [f"19{i:03d}" for i in range(30)]
    bert = dict(zip(qids, rng.uniform(0.6, 0.9, 30)))
    hard = frozenset(sorted(bert, key=bert.get)[:7])
    targets = {"dl19": [evaluation.Target("BERTScore F1[g]", "h2g", "dl19", bert, True, hard),
                        evaluation.Target("BERTScore F1[h]", "h2g", "dl19", bert, True, hard)]}
    predictors = {"dl19": {"sd@100[bm25]": catalog.PredictorValues(
        "sd@100[bm25]", "sd@100", catalog.POST, "bm25", {q: v + rng.normal(0, 0.05) for q, v in bert.items()})}}
    rows = evaluation.evaluate(predictors, targets, n_boot=100)
    values = {"0": {q: float(i) for i, q in enumerate("abcde")}, "1": {"a": 1.0, "b": 0.0, "c": 2.0, "d": 3.0, "e": 4.0}}
    ceilings = {"dl19": {
        "BERTScore F1[g]": {"available": True, "result": "r" * 64, "generator": "g", "dataset": "dl19", "n_samples": 2,
                            "meaning": MEANING, **sampling_ceiling(values, {"0": ["a"], "1": ["b"]})},
        "BERTScore F1[h]": {"available": False, "result": "s" * 64, "generator": "h", "dataset": "dl19",
                            "meaning": MEANING, "reason": "the stored h2g-samples result ssss differs: quantile 0.5"}}}
    provenance = {"index": {"dl19": {"partial": False, "description": "full"}}, "runs": {}, "models": [],
                  "bootstrap": {"n_boot": 100, "seed": 0, "confidence": 0.95}}
    return Prediction(["dl19"], predictors, targets, rows, provenance, {"generators": ["g", "h"]},
                      ceilings=ceilings).as_dict()


def test_the_page_shows_the_sampling_ceiling_beside_the_best_predictor(cache):
    result_id, _ = store.save(prediction_with_ceiling())
    result = view.load(result_id)
    frame = view.ceiling_frame(result, "dl19")
    assert list(frame["what"]) == [f"sampling ceiling (2 samples, h2g-samples {'r' * 12})",
                                   "best predictor: sd@100[bm25]"]
    assert frame["kendall_tau"][0] == pytest.approx(0.8) and frame["auc"][0] == pytest.approx(0.75)
    assert frame["smare"][0] == pytest.approx(0.08) and frame["kendall_tau range"][0] == "[0.80, 0.80]"
    row = next(r for r in result["evaluation"] if r["target"] == "BERTScore F1[g]")
    assert frame["kendall_tau"][1] == pytest.approx(row["tau_easier"])
    assert view.ceiling_frame(result, "pooled").empty  # a ceiling is one dataset's
    assert view.ceiling_lines(result, "dl19") == ["dl19 BERTScore F1[h]: no sampling ceiling: the stored h2g-samples "
                                                  "result ssss differs: quantile 0.5"]
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "The sampling ceiling of H2G" in [s.value for s in at.subheader]
    captions = " ".join(c.value for c in at.caption)
    assert "no predictor of this target can be expected to do better" in captions
    assert "BERTScore F1[h]: no sampling ceiling" in captions
    shown = next(d.value for d in at.dataframe if "what" in d.value)
    assert shown["kendall_tau"][0] == pytest.approx(0.8)


@pytest.mark.skipif(not (SHARED / "answers").is_dir(), reason="no shared TREC DL answers")
def test_the_form_offers_the_imported_answers_with_the_encoder_of_their_stored_samples(cache, monkeypatch):
    from core import jobs
    from core.result_files import save_result

    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(SHARED))
    monkeypatch.setattr(jobs, "ensure_worker", lambda: None)
    monkeypatch.setattr(jobs.queue, "ensure_worker", lambda: None)
    assert view.shared_answers(view.folder_components(SHARED), ["dl19"]) == ["gpt-4o-mini", "text-davinci-003"]
    assert view.ceiling_encoder(["dl19"], ["text-davinci-003"]) == "auto"  # no h2g-samples result: the CLI default
    save_result("h2g-samples", {"kind": "h2g-samples", "version": 1, "id": "planted", "dataset": "dl19",
                                "generator": "text-davinci-003", "bertscore": {"encoder": "minilm"}})
    assert view.ceiling_encoder(["dl19"], ["text-davinci-003"]) == "minilm"
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    next(m for m in at.multiselect if m.label.startswith("Generators")).set_value(["text-davinci-003"]).run()
    assert next(s for s in at.selectbox if s.label == "BERTScore encoder").value == "minilm"
    next(b for b in at.button if b.label == "Compute").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (job,) = view.PREDICTION.jobs()
    argv = job.command[job.command.index("predict") + 1:]
    assert argv[argv.index("--generator") + 1] == "text-davinci-003" and argv[argv.index("--encoder") + 1] == "minilm"
    assert job.meta["generators"] == ["text-davinci-003"]
