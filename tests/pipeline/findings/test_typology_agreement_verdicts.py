"""Issues 33 and 40: ``typology_agreement`` graded by its evidence, decided by the inference core. A share read from 12 assigned reasons "held"
(no minimum, no interval); a typology assigned by a model of unknown size counted; a degenerate run
(every category for every query) read like any other. Now: 95% Wilson intervals against the paper's
figure less the claims file's margin, a minimum n, the model gate and the degenerate flag, each
verdict with its n, interval and models in ``Part.evidence`` and the rule beside the finding. Issue 40 item 8:
the headline shows per figure its n, interval and verdict (it printed a dict of n's, no interval, no reason)."""
from __future__ import annotations

import pytest

from core.findings import FAILS, HOLDS, INCONCLUSIVE
from pipeline.findings.agreement import typology_agreement
from pipeline.findings.finding import paper_claims
from pipeline.prompting.pairwise import wilson_interval
from pipeline.typology.categories import Category
from tests.pipeline.stored_figures import CATEGORIES, annotation_rows

MODEL = "ollama:qwen3:8b [0123456789ab]"
SIZED = {"backend": "ollama", "model": "qwen3:8b", "digest": "0123456789abcdef", "parameters_b": 8.0,
         "size_source": "ollama /api/show"}


def _runs(**provenance):
    return {f"run-{MODEL}": {"provenance": {**SIZED, **provenance}, "degenerate": "", "n_unparseable": 0}}


def _agreement(rows, runs=None):
    found = typology_agreement(rows, "store.sqlite", _runs() if runs is None else runs)
    (part,) = found.parts
    return found, part


def test_the_rule_is_data_beside_the_claim():
    claim = paper_claims()["typology_agreement"]
    rule = claim["rule"]
    assert {"type", "statistic", "side", "level", "min_n", "counts", "threshold", "margin_below_paper", "combine",
            "family", "reading"} <= set(rule)
    for name, figure in claim["figures"].items():  # the thresholds are the paper's figures less the margin
        assert rule["threshold"][name] == pytest.approx(figure["paper"] - rule["margin_below_paper"])
    found, _ = _agreement(annotation_rows(MODEL, 100, 95))
    assert found.rule == rule


def test_a_share_of_few_reasons_is_inconclusive_not_holds():
    found, part = _agreement(annotation_rows(MODEL, 12, 12))  # 12 of 12 assigned reasons judged correct
    assert found.verdict == INCONCLUSIVE and "precision: n = 12 < minimum 30 (assigned reasons)" in part.reason
    assert part.evidence["n"] == {"accuracy": 36, "precision": 12}
    assert part.headline.startswith("inconclusive (precision: n = 12 < minimum 30 (assigned reasons)) · "
                                    "n = accuracy 36, precision 12 · ")


def test_verdicts_follow_the_interval_against_the_threshold():
    found, part = _agreement(annotation_rows(MODEL, 100, 95))
    assert found.verdict == HOLDS
    low, high = part.evidence["components"]["precision"]["interval"]  # one-sided 95% bounds: the 90% interval
    assert (low, high) == pytest.approx(wilson_interval(95, 100, 0.90), abs=1e-9) and low >= 0.70
    assert part.evidence["models"] == ["assigner: ollama:qwen3:8b [0123456789ab] (8B (ollama /api/show))"]
    assert part.measured["precision_interval"] == [low, high]
    # the headline: per figure its n, interval, threshold and verdict
    assert part.headline.startswith("holds · n = accuracy 300, precision 100 · accuracy 295 of 300 [")
    assert "vs > 76.0%: holds; precision 95 of 100 [" in part.headline
    assert "] vs > 70.0%: holds (Wilson one-sided 95% bounds) · models: " in part.headline
    found, part = _agreement(annotation_rows(MODEL, 100, 50))  # precision 0.50: [0.42, 0.58] wholly below 0.70
    assert found.verdict == FAILS and "precision 50 of 100 [41.9%, 58.1%] vs > 70.0%: does not hold" in part.reason
    found, part = _agreement(annotation_rows(MODEL, 40, 29))  # 0.725: the interval straddles 0.70
    assert found.verdict == INCONCLUSIVE and "undecided for precision" in part.reason
    assert "would decide" in part.headline


@pytest.mark.parametrize("runs, words", [
    (_runs(parameters_b=0.494), "sub-1B model (0.49B (ollama /api/show))"),
    (_runs(parameters_b=None, size_source=""), "unknown size"),
    ({}, "not in the typology store"),
])
def test_a_sub_1b_or_unknown_size_assigner_is_inconclusive(runs, words):
    found, part = _agreement(annotation_rows(MODEL, 100, 95), runs)  # figures that hold on their own
    assert found.verdict == INCONCLUSIVE and words in part.reason


def _every_category_assigned(n):
    return [{"annotator": "ann", "dataset": "dl19", "task": "h2r", "qid": f"q{i}", "category": c, "llm_assigned": 1,
             "human_applicable": 1, "run_id": f"run-{MODEL}", "model": MODEL, "llm_answer": "readable"}
            for i in range(n) for c in CATEGORIES]


def test_a_degenerate_assignment_gives_no_verdict():
    found, part = _agreement(_every_category_assigned(40))  # precision 1.0 over 120 reasons: it would hold
    assert found.verdict == INCONCLUSIVE and "degenerate assignment: every one of the 3 categories" in part.reason
    runs = _runs()
    runs[f"run-{MODEL}"]["degenerate"] = "degenerate assignment: no category was assigned to any of the 9 readable queries"
    found, part = _agreement(annotation_rows(MODEL, 100, 95), runs)  # the whole run, beyond the annotated rows
    assert found.verdict == INCONCLUSIVE and "no category was assigned" in part.reason


def test_unreadable_assignments_are_excluded_and_counted():
    unreadable = [{**r, "qid": f"u{r['qid']}", "llm_answer": "unreadable", "llm_assigned": 0, "human_applicable": 0}
                  for r in annotation_rows(MODEL, 5, 0)]
    found, part = _agreement(annotation_rows(MODEL, 100, 95) + unreadable)
    assert part.measured["n_queries"] == 100 and found.verdict == HOLDS
    assert part.evidence["excluded"] == {"unreadable": 5} and "excluded: 5 unreadable queries" in part.reason


def test_degenerate_is_judged_per_run_not_across_the_models_tasks():
    # one model's two runs (two tasks, two typologies): each assigns some categories, neither is degenerate
    h2r = annotation_rows(MODEL, 50, 48)
    h2j = [{**r, "task": "h2j", "run_id": "run-h2j", "category": f"j-{r['category']}"} for r in annotation_rows(MODEL, 50, 48)]
    runs = {**_runs(), "run-h2j": _runs()[f"run-{MODEL}"]}
    found = typology_agreement(h2r + h2j, "store.sqlite", runs)
    assert found.verdict == HOLDS and found.parts[0].evidence["degenerate"] == []
    everything_h2j = [{**r, "task": "h2j", "run_id": "run-h2j"} for r in _every_category_assigned(10)]
    found = typology_agreement(h2r + everything_h2j, "store.sqlite", runs)
    assert found.verdict == INCONCLUSIVE and "10 readable queries" in found.reason


@pytest.mark.parametrize("size, words", [(None, "a model of unknown size"), (0.5, "sub-1B model (0.5B (stated"),
                                         (8.0, "")])
def test_the_gate_reads_the_typology_runs_stored_provenance(tmp_path, monkeypatch, size, words):
    """End to end: a typology run stored with its model's size, sampled, annotated; the finding reads the
    run's provenance from the typology store (a size the backend did not report is unknown)."""
    from pipeline.annotation.store import AnnotationStore
    from pipeline.annotation.typology_items import sample_items
    from pipeline.findings.agreement import annotation_rows
    from pipeline.llm import CachedClient, Provenance, ResponseCache, ScriptedBackend
    from pipeline.typology.induction import HardQuery
    from pipeline.typology.runner import run_typology
    from pipeline.typology.store import TypologyStore
    from tests.pages.support import typology_reply

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    provenance = Provenance("scripted", "m", parameters_b=size, size_source="stated by the user" if size else "")
    client = CachedClient(ScriptedBackend(typology_reply, provenance=provenance),
                          ResponseCache(tmp_path / "llm-cache.sqlite"), retries=0)
    queries = [HardQuery("q1", "query one", ""), HardQuery("q2", "query two", "")]
    with TypologyStore() as store:
        run_typology(client, store, dataset="dl19", task="h2r", queries=queries, hard_set={}, imported=(
            "test", [Category(c, c) for c in ("Ambiguity", "Numbers", "Jargon")]))
        items = sample_items(store)
    with AnnotationStore() as annotations:
        annotations.create_sample(items, size=2)
        for it in annotations.queue("ann"):
            for name in it.assigned_names:
                annotations.set_answer("ann", it, name, True)
    found = typology_agreement(*annotation_rows())
    (part,) = found.parts
    assert part.evidence["models"][0].startswith("assigner: scripted:m")
    if words:
        assert found.verdict == INCONCLUSIVE and words in part.reason
    else:  # a sized model: the figures decide (here too few for the minimum)
        assert found.verdict == INCONCLUSIVE and "< minimum 30" in part.reason
        assert part.evidence["models"] == ["assigner: scripted:m (8B (stated by the user))"]
