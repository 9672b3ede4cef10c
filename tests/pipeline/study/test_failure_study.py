"""The failure study end to end on a designed collection (real BERTScore with the packaged MiniLM),
the CLI contract (h2j, h2g, overlap, run), and the shared DL19 judgments when ../shared is there."""
from __future__ import annotations

import json

import pytest

from pipeline import cli
from pipeline.study.store import load_study
from tests.support.failure_fixture import QIDS, run_designed_study, write_collection


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return run_designed_study(tmp_path_factory.mktemp("designed"))


def test_designed_sets_and_overlap(study):
    config = study["configurations"]["designed-run | designed-answers | designed-judge | graded"]
    assert config["sets"] == {"h2r": ["q7", "q8"], "h2g": ["q6", "q8"], "h2j": ["q1", "q8"]}
    a = config["analysis"]
    assert a["n_queries"] == 8 and a["all_three"] == {"count": 1, "share": 1 / 8, "qids": ["q8"]}
    assert {k: v["count"] for k, v in a["exclusive"].items()} == {"h2r": 1, "h2g": 1, "h2j": 1}
    assert a["regions"]["h2r&h2g&h2j"]["qids"] == ["q8"]
    gen = study["generators"]["designed-answers"]
    assert gen["bertscore"]["encoder"] == "minilm" and gen["bertscore"]["n_excluded"] == 0
    assert gen["per_query"]["q1"] > 0.95 > gen["per_query"]["q6"]  # the passage itself vs off-topic
    assert study["judges"]["designed-judge"]["binary"]["per_query"]["q8"] == 1.0
    assert len(study["stability"]) == 2 * 3  # two setups x three pairs
    assert load_study("designed")["configurations"].keys() == study["configurations"].keys()


def _cli_json(capsys, argv):
    assert cli.main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_cli_contract_on_any_collection(tmp_path, capsys, study):
    files = write_collection(tmp_path / "c")
    common = ["--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
              "--passages", str(files["passages.tsv"]), "--json"]
    h2j = _cli_json(capsys, ["h2j", *common, "--judge", f"j={files['judge.txt']}"])
    assert set(h2j) >= {"binary", "graded"} and h2j["graded"]["h2j"] == ["q1", "q8"]
    assert h2j["binary"]["per_query"]["q2"] == 0.0
    h2g = _cli_json(capsys, ["h2g", *common, "--encoder", "minilm", "--generator", f"g={files['answers.jsonl']}"])
    assert h2g["generators"]["g"]["h2g"] == ["q6", "q8"] and h2g["generators"]["g"]["encoder"] == "minilm"
    out = _cli_json(capsys, ["overlap", *common, "--encoder", "minilm", "--retriever", f"r={files['run.txt']}",
                             "--generator", f"g={files['answers.jsonl']}", "--judge", f"j={files['judge.txt']}",
                             "--setup", "binary"])
    assert (out["h2r"], out["h2g"], out["h2j"]) == (["q7", "q8"], ["q6", "q8"], ["q1", "q8"])
    assert out["n_queries"] == len(QIDS) and set(out["regions"]) >= {"h2r", "h2r&h2g&h2j"}
    assert out["pairwise"]["h2r&h2j"]["count"] == 1 and 0 < out["pairwise"]["h2r&h2j"]["p_value"] <= 1


def test_cli_errors_are_one_line(tmp_path, capsys):
    files = write_collection(tmp_path / "c")
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 0 r1 7\n")
    assert cli.main(["h2j", "--qrels", str(files["qrels.txt"]), "--judge", f"j={bad}"]) == 2  # bad input (core.cli)
    assert "bad.txt:1: grade 7 is outside 0-3" in capsys.readouterr().err
    assert cli.main(["h2g", "--qrels", str(files["qrels.txt"]), "--generator", "embedded"]) == 2
    assert "needs --topics" in capsys.readouterr().err  # an LLM step without query texts


def test_real_dl19_llama_judgments(shared_dir, capsys):
    out = _cli_json(capsys, ["h2j", "--dataset", "dl19", "--data", str(shared_dir / "data" / "trec_dl"),
                             "--judge", "llama-3.3-70b", "--json"])
    binary = out["binary"]
    assert binary["n_queries"] == 43 and binary["n_pairs_compared"] == 9260
    agreement = 1 - sum(binary["per_query"].values()) / 43  # macro: the data README says ~0.69 (micro)
    assert 0.6 < agreement < 0.78
    assert len(binary["h2j"]) >= 11 and len(out["graded"]["h2j"]) >= 11  # 43 queries, q = 0.25, ties included


def test_partial_reference_sets_are_excluded_and_counted_by_default(tmp_path, capsys):
    """q3 gets a second grade-2 passage without text: its BERTScore could only be a max over part of its
    references, so by default it is left out of H2G and counted; --partial-references include scores it."""
    from pipeline.generation.h2g import generation_values, reference_note
    from pipeline.study.config import load_collection
    from pipeline.generation.answers import import_answers

    files = write_collection(tmp_path / "c")
    with open(files["qrels.txt"], "a") as fh:
        fh.write("q3 0 missing3 2\n")
    data = load_collection("partial", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    assert data.reference_coverage()["q3"] == (1, 2) and data.reference_coverage()["q1"] == (1, 1)
    gen = import_answers("g", files["answers.jsonl"], data.topics)
    values, info = generation_values(data, gen, "minilm")
    assert "q3" not in values and len(values) == 7
    assert info["excluded_partial_references"] == ["q3"] and info["n_partial_references"] == 1
    assert info["partial_references"] == "exclude" and info["reference_coverage"]["q3"] == [1, 2]
    assert reference_note(info).startswith("1 of 8 answered queries have only some") and "excluded" in reference_note(info)
    values, info = generation_values(data, gen, "minilm", partial_references="include")
    assert "q3" in values and info["excluded_partial_references"] == [] and info["n_partial_references"] == 1
    common = ["--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
              "--passages", str(files["passages.tsv"]), "--encoder", "minilm", "--generator", f"g={files['answers.jsonl']}"]
    assert cli.main(["h2g", *common]) == 0
    text = capsys.readouterr().out
    assert "7 queries scored" in text and "1 of 8 answered queries have only some" in text
    assert "partial references: exclude" in text
    out = _cli_json(capsys, ["h2g", *common, "--partial-references", "include", "--json"])["generators"]["g"]
    assert out["partial_references"] == "include" and "q3" in out["per_query"]
    assert out["h2g_set"]["n_queries"] == 8 and out["h2g_set"]["n_target"] == 2


@pytest.mark.parametrize("dataset, partial, judged", [("dl19", 0, 43), ("dl20", 28, 54), ("dl21", 47, 53)])
def test_partial_reference_counts_on_the_shared_data(shared_dir, dataset, partial, judged):
    from pipeline.data.datasets import load_dataset
    from pipeline.generation.h2g import partial_reference_queries

    data = load_dataset(dataset, shared_dir / "data" / "trec_dl")
    assert len(data.queries()) == judged and len(partial_reference_queries(data)) == partial


def test_overlap_text_output_says_what_produced_every_number(tmp_path, capsys):
    files = write_collection(tmp_path / "c")
    assert cli.main(["overlap", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
                     "--passages", str(files["passages.tsv"]), "--encoder", "minilm", "--retriever",
                     f"r={files['run.txt']}", "--generator", f"g={files['answers.jsonl']}",
                     "--judge", f"j={files['judge.txt']}", "--setup", "binary"]) == 0
    lines = capsys.readouterr().out.splitlines()
    text = "\n".join(lines)
    assert f"retriever r: imported run ({files['run.txt']})" in text
    assert "generator g: imported:g; BERTScore all-MiniLM-L6-v2" in text and "(max over grade-2/3 passages)" in text
    assert "judge j (binary): imported:j; 16 pairs compared, cap none per query" in text
    assert "h2j 2 of 8 queries (25%); threshold 0.25, target 2, tie block of 2 at 1:" in text
    assert "q = 0.25" in text and "rule: target floor((n-1)q)+1" in text
    assert any(line.startswith("  h2r&h2j: 1 (expected 0.50, p = ") for line in lines)
    assert "p: one-sided hypergeometric P(X >= overlap), X ~ Hypergeom(N = 8, |A|, |B|)" in text


def test_a_computed_partial_corpus_run_is_named_name_at_computed(tmp_path):
    """A run file that compute_run wrote (its JSON sidecar says so) is a partial-corpus run: whatever
    NAME the user gives it, reports name it NAME@computed (the retrievers module's contract)."""
    from pipeline.study.config import load_collection
    from pipeline.study.tasks.h2r import retrieval_values

    files = write_collection(tmp_path / "c")
    computed = tmp_path / "bm25-0123.txt"
    computed.write_text(files["run.txt"].read_text())
    computed.with_suffix(".json").write_text(json.dumps({
        "dataset": "partial", "retriever": "bm25", "n_passages": 16,
        "provenance": "computed here over a partial corpus (16 passages): BM25", "settings": {"depth": 3}}))
    data = load_collection("partial", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    name, values, info = retrieval_values(data, f"mine={computed}")
    assert name == "mine@computed" and info["kind"] == "computed" and info["name"] == "mine@computed"
    assert retrieval_values(data, f"bm25@computed={computed}")[0] == "bm25@computed"
    name, _, info = retrieval_values(data, f"r={files['run.txt']}")  # no sidecar: an imported run keeps its name
    assert name == "r" and info["kind"] == "imported"


def test_aggregate_mean_is_the_mean_of_the_pair_scores(tmp_path, capsys):
    """--aggregate mean averages a query's pair F1s; max takes the largest. The pair scores are put in
    the BERTScore pair cache by hand (what the encoder would have stored), so the answers are exact."""
    from pipeline.generation.bertscore import PairCache, resolve_encoder

    folder = tmp_path / "agg"
    folder.mkdir()
    f1 = {"q1": (0.9, 0.1), "q2": (0.6, 0.6), "q3": (0.7, 0.5), "q4": (0.8, 0.3)}
    (folder / "topics.tsv").write_text("".join(f"{q}\tquery {q}\n" for q in f1))
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {q}a 3\n{q} 0 {q}b 2\n" for q in f1))
    (folder / "passages.tsv").write_text("".join(f"{q}a\tpassage {q} a\n{q}b\tpassage {q} b\n" for q in f1))
    (folder / "answers.jsonl").write_text("".join(json.dumps({"qid": q, "text": f"answer {q}"}) + "\n" for q in f1))
    encoder = resolve_encoder("minilm")
    PairCache().put_many({PairCache.key(encoder, f"answer {q}", f"passage {q} {side}"): value
                          for q, pair in f1.items() for side, value in zip("ab", pair)})
    common = ["h2g", "--qrels", str(folder / "qrels.txt"), "--topics", str(folder / "topics.tsv"), "--passages",
              str(folder / "passages.tsv"), "--encoder", "minilm", "--generator", f"g={folder / 'answers.jsonl'}",
              "--json"]
    mean = _cli_json(capsys, [*common, "--aggregate", "mean"])["generators"]["g"]
    assert mean["aggregate"] == "mean"
    assert mean["per_query"] == pytest.approx({"q1": 0.5, "q2": 0.6, "q3": 0.6, "q4": 0.55})
    assert mean["h2g"] == ["q1"]  # 4 queries: target 1, the lowest mean
    best = _cli_json(capsys, [*common, "--aggregate", "max"])["generators"]["g"]
    assert best["per_query"] == pytest.approx({"q1": 0.9, "q2": 0.6, "q3": 0.7, "q4": 0.8}) and best["h2g"] == ["q2"]


def test_imported_judgments_cover_every_pair_whatever_the_llm_cap(tmp_path, study):
    from pipeline.study.config import load_collection
    from pipeline.study.tasks.h2j import judgments_for
    from pipeline.judging.judgments import DEFAULT_CAP

    files = write_collection(tmp_path / "c")
    data = load_collection("designed", qrels=files["qrels.txt"], topics=files["topics.tsv"])
    judgments = judgments_for(data, f"j={files['judge.txt']}", "graded", cap=1)
    assert judgments.cap is None and sum(map(len, judgments.labels.values())) == 16  # 2 pairs x 8 queries
    # the study records each component's set with its threshold, target and tie block
    retriever = study["retrievers"]["designed-run"]
    assert retriever["h2r_set"]["n_hard"] == 2 and retriever["h2r_set"]["n_target"] == 2
    assert study["judges"]["designed-judge"]["binary"]["h2j_set"]["tie_block"] == 2
    assert study["cap"] == DEFAULT_CAP and study["partial_references"] == "exclude"
