"""Answers cut at the token limit (issue 30 item 2): the finish reason survives the response cache
(single and batched hits; rows from before it was stored read "unknown"), every H2G result counts
truncated answers, leaves them out by default (``--truncated-answers include`` keeps them), and the
study stores them. Against the loopback Ollama-speaking server and the real SQLite cache."""
from __future__ import annotations

import json


from pipeline import cli
from pipeline.llm import CachedClient, GenerationOptions, ResponseCache, ScriptedBackend
from pipeline.llm.base import Completion
from pipeline.study.jobs import study_command
from tests.support.failure_fixture import write_collection

MESSAGES = [{"role": "user", "content": "what is a lobster roll?"}]


class _BatchBackend(ScriptedBackend):
    """A scripted backend that answers in batches, like the embedded model, every reply cut at the limit."""
    supports_batch = True

    def __init__(self):
        super().__init__(lambda m: Completion("cut " + m[-1]["content"], "length"))

    def complete_batch(self, requests, options):
        return [Completion("cut " + r[-1]["content"], "length") for r in requests]


def test_a_batched_cache_hit_keeps_the_finish_reason(tmp_path):
    """Reproduction: an answer another worker stored between the batch path's look-up and its claim
    came back without its finish reason (None)."""
    from pipeline.llm.cache import request_key

    cache = ResponseCache(tmp_path / "c.sqlite")
    requests = [[{"role": "user", "content": c}] for c in "ab"]
    first = CachedClient(_BatchBackend(), cache, batch_size=4).chat_many(requests)
    assert [(r.cached, r.finish_reason) for r in first] == [(False, "length"), (False, "length")]
    client = CachedClient(_BatchBackend(), cache, batch_size=4)
    assert [(r.cached, r.finish_reason) for r in client.chat_many(requests)] == [(True, "length"), (True, "length")]
    options = client.effective_options(GenerationOptions())
    key = request_key(client.provenance, requests[0], options)
    hit = client._answer_batch([(key, requests[0])], options)[key]  # the claim finds the stored answer
    assert hit.cached and hit.finish_reason == "length"


def test_single_hits_keep_the_finish_reason_and_an_unreported_one_reads_unknown(tmp_path):
    """Rows stored before finish reasons were:
    tests/pipeline/llm/test_llm_replies.py::test_an_older_cache_gains_the_finish_reason_column."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = CachedClient(ScriptedBackend(lambda m: "plain text, no finish reason"), cache, retries=0)
    fresh, again = client.chat(MESSAGES), client.chat(MESSAGES)
    assert (fresh.finish_reason, again.finish_reason, again.cached) == ("unknown", "unknown", True)


def _h2g(capsys, files, server, *extra):
    code = cli.main(["h2g", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
                     "--passages", str(files["passages.tsv"]), "--encoder", "minilm",
                     "--generator", f"ollama:llama3.2:3b@{server.url}", "--max-tokens", "40", *extra])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def test_h2g_counts_answers_cut_at_the_limit_and_leaves_them_out(tmp_path, capsys, server):
    """Reproduction: two answers cut at the token limit (done_reason length) were BERTScored as if
    complete and counted nowhere."""
    files = write_collection(tmp_path / "c")
    server.cut_when.update({"speed of light", "largest planet"})  # q3 and q5 of the designed collection
    g = json.loads(_h2g(capsys, files, server, "--json"))["generators"]["ollama:llama3.2:3b"]
    assert (g["truncated"], g["n_truncated"], g["truncated_answers"]) == (["q3", "q5"], 2, "exclude")
    assert g["excluded_truncated"] == ["q3", "q5"] and g["max_tokens"] == 40
    assert sorted(g["per_query"]) == ["q1", "q2", "q4", "q6", "q7", "q8"]
    assert g["finish_reasons"]["q3"] == "length" and g["finish_reasons"]["q1"] == "stop"

    included = json.loads(_h2g(capsys, files, server, "--json", "--truncated-answers", "include"))
    g = included["generators"]["ollama:llama3.2:3b"]
    assert g["n_truncated"] == 2 and g["excluded_truncated"] == [] and len(g["per_query"]) == 8

    text = _h2g(capsys, files, server)  # a rerun: every answer from the cache, finish reasons too
    assert ("2 of 8 answered queries have an answer cut at 40 tokens (finish reason length): excluded from "
            "H2G (truncated answers: exclude): q3 q5") in text


def test_a_study_stores_the_finish_reasons_and_the_truncation_counts(tmp_path, server):
    from pipeline.study.result import StudyResult
    from pipeline.study.config import load_collection
    from pipeline.study.run import run_study

    files = write_collection(tmp_path / "c")
    server.cut_when.add("capital of france")  # q2
    data = load_collection("designed", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    study = run_study(data, retrievers=[f"designed={files['run.txt']}"],
                      generators=[f"ollama:llama3.2:3b@{server.url}"], judges=[f"judge={files['judge.txt']}"],
                      setups=["binary"], encoder="minilm", progress=False, log=lambda m: None)
    stored = StudyResult.from_dict(json.loads(json.dumps(study.to_dict())))
    g = stored.generators["ollama:llama3.2:3b"]
    assert g.finish_reasons["q2"] == "length" and g.bertscore["truncated"] == ["q2"]
    assert "q2" not in g.per_query and stored.configuration["truncated_answers"] == "exclude"
    from pipeline.views import failure_overlap as view

    label = next(iter(stored.configurations))
    from pipeline.generation.answers import GENERATION_OPTIONS

    cut = view.query_detail(stored, label, "q2")["cut"]  # at the default answer length
    assert cut == f"cut at {GENERATION_OPTIONS.max_tokens} tokens"
    assert view.query_detail(stored, label, "q1")["cut"] is None
    assert (f"1 of 8 answered queries have an answer cut at {GENERATION_OPTIONS.max_tokens} tokens (finish reason "
            "length): excluded from H2G") in view.provenance_lines(stored, label)[1]


def test_the_typology_context_says_the_answer_was_cut():
    from pipeline.typology.context import h2g_context

    text = h2g_context("<b>Paris is</b>", {"p1": "Paris is the capital."}, "gen", cut="cut at 40 tokens")
    assert text.startswith("Answer generated by gen (cut at 40 tokens):\n<b>Paris is</b>")
    assert h2g_context("Paris.", {}, "gen").startswith("Answer generated by gen:\n")


def test_difficulty_aware_answers_cut_at_the_limit_are_marked(tmp_path):
    from pipeline.prompting.preference import AnswerSide, _answers
    from pipeline.views.difficulty_aware_generation import answer_text

    def respond(messages):
        return Completion("half an answer", "length") if "cut" in messages[-1]["content"] else "a whole answer."

    client = CachedClient(ScriptedBackend(respond), ResponseCache(tmp_path / "c.sqlite"), retries=0,
                          overrides={"max_tokens": 64})
    out = _answers(AnswerSide(client=client), ["1", "2"], [[{"role": "user", "content": "cut me"}],
                                                          [{"role": "user", "content": "fine"}]],
                   GenerationOptions(max_tokens=128), "answers", lambda n: None)
    assert out == [("half an answer", None, 64), ("a whole answer.", None, None)]
    pair = {"answers": {"baseline": "half an answer", "aware": "a whole answer."}, "cut_at": {"baseline": 64}}
    assert answer_text(pair, "baseline") == "half an answer\n\n(cut at 64 tokens)"
    assert answer_text(pair, "aware") == "a whole answer."
    assert answer_text({"answers": {"aware": "old result"}}, "aware") == "old result"


def test_the_page_form_passes_the_truncation_choice_to_the_study():
    from pipeline.views import failure_overlap as view

    def value(command, option):
        return command[command.index(option) + 1]

    assert value(study_command("dl19", None, generator="auto", llm_judge="embedded"), "--truncated-answers") == "exclude"
    command = study_command("dl19", None, generator="auto", llm_judge="embedded", truncated_answers="include")
    assert value(command, "--truncated-answers") == "include"
    assert cli.build_parser().parse_args(command[3:]).truncated_answers == "include"


def test_an_h2g_typology_context_marks_a_cut_answer(tmp_path, server):
    from pipeline.study.typology_sources import HardSetConfig, hard_queries

    files = write_collection(tmp_path / "c")
    server.cut_when.update({"tallest mountain", "deepest ocean"})  # q6, q8: cut, and included to be seen
    config = HardSetConfig(dataset=None, task="h2g", generator=f"ollama:llama3.2:3b@{server.url}",
                           qrels=str(files["qrels.txt"]), topics=str(files["topics.tsv"]),
                           passages=str(files["passages.tsv"]), encoder="minilm", truncated_answers="include",
                           quantile=0.5)
    _, queries, meta = hard_queries(config, llm_options={"overrides": {"max_tokens": 40}})
    contexts = {q.qid: q.context for q in queries}
    assert meta["truncated_answers"] == "include" and contexts
    for qid, context in contexts.items():
        cut = qid in ("q6", "q8")
        assert context.startswith(f"Answer generated by ollama:llama3.2:3b{' (cut at 40 tokens)' if cut else ''}:")
