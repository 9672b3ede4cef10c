"""Model cards (pipeline.llm.model_cards): every measured judge figure comes from a card kept in the
repository, never from code. Each card's figures are recomputed from its per-pair labels and the NIST
qrels; the provenance note of an embedded model reads its card, and says plainly when there is none."""
from __future__ import annotations

import json
import re

import pytest

from core import paths
from pipeline.judging.benchmark import agreement, card_figures, card_pairs, model_card, stratified_sample
from pipeline.llm import model_cards
from pipeline.llm.backends.llamacpp import describe
from pipeline.llm.gguf_models import MODELS
from tests.support.float_json import FLOAT64_STATISTIC_TOL, json_differences
from tests.support.paths import ROOT

CARDS = sorted(model_cards.CARD_DIR.glob("*.json"))
QRELS = {"dl19": "trec_dl/qrels.dl19-passage.txt"}
PASSAGES = {"dl19": "trec_dl/passages.msmarco-v1.dl19-dl20.tsv"}


def nist_qrels(dataset: str):
    from pipeline.data.trec_io import read_qrels

    shared = paths.shared_data_dir()
    if shared is None or not (shared / QRELS[dataset]).is_file():
        pytest.skip("needs the NIST qrels in ../shared/data (the data folder beside the checkout)")
    return read_qrels(shared / QRELS[dataset])


def test_the_repository_has_a_card_for_the_default_model():
    assert model_cards.card_path("qwen2.5-coder-1.5b") in CARDS


@pytest.mark.parametrize("path", CARDS, ids=[p.stem for p in CARDS])
def test_a_cards_figures_are_what_its_labels_give_against_the_nist_qrels(path):
    card = json.loads(path.read_text(encoding="utf-8"))
    qrels = nist_qrels(card["dataset"])
    assert card["card_version"] == model_cards.CARD_VERSION and card["model"]["key"] == path.stem
    assert card["model"]["sha256"] == MODELS[path.stem].sha256  # measured on the file the pipeline runs
    sample = [tuple(p) for p in card["sample"]["pairs"]]
    assert len(sample) == card["sample"]["n_pairs"] == len(set(sample))
    # the sample's definition: per_grade pairs of each NIST grade, round-robin across the grades
    per_grade = card["sample"]["per_grade"]
    assert [qrels[q][p] for q, p in sample] == [0, 1, 2, 3] * per_grade
    scored = [(r["qid"], r["pid"]) for r in card["pairs"]]
    assert scored and set(scored) <= set(sample)
    nist = {p: qrels[p[0]][p[1]] for p in scored}
    recomputed = json.loads(json.dumps(card_figures(card, nist)))
    # float64 statistics recomputed here from a card written on another machine: equal to the last bits
    # that summation order may move (tests.support.float_json), every count and label exactly
    assert json_differences(recomputed["figures"], card["figures"], tol=FLOAT64_STATISTIC_TOL) == []
    assert json_differences(recomputed["references"], card["references"], tol=FLOAT64_STATISTIC_TOL) == []
    assert card["figures"]["n_pairs"] == len(scored)
    for key in ("date", "commit"):
        assert card["measured"][key]
    assert card["judge"]["template"] and card["judge"]["options"]["json_schema"]


def test_the_recomputation_sees_a_changed_label():
    """The check above can fail: a card whose stored figures do not follow from its labels is caught."""
    pairs = [("q", f"p{i}") for i in range(8)]
    nist = dict(zip(pairs, [0, 1, 2, 3] * 2))
    labels = dict(zip(pairs, [0, 2, 2, 3, 1, 1, 3, 2]))
    refs = {"llama-3.3-70b": dict(zip(pairs, [0, 1, 3, 3, 0, 0, 2, 2]))}
    rows = card_pairs(pairs, labels, {}, refs)
    card = model_card({"key": "k"}, dataset="dl19", sample={"n_pairs": 8, "per_grade": 2}, sample_pairs=pairs,
                      rows=rows, nist=nist, judge={}, measured={})
    assert card["figures"] == json.loads(json.dumps(agreement(pairs, nist, labels)))
    assert card["references"]["llama-3.3-70b"]["kappa"] == pytest.approx(1.0)
    card["pairs"][1]["label"] = 0
    assert card_figures(card, nist)["figures"] != card["figures"]
    assert json_differences(card_figures(card, nist)["figures"], card["figures"], tol=FLOAT64_STATISTIC_TOL)


def test_the_provenance_note_reads_the_card_and_says_when_there_is_none(tmp_path, monkeypatch):
    model = MODELS["smollm2"]
    monkeypatch.setattr(model_cards, "CARD_DIR", tmp_path)
    _, note = describe(model)
    assert "As a relevance judge: not measured on the benchmark." in note
    assert not re.search(r"kappa|AUC", note)
    pairs = [("q", f"p{i}") for i in range(4)]
    nist = dict(zip(pairs, [0, 1, 2, 3]))
    card = model_card({"key": model.key, "name": model.name, "sha256": model.sha256}, dataset="dl19",
                      sample={"n_pairs": 8, "per_grade": 2, "seed": 0}, sample_pairs=pairs * 2,
                      rows=card_pairs(pairs, dict(zip(pairs, [0, 0, 3, 3])), {}, {}), nist=nist, judge={},
                      measured={"date": "2026-12-03T08:40:00Z", "commit": "0123456789abcdef", "dirty": False})
    (tmp_path / f"{model.key}.json").write_text(json.dumps(card))
    _, note = describe(model)
    assert ("As a relevance judge: on the judge benchmark (8 DL19 pairs, 2 per NIST grade; scored on 4 of them; "
            "model card smollm2.json, measured 2026-12-03T08:40:00Z at commit 0123456789): kappa 1.00") in note
    # a card measured on another file is not this model's measurement
    (tmp_path / f"{model.key}.json").write_text(json.dumps({**card, "model": {**card["model"], "sha256": "ab" * 32}}))
    assert "not measured on the benchmark (its model card was measured on another file, sha256 abababababab)" \
        in describe(model)[1]


def test_a_broken_card_is_an_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(model_cards, "CARD_DIR", tmp_path)
    (tmp_path / "smollm2.json").write_text("{not json")
    with pytest.raises(ValueError, match="smollm2.json: not a valid model card"):
        describe(MODELS["smollm2"])


# a judge figure written as a literal: "kappa 0.14", "κ −0.02", "AUC 0.66"
FIGURE_LITERAL = re.compile(r"(?i)(kappa|κ|auc)[^\n\"']{0,12}?[-−]?\b[01]\.\d\d")


def test_no_measured_judge_figure_is_typed_into_code():
    offenders = [f"{path.relative_to(ROOT)}:{n}" for folder in ("pipeline", "pages", "core", "ltr")
                 for path in sorted((ROOT / folder).rglob("*.py"))
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if FIGURE_LITERAL.search(line)]
    assert not offenders, f"measured figures belong in a model card, not in code: {offenders}"
    assert FIGURE_LITERAL.search('"kappa 0.14 against NIST, binary agreement 0.57, within one grade 0.79, expected-grade "')


@pytest.mark.parametrize("path", CARDS, ids=[p.stem for p in CARDS])
def test_a_cards_sample_is_the_benchmarks_stratified_sample(path):
    """Redrawn from the NIST qrels and the passages with text, the sample is the card's, in its order."""
    from pipeline.data.trec_io import read_passages

    card = json.loads(path.read_text(encoding="utf-8"))
    qrels = nist_qrels(card["dataset"])
    passages = read_passages(paths.shared_data_dir() / PASSAGES[card["dataset"]])
    redrawn = stratified_sample(qrels, passages.__contains__, card["sample"]["per_grade"], card["sample"]["seed"])
    assert redrawn == [tuple(p) for p in card["sample"]["pairs"]]
