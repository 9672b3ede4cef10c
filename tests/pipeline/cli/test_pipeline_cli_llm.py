"""The command line an Ollama user meets (issue 18 "What a researcher using Ollama daily expects",
issue 19 item 5): one name per concept, options only where they act, defaults and the spec grammar in
the help, numbers checked by argparse with their name, model options reaching the server, the cache
commands, and prefer refusing to let a model judge its own answers. Against the loopback server."""
from __future__ import annotations

import json

import pytest

from pipeline import cli
from pipeline.judging.judgments import DEFAULT_CAP
from tests.support.failure_fixture import write_collection
from tests.support.preference_helpers import assignments, dl19_folder


def _run(capsys, argv):
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _parse_error(capsys, argv) -> str:
    with pytest.raises(SystemExit) as info:
        cli.build_parser().parse_args(argv)
    assert info.value.code == 2
    return capsys.readouterr().err


def test_top_level_help_gives_the_spec_grammar_and_ollama_host(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--help"])
    text = capsys.readouterr().out
    for needle in ("OLLAMA_HOST", "ollama[:MODEL[@HOST]]", "openai:MODEL@BASE_URL", "auto", "embedded",
                   "--generator SPEC | NAME[=FILE]", "--judge SPEC | NAME[=FILE]", "--assigner SPEC"):
        assert needle in text, needle


def test_subcommand_help_shows_defaults(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["h2j", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 0.25)" in text and "(default: 300.0)" in text and f"(default: {DEFAULT_CAP})" in text


@pytest.mark.parametrize("argv, option", [
    (["h2g", "--dataset", "dl19", "--generator", "auto", "--cap", "4"], "--cap"),  # no judge in h2g
    (["h2j", "--dataset", "dl19", "--judge", "auto", "--encoder", "minilm"], "--encoder"),  # no BERTScore in h2j
    (["typology", "--dataset", "dl19", "--task", "h2r", "--llm", "auto"], "--llm"),  # renamed --assigner
    (["prefer", "--dataset", "dl19", "--judge-model", "auto"], "--judge-model"),  # renamed --judge
    (["h2g", "--dataset", "dl19", "--generator", "auto", "--llm-timeout", "3"], "--llm-timeout"),  # now --timeout
])
def test_an_option_appears_only_where_it_acts(capsys, argv, option):
    assert f"unrecognized arguments: {option}" in _parse_error(capsys, argv)


@pytest.mark.parametrize("argv, message", [
    (["h2j", "--dataset", "dl19", "--judge", "j", "--cap", "-1"], "argument --cap: expected an integer >= 1, got -1"),
    (["h2j", "--dataset", "dl19", "--judge", "j", "--cap", "0"], "argument --cap: expected an integer >= 1, got 0"),
    (["h2g", "--dataset", "dl19", "--generator", "g", "--quantile", "0"], "argument --quantile: expected a number "
                                                                          "strictly between 0 and 1, got 0"),
    (["h2g", "--dataset", "dl19", "--generator", "g", "--timeout", "-5"], "argument --timeout: expected a number > 0"),
    (["h2g", "--dataset", "dl19", "--generator", "g", "--temperature", "nan"], "argument --temperature"),
    (["h2g", "--dataset", "dl19", "--generator", "g", "--concurrency", "0"], "argument --concurrency"),
    (["h2g", "--dataset", "dl19", "--generator", "g", "--max-tokens", "x"], "argument --max-tokens: expected an "
                                                                            "integer >= 1, got 'x'"),
    (["h2r", "--dataset", "dl19", "--retriever", "bm25", "--depth", "-3"], "argument --depth"),
    (["typology", "--dataset", "dl19", "--task", "h2r", "--max-rounds", "0"], "argument --max-rounds"),
    (["annotations", "--size", "-2"], "argument --size"),
    (["prefer", "--dataset", "dl19", "--passage-chars", "10"], "argument --passage-chars: expected an integer >= 50"),
])
def test_numeric_options_are_checked_by_name(capsys, argv, message):
    """Reproduction (issue 19 item 5): `--cap -1` reached numpy ('negative dimensions are not allowed')."""
    err = _parse_error(capsys, argv)
    assert message in err and "negative dimensions" not in err


def test_cap_none_means_every_pair(capsys):
    args = cli.build_parser().parse_args(["h2j", "--dataset", "dl19", "--judge", "j", "--cap", "none"])
    assert args.cap is None


def test_model_options_reach_the_server_and_the_record(tmp_path, capsys, server):
    files = write_collection(tmp_path / "c")
    code, out, err = _run(capsys, [
        "h2g", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
        "--passages", str(files["passages.tsv"]), "--encoder", "minilm",
        "--generator", f"ollama:qwen3:8b@{server.url}", "--temperature", "0.3", "--seed", "11",
        "--max-tokens", "40", "--num-ctx", "4096", "--think", "--keep-alive", "10m", "--concurrency", "2", "--json"])
    assert code == 0, err
    body = [b for path, b in server.requests if path == "/api/chat"][-1]
    assert body["think"] is True and body["keep_alive"] == "10m"
    assert body["options"] == {"temperature": 0.3, "seed": 11, "num_predict": 40, "num_ctx": 4096}
    g = json.loads(out)["generators"]["ollama:qwen3:8b"]
    assert g["provenance"]["label"] == f"ollama:qwen3:8b [{server.digests['qwen3:8b'][:12]}]"
    assert g["provenance"]["endpoint"] == server.url


def test_h2g_text_names_the_resolved_model_not_the_spec(tmp_path, capsys, server, monkeypatch):
    """Reproduction: `h2g --generator auto` printed `auto (minilm)`."""
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    files = write_collection(tmp_path / "c")
    code, out, err = _run(capsys, ["h2g", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
                                   "--passages", str(files["passages.tsv"]), "--encoder", "minilm",
                                   "--generator", "auto"])
    assert code == 0, err
    assert "generator ollama:llama3.2:3b [" in out and "auto (" not in out
    assert "generator: auto resolved to ollama:llama3.2:3b" in out
    assert "BERTScore: all-MiniLM-L6-v2" in out


def test_llm_models_and_check(capsys, server):
    code, out, _ = _run(capsys, ["llm", "models", "--host", server.url, "--json"])
    assert code == 0
    listed = {m["model"]: m for m in json.loads(out)["models"]}
    assert listed["llama3.2:3b"]["digest"] == server.digests["llama3.2:3b"] and listed["llama3.2:3b"]["chat"]
    code, out, _ = _run(capsys, ["llm", "check", f"ollama:qwen3:8b@{server.url}"])
    assert code == 0 and out.startswith(f"ollama:qwen3:8b@{server.url}: ollama:qwen3:8b [")
    code, _, err = _run(capsys, ["llm", "check", f"ollama:gemma3:1b@{server.url}"])
    assert code == 1 and "the server has no such model" in err and "ollama pull gemma3:1b" in err


def test_llm_failures_answers_and_purge(tmp_path, capsys, server):
    from pipeline.llm import GenerationOptions, ResponseCache, make_client

    path = tmp_path / "responses.sqlite"
    cache = ResponseCache(path)
    make_client(f"ollama:llama3.2:3b@{server.url}", cache=cache, step="generation").chat_many(
        [[{"role": "user", "content": f"q{i}"}] for i in range(3)], GenerationOptions())
    make_client(f"ollama:qwen3:8b@{server.url}", cache=cache, step="judgments:binary").chat(
        [{"role": "user", "content": "q"}])
    make_client(f"ollama:empty@{server.url}", cache=cache, step="generation").chat_many(
        [[{"role": "user", "content": "q"}]])
    code, out, _ = _run(capsys, ["llm", "answers", "--cache-file", str(path), "--json"])
    assert {(r["model"], r["step"], r["answers"]) for r in json.loads(out)["answers"]} == {
        ("llama3.2:3b", "generation", 3), ("qwen3:8b", "judgments:binary", 1)}
    code, out, _ = _run(capsys, ["llm", "failures", "--cache-file", str(path), "--json"])
    failures = json.loads(out)["failures"]
    assert [(f["model"], f["step"]) for f in failures] == [("empty", "generation")]
    assert "empty reply" in failures[0]["error"]
    code, _, err = _run(capsys, ["llm", "purge", "--cache-file", str(path)])
    assert code == 2 and "give --model and/or --step" in err  # bad usage
    code, out, _ = _run(capsys, ["llm", "purge", "--model", "llama3.2:3b", "--cache-file", str(path)])
    assert code == 0 and out.strip() == "purged 3 cached answers"
    assert cache.stats()["answers"] == 1
    code, out, _ = _run(capsys, ["llm", "purge", "--step", "judgments:binary", "--cache-file", str(path), "--json"])
    assert json.loads(out)["purged"] == 1 and cache.stats()["answers"] == 0


def test_prefer_refuses_self_judging_unless_allowed(tmp_path, capsys, server, monkeypatch):
    """Default --judge auto and --generator auto resolve to one model: it would judge its own answers."""
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    folder = dl19_folder(tmp_path)
    reasons = tmp_path / "reasons.jsonl"
    reasons.write_text("".join(json.dumps({"qid": a.qid, "task": a.task, "categories": list(a.categories)}) + "\n"
                               for a in assignments()[:2]))
    argv = ["prefer", "--dataset", "dl19", "--data", str(folder), "--reasons", str(reasons), "--json"]
    code, _, err = _run(capsys, argv)
    assert code == 2 and "the judge and the generator are the same model (ollama:llama3.2:3b" in err
    assert "--allow-self-judging" in err
    code, out, err = _run(capsys, [*argv, "--allow-self-judging"])
    assert code == 0, err
    result = json.loads(out)
    assert result["self_judging"] is True
    assert result["resolution"] == {"judge": "auto resolved to ollama:llama3.2:3b",
                                    "generator": "auto resolved to ollama:llama3.2:3b"}
    from pipeline.prompting import preference

    assert preference.load_result(result["path"])["self_judging"] is True
    code, out, err = _run(capsys, [*argv, "--generator", f"ollama:qwen3:8b@{server.url}"])  # another model
    assert code == 0, err
    assert json.loads(out)["self_judging"] is False

