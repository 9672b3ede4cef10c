"""Issue 26, "each step computes only what its result depends on": the answer step of H2G generated an
LLM answer for every judged query, even for those H2G can never score (no grade-2/3 passage with text;
with ``--partial-references exclude``, the default, only some of them): on the shared data DL20 28 of
54 answers and DL21 48 of 53 were made for nothing. The answer step is now asked only for the queries
H2G can score under the chosen options, and the result says which were not asked and why.

The designed collection of ``tests.support.failure_fixture`` with q3's reference set made partial (a second
grade-2 passage without text) and q5's without any text; the generator is a real HTTP backend against
the loopback Ollama-speaking server, whose request log says which queries were asked."""
from __future__ import annotations

import json

import pytest

from pipeline import cli
from tests.support.failure_fixture import TOPICS, write_collection

MODEL = "llama3.2:3b"


def _planted(folder):
    """q3: one of its two grade-2/3 passages has text (partial); q5: none has (no reference)."""
    files = write_collection(folder)
    with open(files["qrels.txt"], "a") as fh:
        fh.write("q3 0 missing3 2\n")
    passages = files["passages.tsv"].read_text().splitlines(keepends=True)
    files["passages.tsv"].write_text("".join(line for line in passages if not line.startswith("r5\t")))
    return files


def _asked_queries(server) -> set[str]:
    """The qids whose question reached the generator."""
    asked = set()
    for path, body in server.requests:
        if path in ("/api/chat", "/v1/chat/completions") and body["model"] == MODEL:
            prompt = body["messages"][-1]["content"]
            asked |= {q for q, text in TOPICS.items() if f"Question: {text}\n" in prompt}
    return asked


def _h2g(capsys, files, server, *extra) -> dict:
    code = cli.main(["h2g", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
                     "--passages", str(files["passages.tsv"]), "--encoder", "minilm",
                     "--generator", f"ollama:{MODEL}@{server.url}", "--json", *extra])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)["generators"][f"ollama:{MODEL}"]


def test_h2g_asks_the_generator_only_for_the_queries_it_can_score(tmp_path, capsys, server, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    files = _planted(tmp_path / "c")
    g = _h2g(capsys, files, server)
    assert _asked_queries(server) == {"q1", "q2", "q4", "q6", "q7", "q8"}  # not q3 (partial), not q5 (no text)
    assert sorted(g["per_query"]) == ["q1", "q2", "q4", "q6", "q7", "q8"]
    assert g["not_generated"] == {"q3": "partial references", "q5": "no reference text"}
    assert (g["n_not_generated"], g["n_not_generated_no_reference"], g["n_not_generated_partial_references"]) == (
        2, 1, 1)
    assert g["n_answered"] == 6 and g["n_excluded"] == 0

    g = _h2g(capsys, files, server, "--partial-references", "include")
    assert _asked_queries(server) == {"q1", "q2", "q3", "q4", "q6", "q7", "q8"}  # q3 now too; q5 never
    assert "q3" in g["per_query"] and g["n_partial_references"] == 1
    assert g["not_generated"] == {"q5": "no reference text"} and g["n_not_generated_partial_references"] == 0


def test_the_text_output_says_which_queries_were_not_answered(tmp_path, capsys, server, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    files = _planted(tmp_path / "c")
    assert cli.main(["h2g", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
                     "--passages", str(files["passages.tsv"]), "--encoder", "minilm",
                     "--generator", f"ollama:{MODEL}@{server.url}"]) == 0
    text = capsys.readouterr().out
    assert "2 judged queries not answered (H2G cannot score them): 1 without reference text, 1 with partial " \
           "references" in text


def test_a_study_generates_only_what_h2g_scores_and_says_so(tmp_path, server, monkeypatch):
    from pipeline.study.config import load_collection
    from pipeline.study.run import run_study

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    files = _planted(tmp_path / "c")
    data = load_collection("planted", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    study = run_study(data, retrievers=[f"designed={files['run.txt']}"], generators=[f"ollama:{MODEL}@{server.url}"],
                      judges=[f"judge={files['judge.txt']}"], setups=["binary"], encoder="minilm", progress=False,
                      log=lambda m: None)
    assert _asked_queries(server) == {"q1", "q2", "q4", "q6", "q7", "q8"}
    g = study.generators[f"ollama:{MODEL}"]
    assert set(g.answers) == {"q1", "q2", "q4", "q6", "q7", "q8"} and g.bertscore["n_not_generated"] == 2


def test_imported_answers_are_scored_as_before(tmp_path):
    """An answers file is read whole: nothing is generated, and no query is counted as not generated."""
    from pipeline.generation.answers import import_answers
    from pipeline.generation.h2g import generation_values
    from pipeline.study.config import load_collection

    files = _planted(tmp_path / "c")
    data = load_collection("planted", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    values, info = generation_values(data, import_answers("g", files["answers.jsonl"], data.topics), "minilm")
    assert sorted(values) == ["q1", "q2", "q4", "q6", "q7", "q8"]
    assert info["n_answered"] == 8 and info["excluded_no_relevant_text"] == ["q5"]
    assert info["excluded_partial_references"] == ["q3"] and info["n_not_generated"] == 0


@pytest.mark.parametrize("dataset, judged, exclude, include", [("dl19", 43, 43, 43), ("dl20", 54, 26, 54),
                                                                 ("dl21", 53, 5, 52)])
def test_answers_asked_on_the_shared_data(shared_dir, dataset, judged, exclude, include):
    """The README's figures: answers asked per year under each choice (before: one per judged query)."""
    from pipeline.data.datasets import load_dataset
    from pipeline.study.tasks.h2g import answer_queries

    data = load_dataset(dataset, shared_dir / "data" / "trec_dl")
    asked, skipped = answer_queries(data, "exclude")
    assert (len(data.queries()), len(asked), len(asked) + len(skipped)) == (judged, exclude, judged)
    assert len(answer_queries(data, "include")[0]) == include
