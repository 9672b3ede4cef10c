"""LLM-backed failure-study steps as a user runs them: empty answers are never BERTScored (issue 18
item 3), results are labelled by the resolved model and ``auto`` states its fallback (issue 18), and a
dead host or a missing model fails the step at once, naming the cause, with no result file (issue 19
item 4). Real bert-score with the packaged MiniLM; the ``ollama`` client against the loopback server."""
from __future__ import annotations

import json

import pytest

from pipeline import cli
from tests.support.failure_fixture import QIDS, write_collection


def _run(capsys, argv):
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_an_empty_imported_answer_is_excluded_and_counted_not_bertscored(tmp_path, capsys):
    """Reproduction: bert-score 0.3.13 with transformers 5.x crashed on "" (AttributeError:
    build_inputs_with_special_tokens); now the query is left out of H2G and counted."""
    files = write_collection(tmp_path / "c")
    answers = [json.loads(line) for line in files["answers.jsonl"].read_text().splitlines()]
    answers[2]["text"] = ""  # q3
    answers[4]["text"] = "  \n"  # q5: whitespace only
    files["answers.jsonl"].write_text("".join(json.dumps(a) + "\n" for a in answers))
    code, out, err = _run(capsys, ["h2g", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
                                   "--passages", str(files["passages.tsv"]), "--encoder", "minilm",
                                   "--generator", f"g={files['answers.jsonl']}", "--json"])
    assert code == 0, err
    g = json.loads(out)["generators"]["g"]
    assert g["excluded_empty_answer"] == ["q3", "q5"] and g["n_empty_answers"] == 2
    assert set(g["per_query"]) == set(QIDS) - {"q3", "q5"}


def test_pair_f1_refuses_an_empty_text():
    from pipeline.generation.bertscore import pair_f1, resolve_encoder

    with pytest.raises(ValueError, match="empty answer"):
        pair_f1(resolve_encoder("minilm"), [""], ["a passage"])


def _closed_port_url() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def _collection_args(files):
    return ["--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
            "--passages", str(files["passages.tsv"])]


def _generations(cache_dir):
    from core import paths

    folder = paths.cache_dir() / "failure"
    return sorted(p.name for p in folder.rglob("generations/*.json")) if folder.is_dir() else []


@pytest.mark.parametrize("spec, where", [
    ("ollama:llama3.2:3b@{dead}", "llama3.2:3b at {dead}: connection refused"),
    ("openai:llama3.2:3b@{dead}/v1", "llama3.2:3b at {dead}/v1: connection refused"),
])
def test_a_dead_host_fails_the_step_at_once_naming_host_model_and_cause(tmp_path, capsys, spec, where):
    """Reproduction (issue 19 item 4): this took ~40 s (one attempt per query, with retries), printed
    'no scored queries' and left a generations/*.json with 0 answers."""
    import time

    files = write_collection(tmp_path / "c")
    dead = _closed_port_url()
    before = _generations(tmp_path)
    start = time.perf_counter()
    code, _, err = _run(capsys, ["h2g", *_collection_args(files), "--generator", spec.format(dead=dead),
                                 "--encoder", "minilm"])
    assert code == 1 and time.perf_counter() - start < 10
    assert where.format(dead=dead) in err and ("OLLAMA_HOST" in err or "base URL" in err)
    assert len(err.strip().splitlines()) == 1
    assert _generations(tmp_path) == before  # a failed step writes no result


def test_a_model_the_server_lacks_is_named_with_the_pull_hint(tmp_path, capsys):
    from tests.support.loopback_llm import LoopbackLLMServer

    files = write_collection(tmp_path / "c")
    with LoopbackLLMServer() as server:
        code, _, err = _run(capsys, ["h2g", *_collection_args(files), "--generator",
                                     f"ollama:llama3.3:70b@{server.url}", "--encoder", "minilm"])
        assert not [p for p, _ in server.requests if p == "/api/chat"]  # checked before the first call
    assert code == 1
    assert f"llama3.3:70b at {server.url}: the server has no such model" in err and "ollama pull llama3.3:70b" in err


def test_a_404_mid_step_stops_the_step_after_one_call(tmp_path):
    """The server lists the model but answers 404 for it (deleted meanwhile): one call, then stop."""
    from pipeline.generation.answers import generate_answers
    from pipeline.llm import CachedClient, LLMUnavailable, ResponseCache
    from pipeline.llm.backends.ollama_backend import OllamaBackend
    from tests.support.loopback_llm import LoopbackLLMServer

    with LoopbackLLMServer() as server:
        client = CachedClient(OllamaBackend("missing", host=server.url), ResponseCache(tmp_path / "c.sqlite"),
                              retries=3, backoff=0.01, concurrency=1)
        with pytest.raises(LLMUnavailable) as info:
            generate_answers(client, {q: f"question {q}" for q in QIDS})
    exc = info.value
    assert client.calls_made == 1 and (exc.host, exc.model) == (server.url, "missing")
    assert "not found" in exc.cause and exc.hint == "ollama pull missing"


def test_a_call_past_the_timeout_stops_the_step(tmp_path):
    from pipeline.llm import CachedClient, LLMUnavailable, ResponseCache
    from pipeline.llm.backends.ollama_backend import OllamaBackend
    from tests.support.loopback_llm import LoopbackLLMServer

    with LoopbackLLMServer() as server:
        client = CachedClient(OllamaBackend("slow", host=server.url, timeout=0.5), ResponseCache(tmp_path / "c.sqlite"),
                              timeout=0.5, retries=2, concurrency=2)
        with pytest.raises(LLMUnavailable, match="no reply within 0.5 s"):
            client.chat_many([[{"role": "user", "content": f"q{i}"}] for i in range(6)])
        assert client.calls_made <= 2  # the requests in flight; none started after the first timeout


def test_llm_unavailable_survives_pickling():
    """Ray hands exceptions between processes: the attributes must come across."""
    import pickle

    from pipeline.llm import LLMUnavailable

    exc = pickle.loads(pickle.dumps(LLMUnavailable(host="h", model="m", cause="c", hint="x")))
    assert (exc.host, exc.model, exc.cause, exc.hint, str(exc), exc.retryable) == ("h", "m", "c", "x", "m at h: c (x)", False)


def test_run_with_a_dead_generator_stops_before_any_step(tmp_path, capsys, monkeypatch):
    from core import paths

    # a cache of its own: a study another test ran in the session's cache would be there already
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    files = write_collection(tmp_path / "c")
    dead = _closed_port_url()
    code, _, err = _run(capsys, ["run", *_collection_args(files), "--retriever", f"r={files['run.txt']}",
                                 "--generator", f"ollama:llama3.2:3b@{dead}", "--judge", f"j={files['judge.txt']}",
                                 "--encoder", "minilm"])
    assert code == 1 and f"llama3.2:3b at {dead}: connection refused" in err
    assert not (paths.cache_dir() / "failure" / "qrels" / "study.json").exists()


def test_an_in_process_engine_is_waited_for_not_timed_out(tmp_path):
    """A local engine on a loaded CPU is slow, not unavailable: the 1.5B answers step once failed whole
    (LLMUnavailable) when a batch outlasted --timeout. An in-process backend gets no timeout; a server
    behind the same client and timeout does."""
    import time

    from pipeline.llm import CachedClient, LLMUnavailable, ResponseCache
    from pipeline.llm.base import Completion, LLMBackend, Provenance

    class SlowEngine(LLMBackend):
        in_process = True

        def __init__(self):
            self.provenance = Provenance("embedded", "slow-engine", small=True, note="")

        def complete(self, messages, options):
            time.sleep(0.6)
            return Completion("a slow answer", "stop")

    client = CachedClient(SlowEngine(), ResponseCache(tmp_path / "c.sqlite"), timeout=0.1, retries=0)
    assert client.chat([{"role": "user", "content": "q"}]).text == "a slow answer"

    class SlowServer(SlowEngine):
        in_process = False

    server_client = CachedClient(SlowServer(), ResponseCache(tmp_path / "d.sqlite"), timeout=0.1, retries=0)
    with pytest.raises(LLMUnavailable, match="no reply within 0.1 s"):
        server_client.chat([{"role": "user", "content": "q"}])
