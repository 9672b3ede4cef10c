"""The Query page (AppTest) and pipeline.views.query, on a planted DL19 store: the designed study of
``tests/support/failure_fixture.py`` as ``run_study`` stored it (``tests/fixtures/study_before_generic_tasks.json``,
its run and qrels rewritten into a DL19 data folder here, so nothing is recomputed and no BERTScore runs),
a typology run, an annotator's answers, a prediction and a difficulty-aware result, each planted in its
own store. Every expected figure is the designed collection's (module docstring of failure_fixture) or
read from the stored file, never typed from a run of the page."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from pipeline.views import h2g_samples
from pipeline.views import query as view
from tests.pages.support import open_query_page, store_designed_study
from tests.support.failure_fixture import OFF_TOPIC, RELEVANT, TOPICS
from tests.support.paths import ROOT

HOSTILE_REASON = "asks <img src=x onerror=alert(1)> about **markup**"
BINARY = "designed-run | answers-without-q3 | designed-judge | binary"
GENERATOR = "answers-without-q3"  # the stored study's generator (its answers lack q3)


def _frame(at: AppTest, column: str):
    """The page's one dataframe that has ``column``."""
    (frame,) = [d.value for d in at.dataframe if column in d.value.columns]
    return frame


@pytest.fixture
def planted_study(cache, tmp_path):
    """The designed study stored as a DL19 study with its data folder (``support.store_designed_study``)."""
    return store_designed_study(cache, tmp_path)


def _plant_typology() -> str:
    from pipeline.typology.categories import Assignment, Category
    from pipeline.typology.induction import HardQuery
    from pipeline.typology.store import TypologyStore

    numbers = Category("Numbers", "asks for a figure")
    with TypologyStore() as store:
        store.start_run("dl19-h2j-planted", dataset="dl19", task="h2j", source="imported", typology_label="planted",
                        hard_set={}, config={}, provenance={"backend": "ollama", "model": "qwen3:8b", "small": False,
                                                            "label": "ollama:qwen3:8b [abc]", "parameters_b": 8.19,
                                                            "size_source": "ollama /api/show"},
                        queries=[HardQuery("q1", TOPICS["q1"], "ctx"), HardQuery("q8", TOPICS["q8"], "ctx")])
        store.save_typology("dl19-h2j-planted", [numbers], None)
        store.save_assignments("dl19-h2j-planted", [Assignment("q1", "h2j", [(numbers, HOSTILE_REASON)]),
                                                    Assignment("q8", "h2j", [])])
    return "dl19-h2j-planted"


def _plant_annotation(run_id: str) -> None:
    from pipeline.annotation.store import AnnotationStore, default_path

    header = "annotator,dataset,task,qid,category,llm_assigned,human_applicable,run_id,model,llm_answer\n"
    with AnnotationStore(default_path()) as store:
        store.import_csv("planted.csv", header + f"ann,dl19,h2j,q1,Numbers,1,0,{run_id},qwen3:8b,readable\n")


def _plant_prediction() -> str:
    from pipeline.predict import catalog, evaluation, store
    from pipeline.predict.compute import Prediction

    qids = [f"q{i}" for i in range(1, 9)]
    avg_idf = {q: float(i) for i, q in enumerate(qids, start=1)}  # q1 lowest: percentile 1/8
    target = evaluation.Target("nDCG@10[designed-run]", "h2r", "dl19", {q: 0.5 for q in qids}, True, frozenset())
    predictors = {"dl19": {"avg_idf": catalog.PredictorValues("avg_idf", "avg_idf", catalog.PRE, "", avg_idf)}}
    result_id, _ = store.save(Prediction(["dl19"], predictors, {"dl19": [target]}, [], {"index": {}, "runs": {}}, {},
                                         []).as_dict())
    return result_id


def test_the_page_reads_every_store_for_one_query(planted_study):
    """q1 of the designed collection: retrieved first (nDCG@10 1), answered with its own passage, and both of its
    pairs flipped by the judge (H2J); the typology, annotation, prediction and preference stores each hold it."""
    from tests.support.preference_helpers import stored_result

    _plant_annotation(_plant_typology())
    prediction = _plant_prediction()
    preference = stored_result()  # the scripted difficulty-aware result of DL19 (its queries q1..q4)
    at = open_query_page(dataset="dl19", qid="q1")
    texts = [t.value for t in at.text]
    assert TOPICS["q1"] in texts and at.query_params["qid"] == "q1"

    retrieval = _frame(at, "in its H2R set (all queries)").set_index("retriever")
    stored_ndcg = planted_study["retrievers"]["designed-run"]["per_query"]["q1"]
    assert retrieval.loc["designed-run", "nDCG@10"] == stored_ndcg == 1
    top = _frame(at, "rank")  # read from the run file, graded from the data folder's qrels file
    assert top["pid"].tolist() == ["r1", "n1", "x1"] and top["NIST grade"].tolist() == ["3", "0", "unjudged"]
    # texts: the study's relevant passage, then the data folder's judged passage; x1 is in neither
    assert top["text"].tolist() == [RELEVANT["q1"], OFF_TOPIC, view.NO_TEXT]

    generation = _frame(at, "BERTScore F1").set_index("generator")
    assert generation.loc[GENERATOR, "answer"] == RELEVANT["q1"]
    assert generation.loc[GENERATOR, "BERTScore F1"] == planted_study["generators"][GENERATOR]["per_query"]["q1"]
    assert "all-MiniLM-L6-v2" in generation.loc[GENERATOR, "BERTScore"]
    references = next(d.value for d in at.dataframe if list(d.value.columns) == ["pid", "NIST grade", "text"])
    assert references.values.tolist() == [["r1", "3", RELEVANT["q1"]]]

    judged = _frame(at, "judge's label")
    binary = judged[(judged["judge"] == "designed-judge") & (judged["setup"] == "binary")].set_index("pid")
    assert binary.loc["r1", ["judge's label", "NIST grade", "disagrees"]].tolist() == [0, "3", "yes"]
    assert binary.loc["n1", ["judge's label", "NIST grade", "disagrees"]].tolist() == [3, "0", "yes"]
    assert (binary["query's disagreement (stored)"] == 1.0).all()
    assert "qrels.dl19-passage.txt" in " ".join(c.value for c in at.caption)

    sets = _frame(at, "hard to judge (H2J)").set_index("configuration")
    assert sets.loc[BINARY, "studies"] == planted_study["id"]
    assert sets.loc[BINARY, ["hard to retrieve (H2R)", "hard to generate (H2G)", "hard to judge (H2J)"]].tolist() == [
        "q1" in planted_study["configurations"][BINARY]["sets"][t] for t in ("h2r", "h2g", "h2j")]
    assert sets.loc[BINARY, "hard to judge (H2J)"] and not sets.loc[BINARY, "hard to retrieve (H2R)"]  # the design

    reasons = _frame(at, "free-text reason")
    assert reasons.loc[0, "reasons"] == f"Numbers: {HOSTILE_REASON}" and reasons.loc[0, "task"] == "H2J"
    assert reasons.loc[0, "model"] == "ollama:qwen3:8b [abc] (8.19B (ollama /api/show))"
    answers = _frame(at, "annotator applies")
    assert answers[["annotator", "category", "LLM assigned", "annotator applies"]].values.tolist() == [
        ["ann", "Numbers", True, False]]
    predictors = _frame(at, "percentile").set_index("predictor")
    assert predictors.loc["avg_idf", "value"] == 1.0 and predictors.loc["avg_idf", "percentile"] == pytest.approx(12.5)
    assert predictors.loc["avg_idf", "of queries"] == 8
    assert f"result {prediction}" in [c.value for c in at.caption]  # the prediction's provenance line

    pairs = [p for p in preference["pairs"] if p["qid"] == "q1"]
    assert pairs and [e.label for e in at.expander if e.label.startswith(preference["id"])] == [
        f"{preference['id']} · {p['task'].upper()} · {p['outcome']}" for p in pairs]
    # every store planted here held the query: only the H2G sampling result (planted by test_pages_h2g_samples.py)
    # and the difficulty-aware judging and retrieval results (planted by tests/pages/test_query_page_aware.py) are
    # reported missing, each with the command that makes one
    missing = view.missing_lines("dl19")
    assert [i.value for i in at.info] == [h2g_samples.missing_line("dl19"), missing["aware-judge"],
                                          missing["aware-retrieve"]]


def test_untrusted_text_is_shown_as_text_never_as_html(planted_study):
    """q7's query and its relevant passage are HTML; the typology reason of q1 is HTML and Markdown. They reach the
    page as st.text and DataFrame cells only: no Markdown element (which would render them) carries them."""
    _plant_typology()
    at = open_query_page(dataset="dl19", qid="q7")
    assert TOPICS["q7"] in [t.value for t in at.text]
    assert _frame(at, "BERTScore F1").loc[0, "answer"] == RELEVANT["q7"]
    references = next(d.value for d in at.dataframe if list(d.value.columns) == ["pid", "NIST grade", "text"])
    assert references["text"].tolist() == [RELEVANT["q7"]]
    at = open_query_page(dataset="dl19", qid="q1")
    assert HOSTILE_REASON in _frame(at, "free-text reason").loc[0, "reasons"]
    for page in (at, open_query_page(dataset="dl19", qid="q7")):
        rendered = [e.value for kind in ("markdown", "caption", "info", "warning", "title", "header", "subheader")
                    for e in getattr(page, kind)]
        assert not [r for r in rendered if "<script" in r or "<img" in r or "<b>" in r], rendered


def test_what_is_missing_says_how_to_produce_it(planted_study):
    at = open_query_page(dataset="dl19", qid="q8")
    infos = [i.value for i in at.info]
    assert any("python -m pipeline typology --dataset dl19" in i for i in infos)
    assert any("python -m pipeline predict --dataset dl19" in i for i in infos)
    assert any("python -m pipeline prefer --dataset dl19" in i for i in infos)
    assert _frame(at, "BERTScore F1").loc[0, "answer"] == OFF_TOPIC
    at = open_query_page(dataset="dl19", qid="no-such-query")
    assert at.warning[0].value == "No store of DL19 holds query 'no-such-query'."


def test_a_run_file_that_is_gone_is_named(planted_study, tmp_path):
    (tmp_path / "designed" / "run.txt").unlink()
    at = open_query_page(dataset="dl19", qid="q1")
    assert any("designed-run's run file" in c.value and "is not there any more" in c.value for c in at.caption)
    assert _frame(at, "in its H2R set (all queries)").loc[0, "nDCG@10"] == 1  # the study's own figure stays


def test_the_failure_overlap_region_table_links_each_query(planted_study):
    """The region's query table has a link column to the Query page, and the chosen query a link button."""
    at = AppTest.from_file(str(ROOT / "pages" / "failure-overlap.py"), default_timeout=60)
    at.run()
    at.radio[0].set_value("h2r").run()  # the H2R-only region of the binary configuration: q7
    assert not at.exception
    table = _frame(at, view.LINK_COLUMN)
    assert table["qid"].tolist() == ["q7"] and table[view.LINK_COLUMN].tolist() == ["query?dataset=dl19&qid=q7"]
    assert [b.proto.url for b in at.get("link_button")] == ["query?dataset=dl19&qid=q7"]


def test_links_of_a_frame_over_several_datasets():
    import pandas as pd

    frame = pd.DataFrame({"dataset": ["dl19", "dl20"], "qid": ["1 2", "b&c"]})
    linked = view.with_query_links(frame, frame["dataset"])
    assert linked[view.LINK_COLUMN].tolist() == ["query?dataset=dl19&qid=1+2", "query?dataset=dl20&qid=b%26c"]


def test_choosing_another_dataset_opens_its_first_query(planted_study, cache):
    """A deep link's query belongs to its dataset: choosing another dataset opens that one's first query (before:
    the page looked for the link's qid in the other dataset and stopped with "no store holds query")."""
    other = {**planted_study, "dataset": "dl20", "queries": {"d1": "a query of another year"}}
    target = cache / "failure" / "dl20" / "studies" / f"{planted_study['id']}.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(other))
    at = open_query_page(dataset="dl19", qid="q7")
    next(s for s in at.selectbox if s.label == "Dataset").set_value("dl20").run()
    assert not at.exception and not at.warning
    assert next(s for s in at.selectbox if s.label == "Query").value == "d1"
    assert "a query of another year" in [t.value for t in at.text]
    assert (at.query_params["dataset"], at.query_params["qid"]) == ("dl20", "d1")


def test_the_failure_typology_queries_table_links_each_query(cache):
    _plant_typology()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/failure-typology.py").run()
    assert not at.exception, [e.value for e in at.exception]
    table = _frame(at, view.LINK_COLUMN)
    assert table[view.LINK_COLUMN].tolist() == ["query?dataset=dl19&qid=q1", "query?dataset=dl19&qid=q8"]
    assert [b.proto.url for b in at.get("link_button")] == ["query?dataset=dl19&qid=q1"]


def test_a_small_model_is_named_not_a_finding(planted_study, cache):
    path = cache / "failure" / "dl19" / "studies" / f"{planted_study['id']}.json"
    study = json.loads(path.read_text())
    label = "embedded:smollm2-135m [abc] (sub-1B model: not a finding)"
    study["generators"][GENERATOR]["provenance"] = {"backend": "embedded", "model": "smollm2-135m", "small": True,
                                                    "label": label}
    path.write_text(json.dumps(study))
    at = open_query_page(dataset="dl19", qid="q1")
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith(f"The generator {GENERATOR} (embedded:smollm2-135m [abc]") and "not a finding" in warning
    assert "under 1B" in warning  # the size, as Provenance.size_text gives it


def test_a_link_to_an_unknown_dataset_reads_no_folder(planted_study, cache):
    """A dataset name from the URL is a folder name of the studies store: one no store or registry knows is
    refused (and a link to a registry dataset without a store says what is missing)."""
    outside = cache / "failure" / "outside" / "studies"
    outside.mkdir(parents=True)
    (outside / f"{planted_study['id']}.json").write_text(json.dumps({**planted_study, "dataset": "outside"}))
    at = open_query_page(dataset="../failure/outside", qid="q1")
    assert at.warning[0].value == "No store holds a dataset called '../failure/outside'."
    assert next(s for s in at.selectbox if s.label == "Dataset").value == "dl19"
    at = open_query_page(dataset="dl21", qid="1")
    assert at.warning[0].value == "No store of DL21 holds query '1'."
    assert any("python -m pipeline run --dataset dl21" in c.value for c in at.caption)


def test_a_difficulty_aware_pair_shows_its_reasons_answers_and_verdicts(cache):
    from pipeline.views.difficulty_aware_generation import ORDER_TITLES
    from tests.support.preference_helpers import HOSTILE, stored_result

    result = stored_result()
    (pair,) = [p for p in result["pairs"] if p["qid"] == "q4"]  # HOSTILE's pair
    at = open_query_page(dataset="dl19", qid="q4")
    details = _frame(at, "sentence from")
    assert details.loc[0, "reasons"] == "; ".join(pair["categories"]) and details.loc[0, "task"] == pair["task"].upper()
    texts = [t.value for t in at.text]
    assert HOSTILE in texts  # the query, from the pair: no study of DL19 is stored here
    assert pair["answers"]["baseline"] in texts and pair["answers"]["aware"] in texts
    verdicts = _frame(at, "judge's reply")
    shown = [o for o in ("ab", "ba") if o in pair["verdicts"]]
    assert verdicts["judge's reply"].tolist() == [pair["verdicts"][o]["raw"] for o in shown]
    assert verdicts["order"].tolist() == [ORDER_TITLES[o] for o in shown]
    rendered = [e.value for kind in ("markdown", "caption", "title", "header", "subheader") for e in getattr(at, kind)]
    assert not [r for r in rendered if "<script" in r or "<b>" in r]


def test_a_computed_retrievers_rows_are_found(planted_study, cache):
    """Issue 36: a screenshot showed the Retrieval and Hard sets tables empty (the browser grids had not drawn yet:
    tests/browser/test_browser_query.py now waits for their rows). The rows themselves do not depend on how the
    retriever is named: a study whose retriever is ``bm25@computed`` (the name of a run computed over the data
    folder) and whose qids are TREC's digit strings gives the same rows as the designed names."""
    path = cache / "failure" / "dl19" / "studies" / f"{planted_study['id']}.json"
    text = path.read_text().replace('"designed-run"', '"bm25@computed"').replace("designed-run |", "bm25@computed |")
    for i in range(8, 0, -1):  # q8 before q1: no qid is a prefix of another's replacement
        text = text.replace(f'"q{i}"', f'"{1037790 + i}"')
    path.write_text(text)
    (study,) = view.stored_studies("dl19")
    assert "bm25@computed" in study.retrievers and "1037797" in study.queries  # q7, the H2R query of the design
    retrieval = view.retrieval_frame(study, "1037797")
    assert retrieval[["retriever", "nDCG@10", "in its H2R set (all queries)"]].values.tolist() == [
        ["bm25@computed", 0.0, True]]
    sets = view.hard_sets_frame(view.studies_with([study], "1037797"), "1037797")
    assert sets["configuration"].tolist() == [label.replace("designed-run", "bm25@computed")
                                              for label in planted_study["configurations"]]
    assert sets["hard to retrieve (H2R)"].all() and not sets["hard to judge (H2J)"].any()


def test_studies_that_ran_one_configuration_alike_share_a_row_of_the_hard_sets_table(planted_study, cache):
    # two identical studies (as every rerun stored before one study per configuration): one row per configuration
    copy = dict(planted_study, id=planted_study["id"][:-4] + "ffff")
    (cache / "failure" / "dl19" / "studies" / f"{copy['id']}.json").write_text(json.dumps(copy))
    stored = view.stored_studies("dl19")
    assert len(stored) == 2
    sets = view.hard_sets_frame(view.studies_with(stored, "q1"), "q1")
    assert sets["configuration"].tolist() == list(planted_study["configurations"])  # no duplicate row
    assert set(sets.loc[0, "studies"].split(", ")) == {planted_study["id"], copy["id"]}


def test_a_query_hard_for_an_aware_results_own_judge_but_not_in_the_table_is_explained(planted_study):
    from pipeline.study.result import StudyResult

    study = StudyResult.from_dict(planted_study)  # its binary H2J holds q1 and q8 (the design), not q2
    result = {"sets": {"binary": {"hard": ["q1", "q2"]}, "graded": {"hard": []}}, "universe": list(TOPICS),
              "config": {"quantile": 0.25, "cap": 20}, "judge": {"label": "scripted:tiny"}}
    note = view.own_h2j_note(result, "q2", [study])
    assert note.startswith("Hard to judge (binary) for this result's own judge, scripted:tiny: the top 0.25")
    assert "over its 8 queries" in note and f"stored studies' judges ({', '.join(sorted(study.judges))})" in note
    assert view.own_h2j_note(result, "q1", [study]) is None  # the table agrees: q1 is in its binary H2J
    assert view.own_h2j_note(result, "q3", [study]) is None  # not hard for the result's judge either
    assert "no stored study holds this query" in view.own_h2j_note(result, "q2", [])


def test_the_data_folders_answers_are_shown_with_their_models_sizes(planted_study, tmp_path, monkeypatch):
    from tests.support.failure_fixture import write_data_folder

    folder = write_data_folder(tmp_path / "imported")
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(folder))
    at = open_query_page(dataset="dl19", qid="q6")
    assert not at.exception
    imported = next(d.value for d in at.dataframe if "size (models.tsv)" in d.value.columns).set_index("generator")
    assert imported.loc["designed-answers", "answer"] == OFF_TOPIC  # the designed answers' q6 (off-topic)
    assert imported.loc["other-answers", "answer"] == OFF_TOPIC
    assert imported.loc["designed-answers", "size (models.tsv)"] == "175B (a paper's figure)"
    assert imported.loc["other-answers", "size (models.tsv)"] == "unknown (not published)"
    frame, note = view.imported_answers_frame("dl20", "q6", folder)
    assert frame.empty and note.startswith("No answers file for DL20")
