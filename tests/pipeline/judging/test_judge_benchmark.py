"""The judge-agreement benchmark's sample and figures, on hand-made labels with hand-computed answers,
and the line the Failure overlap page shows for a judge."""
from __future__ import annotations

import json

import pytest

from pipeline.judging.benchmark import agreement, benchmark_line, stratified_sample


def test_sample_is_stratified_nested_and_skips_pairs_without_text():
    qrels = {f"q{i}": {f"p{i}-{g}-{k}": g for g in range(4) for k in range(5)} for i in range(3)}
    has_text = lambda pid: not pid.endswith("-4")  # noqa: E731  (k = 4 has no text)
    small, big = stratified_sample(qrels, has_text, 3, 0), stratified_sample(qrels, has_text, 6, 0)
    assert [qrels[q][p] for q, p in small] == [0, 1, 2, 3] * 3
    # round-robin across grades: a larger sample starts with the smaller one, and a run stopped early or a
    # shard [k::3] still holds every grade
    assert big[:12] == small and len(big) == 24
    assert all(sorted(qrels[q][p] for q, p in big[k::3]) == [0, 0, 1, 1, 2, 2, 3, 3] for k in range(3))
    assert not any(p.endswith("-4") for _, p in big)
    assert stratified_sample(qrels, has_text, 3, 1) != small


def test_agreement_figures_by_hand():
    pairs = [("q", f"p{i}") for i in range(6)]
    nist = dict(zip(pairs, [0, 1, 2, 3, 3, 0]))
    labels = dict(zip(pairs[:5], [0, 2, 2, 1, 3]))  # p5 unparseable
    fig = agreement(pairs, nist, labels)
    assert fig["parse_rate"] == pytest.approx(5 / 6)
    # binary (>= 2): nist F F T T T, judge F T T F T -> agree 3/5; p_o 0.6, p_e 0.4*0.4 + 0.6*0.6 = 0.52
    assert fig["binary_agreement"] == pytest.approx(0.6)
    assert fig["kappa"] == pytest.approx((0.6 - 0.52) / (1 - 0.52))
    assert fig["graded_exact"] == pytest.approx(3 / 5) and fig["graded_within_1"] == pytest.approx(4 / 5)
    expected = dict(zip(pairs, [0.2, 1.6, 2.0, 1.4, 2.9, 0.1]))
    lp = agreement(pairs, nist, labels, expected=expected)["logprob"]
    # E >= 1.5: F T T F T F against nist F F T T T F -> 4/6; rounded 0 2 2 1 3 0 -> exact 4/6
    assert lp["binary_agreement"] == pytest.approx(4 / 6) and lp["graded_exact"] == pytest.approx(4 / 6)
    # AUC: relevant {2.0, 1.4, 2.9} vs not {0.2, 1.6, 0.1}: pairs won 3 + 2 + 3 = 8 of 9
    assert lp["auc_binary"] == pytest.approx(8 / 9)


def test_a_constant_judge_has_kappa_zero():
    pairs = [("q", f"p{i}") for i in range(4)]
    fig = agreement(pairs, dict(zip(pairs, [0, 1, 2, 3])), dict(zip(pairs, [0, 0, 0, 0])))
    assert fig["kappa"] == 0.0 and fig["binary_agreement"] == 0.5


def write_card(folder, key, model, sha256, figures, *, n_sample=200, sample=None, references=None):
    """A minimal model card (pipeline.llm.model_cards) with the given figures."""
    card = {"card_version": 1, "model": {"key": key, "name": model, "sha256": sha256}, "dataset": "dl19",
            "sample": sample or {"n_pairs": n_sample, "per_grade": n_sample // 4, "seed": 0},
            "measured": {"date": "2026-12-03T08:00:00Z", "commit": "abcdef0123456789", "dirty": False},
            "pairs": [{"qid": "q", "pid": f"p{i}", "label": 2} for i in range(figures.get("n_pairs", n_sample))],
            "figures": figures, "references": references or {}}
    (folder / f"{key}.json").write_text(json.dumps(card))
    return card


def test_benchmark_line_reads_the_model_cards(tmp_path):
    assert benchmark_line({"backend": "embedded", "model": "M", "digest": "d1"}, tmp_path) is None  # no card
    fig = {"parse_rate": 1.0, "binary_agreement": 0.7, "kappa": 0.35, "graded_exact": 0.3, "graded_within_1": 0.8}
    write_card(tmp_path, "m", "M", "d1", fig, references={"llama-3.3-70b": {**fig, "kappa": 0.4}})
    line = benchmark_line({"backend": "embedded", "model": "M", "digest": "d1"}, tmp_path)
    assert line.startswith("Judge benchmark (200 DL19 pairs, 50 per NIST grade; model card m.json, measured "
                           "2026-12-03T08:00:00Z at commit abcdef0123): kappa 0.35")
    assert "kappa 0.40" in benchmark_line({"backend": "imported", "model": "llama-3.3-70b"}, tmp_path)
    assert benchmark_line({"backend": "embedded", "model": "M", "digest": "another file"}, tmp_path) is None
    assert benchmark_line({"backend": "embedded", "model": "other", "digest": "d2"}, tmp_path) is None
    assert benchmark_line({"backend": "embedded", "model": "M"}, tmp_path).endswith("within one grade 80%, parse "
                                                                                   "rate 100%")  # no digest: by name


def test_benchmark_line_says_how_many_pairs_the_logprob_judge_and_an_undefined_kappa(tmp_path):
    """A judge scored on part of the sample says on how many, the log-probability judge's AUC comes with the
    label figures, and an undefined kappa reads "undefined" (never 0.00)."""
    fig = {"n_pairs": 40, "parse_rate": 1.0, "binary_agreement": 0.6, "kappa": None, "graded_exact": 0.3,
           "graded_within_1": 0.8, "logprob": {"auc_binary": 0.62, "kappa": 0.05}}
    write_card(tmp_path, "m", "M", "d1", fig, n_sample=172)
    line = benchmark_line({"backend": "embedded", "model": "M", "digest": "d1"}, tmp_path)
    assert "172 DL19 pairs, 43 per NIST grade; scored on 40 of them;" in line
    assert "kappa undefined (binary at grade 2, agreement 60%)" in line
    assert line.endswith("AUC 0.62 (kappa 0.05 at 1.5)")


def test_overlap_provenance_names_the_offline_model_and_the_judge_benchmark(tmp_path, monkeypatch):
    from pipeline.views.failure_overlap import provenance_lines
    from pipeline.study.result import (Components, ConfigurationResult, GeneratorResult, JudgeResult, RetrieverResult,
                                       StudyResult)

    from pipeline.llm import model_cards

    monkeypatch.setattr(model_cards, "CARD_DIR", tmp_path)  # the page reads the cards from here
    fig = {"parse_rate": 1.0, "binary_agreement": 0.6, "kappa": 0.2, "graded_exact": 0.3, "graded_within_1": 0.7}
    write_card(tmp_path, "q", "Q-1.5B", "d15", fig, n_sample=20)
    offline = {"backend": "embedded", "model": "Q-1.5B", "label": "embedded:Q-1.5B", "digest": "d15",
               "note": "Q-1.5B: 1.5B parameters, Q4_K_M GGUF; not one of the study's models"}
    bertscore = {"encoder": "minilm", "description": "d", "aggregate": "max", "n_excluded": 0, "n_answered": 43,
                 "n_partial_references": 0, "partial_references": "exclude"}
    study = StudyResult(
        id="x", configuration={}, time="", finished="", dataset="dl19", source="", coverage={}, quantile=0.25,
        conventions={}, cap=2, partial_references="exclude", data_folder=None, queries={}, relevant_passages={},
        relevant_grades={}, stability=[],
        configurations={"c": ConfigurationResult(Components("bm25", "g", "j", "graded"), {}, None, {})},
        retrievers={"bm25": RetrieverResult({"provenance": "imported run"}, {}, [], None)},
        generators={"g": GeneratorResult(offline, None, {}, None, {}, bertscore, {}, {}, [], None)},
        judges={"j": {"graded": JudgeResult({"provenance": offline, "n_pairs_compared": 86, "cap": 2,
                                             "n_unparseable": 0}, {}, {}, {}, [], None)}})
    lines = provenance_lines(study, "c")
    assert lines[3].startswith("Judge benchmark (20 DL19 pairs, 5 per NIST grade; model card q.json") and \
        "kappa 0.20" in lines[3]
    assert lines[4] == offline["note"] and len(lines) == 5  # the note once, though it made both
