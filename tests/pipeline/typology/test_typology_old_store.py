"""A typology store written by the code before the versioned migrations (main at 20028e0,
``tests/fixtures/old_stores/``) opens with the current code: every row reads back as before, its run
reads as it did, and new runs are stored."""
from __future__ import annotations

from pipeline.typology.categories import Category
from pipeline.typology.induction import HardQuery
from pipeline.typology.store import TypologyStore
from tests.support.old_stores import copy_old_store, rows_as_before, versions


def test_an_old_typology_store_reads_back_identically_and_takes_new_runs(tmp_path):
    path = copy_old_store("typology.sqlite", tmp_path)
    with TypologyStore(path) as store:
        rows_as_before(path, "typology.sqlite")
        run = store.get_run("dl19-h2r-abc")
        assert (run["status"], run["stop_reason"], run["categories"]) == (
            "done", "converged", [Category("Ambiguity", "vague"), Category("Numbers", "a figure")])
        queries = {q["qid"]: q for q in store.queries("dl19-h2r-abc")}
        assert queries["q1"]["assigned"] == [{"category": "Numbers", "justification": "a price"}]
        assert queries["q2"]["unknown_categories"] == ["Lack of context"] and queries["q2"]["reason_failure"]
        assert [r.added for r in store.rounds("dl19-h2r-abc")] == [["Numbers"]]
        store.start_run("dl19-h2g-new", dataset="dl19", task="h2g", source="llm", typology_label="qwen",
                        hard_set={}, config={}, provenance={}, queries=[HardQuery("q9", "query nine", "ctx")])
        assert [r["run_id"] for r in store.list_runs(dataset="dl19", task="h2g")] == ["dl19-h2g-new"]
    assert [(s, v) for s, v, _ in versions(path)] == [("typology", 2)]
