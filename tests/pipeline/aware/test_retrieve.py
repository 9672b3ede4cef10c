"""Difficulty-aware retrieval (issue 36 §2): ``python -m pipeline aware-retrieve`` against a loopback
Ollama-speaking server whose planted rewrites have a known effect, reproduced exactly (per-query nDCG@10
from pyserini and ir_measures directly, the Wilcoxon statistic and p from scipy directly, the share leaving
the bottom quartile); a rerun makes no call; a partial corpus says so; bad input is refused, nothing stored."""
from __future__ import annotations

import json
import re

import ir_measures
import pytest
from scipy.stats import binomtest, wilcoxon
from statsmodels.stats.multitest import multipletests

from pipeline import cli
from pipeline.aware import retrieve, store
from tests.pipeline.aware import retrieve_collection as rc
from tests.support.loopback_llm import LoopbackLLMServer

MODEL = "rewriter:8b"
# the planted difficulty-aware rewrites: words of a chosen relevant passage (h1 grade 3, h2 grade 2, h3 grade 1,
# h4 grades 3 and 2), under a label or in quotes as models write them; h5's reply holds no query (unusable)
AWARE = {"h1": rc.words("h1", 3), "h2": f"Rewritten query: {rc.words('h2', 2)}", "h3": f'"{rc.words("h3", 1)}"',
         "h4": f"Here is the query:\n{rc.words('h4', 3)} {rc.words('h4', 2)}", "h5": '""'}
PLANTED = {"h1": rc.words("h1", 3), "h2": rc.words("h2", 2), "h3": rc.words("h3", 1),
           "h4": f"{rc.words('h4', 3)} {rc.words('h4', 2)}", "h5": rc.query("h5")}  # what BM25 must search


def respond(body: dict) -> str:
    """The aware prompt (the reason sentence in it) gets the planted rewrite; the plain and the control ones (a
    neutral statement in the sentence's place) the query itself."""
    user = body["messages"][-1]["content"]
    query = re.search(r"^Query: (.*)$", user, re.M).group(1)
    qid = next(q for q in rc.HARD if rc.query(q) == query)
    return AWARE[qid] if rc.SENTENCE in user else query


def chat_calls(server) -> int:
    return sum(path in ("/api/chat", "/v1/chat/completions") for path, _ in server.requests)


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main(["aware-retrieve", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def expected_ndcg(index_dir, queries: dict, qrels: dict, *, rm3: bool = False) -> dict:
    """nDCG@10 per query with pyserini's searcher and ir_measures, not through the project's code."""
    from pipeline.retrieval.java import lucene_searcher_class  # the JVM set up, then pyserini's own class

    searcher = lucene_searcher_class()(str(index_dir))
    searcher.set_bm25(0.9, 0.4)
    if rm3:
        searcher.set_rm3(10, 10, 0.5)
    run = {q: {h.docid: h.score for h in searcher.search(text, k=1000)} for q, text in queries.items()}
    searcher.close()
    judged = {q: qrels[q] for q in queries}
    return {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ 10], judged, run)}


@pytest.fixture
def planted(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    folder = rc.write(tmp_path / "data")
    reasons = rc.write_reasons(tmp_path / "reasons.jsonl", rc.HARD[:5] + ["e1"])  # h6: no reason; e1 not H2R
    with LoopbackLLMServer(models=[MODEL], parameter_sizes={MODEL: "8.0B"}) as server:
        server.responders[MODEL] = respond
        yield {"folder": folder, "reasons": reasons, "server": server, "cache": tmp_path / "cache",
               "argv": ["--dataset", "dl19", "--data", str(folder), "--rewriter", f"ollama:{MODEL}@{server.url}",
                        "--reasons", str(reasons), "--reasons-model", "reasons-llm", "--model-size",
                        "reasons-llm=8B", "--json"]}  # the reasons FILE's maker, named and sized


@pytest.mark.slow
def test_planted_rewrites_reproduce_their_effect_exactly_and_a_rerun_makes_no_call(planted, capsys):
    from core.jobs.progress import read_progress

    server = planted["server"]
    code, out, err = run_cli(capsys, *planted["argv"], "--progress-key", "aware-retrieve-planted")
    assert code == 0, err
    # the job's progress record: every stage it announced was reached, the last one complete
    record = read_progress("aware-retrieve-planted")
    assert (record["status"], record["stage_index"], record["stages"], record["done"]) == ("completed", 3, 3, 4)
    summary = json.loads(out)
    result = store.load_result(retrieve.KIND, summary["path"], retrieve.RESULT_VERSION)
    assert result["id"] == summary["id"] and summary["partial_corpus"] is False
    assert "judged pool is complete" in summary["corpus"]

    # the H2R set and who was used: h1..h6 tie at 0 (exactly the target 6 of 24); h6 has no reason
    assert result["h2r"]["qids"] == rc.HARD and result["h2r"]["boundary"] == 0.0
    assert [u["qid"] for u in result["queries"]] == rc.HARD[:5]
    assert result["excluded"] == {"no H2R reason": ["h6"], "over max_queries": []}
    by_qid = {u["qid"]: u for u in result["queries"]}
    assert all(u["sentence"] == rc.SENTENCE for u in by_qid.values())
    assert {q: u["rewrites"]["aware_rewrite"]["searched"] for q, u in by_qid.items()} == PLANTED
    assert by_qid["h5"]["rewrites"]["aware_rewrite"]["status"] == "unusable"
    assert result["counts"]["kept_original"] == {"plain_rewrite": 0, "aware_rewrite": 1, "control_rewrite": 0}
    assert all(u["rewrites"][arm]["query"] == u["query"] for u in by_qid.values()
               for arm in ("plain_rewrite", "control_rewrite"))
    # the control rewrite's prompt: the aware one with a neutral statement of the sentence's length in its place
    for u in by_qid.values():
        assert len(u["control_sentence"].split()) == len(rc.SENTENCE.split()) and u["control_sentence"] != rc.SENTENCE
        assert u["prompts"]["control_rewrite"] == retrieve.rewrite_messages(u["query"], u["control_sentence"])

    # per-query nDCG@10 per arm, independently
    from pipeline.data import trec_io

    qrels = trec_io.read_qrels(planted["folder"] / "qrels.dl19-passage.txt")
    (index_dir,) = (planted["cache"] / "bm25").glob("lucene-*")
    originals = {q: rc.query(q) for q in by_qid}
    want = {"original": expected_ndcg(index_dir, originals, qrels),
            "aware_rewrite": expected_ndcg(index_dir, PLANTED, qrels),
            "rm3": expected_ndcg(index_dir, originals, qrels, rm3=True)}
    want["plain_rewrite"] = want["control_rewrite"] = want["original"]
    for arm, values in want.items():
        assert {q: u["ndcg@10"][arm] for q, u in by_qid.items()} == values, arm
    assert all(want["aware_rewrite"][q] > 0 for q in rc.HARD[:4]) and want["aware_rewrite"]["h5"] == 0

    # the paired statistic and p with scipy directly (zero changes dropped), and Holm over the declared five
    changes = [want["aware_rewrite"][q] - want["original"][q] for q in rc.HARD[:5]]
    direct = wilcoxon([c for c in changes if c != 0])
    assert list(result["comparisons"]) == list(retrieve.FAMILY) and retrieve.FAMILY[0] == retrieve.PRIMARY \
        == summary["primary"] == "aware_rewrite vs control_rewrite"
    for name in ("aware_rewrite vs control_rewrite", "aware_rewrite vs original", "aware_rewrite vs plain_rewrite"):
        got = result["comparisons"][name]["wilcoxon"]
        assert (got["statistic"], got["p"], got["n_nonzero"]) == (float(direct.statistic), float(direct.pvalue), 4)
    raw = [result["comparisons"][n]["wilcoxon"]["p"] for n in retrieve.FAMILY]
    expected = multipletests([1.0 if p is None else p for p in raw], method="holm")[1]
    assert [result["holm"][n] for n in retrieve.FAMILY] == pytest.approx(list(expected), rel=1e-12)
    assert result["comparisons"]["plain_rewrite vs original"]["wilcoxon"]["p"] is None  # nothing changed
    # n = 5 < 10: inconclusive whatever the figures, the reason first; an 8B rewriter is no gate
    for part in result["verdicts"].values():
        assert part["verdict"] == "inconclusive" and part["evidence"]["inconclusive_because"] == ["n = 5 < minimum 10"]
    assert result["gates"] == {"rewriter": [], "assigner": []}

    # the share leaving the bottom quartile: above the boundary (0) under the arm, Wilson interval by scipy
    left = sum(want["aware_rewrite"][q] > 0 for q in by_qid)
    ci = binomtest(left, 5).proportion_ci(0.95, method="wilson")
    assert result["leaving"]["aware_rewrite"] == {"left": left, "n": 5, "share": left / 5,
                                                  "interval": [float(ci.low), float(ci.high)]}
    assert result["leaving"]["plain_rewrite"]["left"] == result["leaving"]["control_rewrite"]["left"] == 0
    # the aware share against the plain and the control ones, on the same queries: McNemar's exact binomial
    for name in ("aware_rewrite vs control_rewrite", "aware_rewrite vs plain_rewrite"):
        test = result["leaving_tests"][name]
        assert (test["first_only"], test["second_only"]) == (left, 0)
        assert test["p"] == pytest.approx(binomtest(0, left).pvalue)

    # a rerun: no chat request, the same id, still one stored result
    calls = chat_calls(server)
    assert calls == 15  # 5 queries x (plain, aware, control)
    code, out, err = run_cli(capsys, *planted["argv"])
    assert code == 0, err
    assert chat_calls(server) == calls and json.loads(out)["id"] == result["id"]
    code, text, err = run_cli(capsys, *planted["argv"][:-1])  # the text report: the primary comparison first
    assert code == 0, err
    assert text.index("  aware_rewrite vs control_rewrite: inconclusive") < text.index("  aware_rewrite vs original:")
    assert "regresses toward the mean" in " ".join(text.split())
    assert f"leaving, aware_rewrite vs control_rewrite: {left} left under the first only, 0 under" in text
    code, out, _ = run_cli(capsys, "--list", "--json")
    assert code == 0 and [r["id"] for r in json.loads(out)["results"]] == [result["id"]]


@pytest.mark.slow
def test_partial_corpus_is_said_and_a_model_under_3b_is_not_a_finding(tmp_path, monkeypatch):
    from pipeline.data.datasets import load_dataset
    from pipeline.llm import Provenance
    from pipeline.prompting.difficulty import load_templates
    from pipeline.retrieval import bm25
    from pipeline.typology.categories import STUDY_FILE
    from pipeline.cli.aware_retrieve import summary
    from tests.support.preference_helpers import client
    from tests.support.progress_helpers import RecordingWriter

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    folder = rc.write(tmp_path / "data", "dl20", missing_text=("e2-rel", "h6-g1"))
    data = load_dataset("dl20", folder)
    config = retrieve.RetrieveConfig(max_queries=2)
    index = bm25.build_index(data.passages, fingerprint=data.passages_fingerprint)
    h2r = retrieve.original_h2r(data, index, config)
    typology, assignments, how = retrieve.h2r_reasons(data, (), STUDY_FILE, reasons=str(
        rc.write_reasons(tmp_path / "r.jsonl", rc.HARD)))
    rewriter = client(lambda messages: "some rewrite", model="small")
    rewriter.backend.provenance = Provenance("scripted", "small", parameters_b=1.5, size_source="stated")
    tracker = RecordingWriter(None, 2)
    result = retrieve.run_aware_retrieve(data, h2r, assignments, typology, load_templates(), rewriter, config, index,
                                         reasons_report=how, progress=tracker)
    stages = [*tracker.ended, tracker.record]  # the job's progress: each stage ends complete
    assert [(r["stage_index"], r["done"], r["total"]) for r in stages] == [(1, 6, 6), (2, 4, 4)]
    assert result["corpus"]["partial_corpus"] is True
    assert "partial corpus: only 58 of 60 judged passages (96.7%)" in result["corpus"]["statement"]
    assert "partial corpus" in summary(result)["corpus"]
    assert [u["qid"] for u in result["queries"]] == ["h1", "h2"]  # --max-queries 2
    assert result["excluded"]["over max_queries"] == ["h3", "h4", "h5", "h6"]
    (gate,) = result["gates"]["rewriter"]
    assert "1.5B" in gate and "under the 3B" in gate and "not a finding" in gate
    for name, part in result["verdicts"].items():
        because = part["evidence"]["inconclusive_because"]
        assert part["verdict"] == "inconclusive"
        assert (gate in because) == (name != "rm3 vs original")  # RM3 involves no LLM
    # the same reasons read from the typology store, made there by a sub-1B model: that model chose which H2R
    # queries are compared, so its gate reaches all five comparisons, RM3's too
    tiny = Provenance("embedded", "smollm2", parameters_b=0.135, size_source="GGUF metadata")
    stored = {"typology_store": {"h2r": {"run_id": "dl20-h2r", "provenance": tiny.as_dict()}, "model": tiny.label,
                                 "skipped": {}}}
    result = retrieve.run_aware_retrieve(data, h2r, assignments, typology, load_templates(), rewriter, config, index,
                                         reasons_report=stored)
    (reasons_gate,) = result["gates"]["assigner"]
    assert reasons_gate.startswith("reasons' model (typology store) is a sub-1B model")
    assert all(reasons_gate in part["evidence"]["inconclusive_because"] for part in result["verdicts"].values())


def test_bad_input_names_the_flag_and_stores_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    folder = rc.write(tmp_path / "data")
    base = ["--dataset", "dl19", "--data", str(folder), "--rewriter", "ollama:absent@http://127.0.0.1:9"]
    bad_category = tmp_path / "bad.jsonl"
    bad_category.write_text(json.dumps({"qid": "h1", "task": "h2r", "categories": ["Not a category"]}) + "\n")
    only_h2g = tmp_path / "h2g.jsonl"
    only_h2g.write_text(json.dumps({"qid": "h1", "task": "h2g", "categories": ["Need for recent information"]}) + "\n")
    for argv, words in [
        (base + ["--reasons", str(bad_category)], ["--reasons", "bad.jsonl:1", "'Not a category'"]),
        (base + ["--reasons", str(only_h2g)], ["--reasons", "no H2R reason"]),
        (["--dataset", "dl19"], ["--rewriter required"]),
        (base + ["--reasons-model", "ollama:x"], ["--reasons-model", "needs --reasons"]),
        (base + ["--reasons", "typology", "--assigner", "embedded"], ["--assigner", "--reasons typology"]),
    ]:
        code, _, err = run_cli(capsys, *argv)
        assert code == 2, argv
        assert all(w in err for w in words), err
    for argv, flag in [(base + ["--quantile", "1.5"], "--quantile"), (base + ["--max-queries", "0"], "--max-queries"),
                       (base + ["--templates", str(tmp_path / "none.json")], "--templates"),
                       (base + ["--reasons", str(tmp_path / "absent.jsonl")], "--reasons")]:
        with pytest.raises(SystemExit) as info:
            cli.main(["aware-retrieve", *argv])
        assert info.value.code == 2 and flag in capsys.readouterr().err
    assert store.list_results(retrieve.KIND) == []
    assert not (tmp_path / "cache" / "bm25").exists()  # no index built: nothing started


@pytest.mark.parametrize("reply, query", [
    ("cheap flights to paris in may", "cheap flights to paris in may"),
    ("Rewritten query: \"boiling point of water celsius\"", "boiling point of water celsius"),
    ("**Query:** speed of light km/s", "speed of light km/s"),
    ("Here is the rewritten query:\n\n- 'hamlet author shakespeare'\nBecause ...", "hamlet author shakespeare"),
    ("  “tallest   mountain height”  ", "tallest mountain height"),
    ('""', None), ("", None), ("Query:", None), (None, None),
])
def test_a_reply_is_read_as_one_line_of_query_text(reply, query):
    assert retrieve.parse_rewrite(reply) == query


def test_the_aware_prompt_is_the_plain_one_plus_the_sentence_after_the_query_line():
    plain = retrieve.rewrite_messages("how many moons has mars")
    aware = retrieve.rewrite_messages("how many moons has mars", rc.SENTENCE)
    assert plain[0] == aware[0]
    lines = aware[1]["content"].split("\n")
    assert lines[lines.index("Query: how many moons has mars") + 1] == rc.SENTENCE
    assert [line for line in lines if line != rc.SENTENCE] == plain[1]["content"].split("\n")


def test_reasons_from_the_typology_store_give_the_h2r_queries_their_sentence(tmp_path, monkeypatch, capsys):
    """``--reasons typology``: the store's latest finished H2R run gives the categories (an induced one without a
    template gets the default sentence); another task's reasons and unparsed assignments are not used."""
    from pipeline.data.datasets import load_dataset
    from pipeline.prompting.difficulty import load_templates
    from pipeline.typology.categories import Assignment, Category
    from pipeline.typology.induction import HardQuery
    from pipeline.typology.store import TypologyStore

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    folder = rc.write(tmp_path / "data")
    code, _, err = run_cli(capsys, "--dataset", "dl19", "--data", str(folder), "--rewriter", "embedded",
                           "--reasons", "typology")
    assert code == 2 and "--reasons typology: no failure typology store" in err  # none yet: refused, named
    vague = Category("Vague product names", "Names a product loosely.")
    with TypologyStore() as store:
        for task in ("h2r", "h2g"):
            store.start_run(f"dl19-{task}", dataset="dl19", task=task, source="induced", typology_label="induced",
                            hard_set={}, config={}, provenance={"label": "scripted:t"},
                            queries=[HardQuery(q, rc.query(q), "") for q in ("h1", "h2", "h3")])
            store.save_typology(f"dl19-{task}", [vague], "unchanged")
            store.save_assignments(f"dl19-{task}", [Assignment("h1", task, [(vague, "loose")], "ok"),
                                                    Assignment("h3", task, [(vague, "")], "ok"),
                                                    Assignment("h2", task, [], "unparseable", raw="???")])
    data = load_dataset("dl19", folder)
    typology, assignments, how = retrieve.h2r_reasons(data, (), None, reasons="typology")
    assert [(a.qid, a.task) for a in assignments] == [("h1", "h2r"), ("h3", "h2r")]
    assert how["typology_store"]["h2r"]["run_id"] == "dl19-h2r"
    units, excluded = retrieve.select_units(data, rc.HARD, assignments, typology, load_templates(), None)
    assert [u["qid"] for u in units] == ["h1", "h3"]
    assert excluded["no H2R reason"] == ["h2", "h4", "h5", "h6"]
    assert units[0]["sentence"] == "This query is difficult because of vague product names: Names a product loosely."
    assert units[0]["sentence"] in units[0]["prompts"]["aware_rewrite"][1]["content"]
