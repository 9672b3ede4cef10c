"""A study keys its judges and generators by their full identity (issue 30 item 4): the same model name
from two hosts, or a re-pulled tag, is two components, never one overwriting the other. Against two real
loopback servers (tests.support.loopback_llm) and the designed collection (real MiniLM BERTScore)."""
from __future__ import annotations


from pipeline.study.components import component_keys
from pipeline.study.config import load_collection
from pipeline.study.run import run_study
from tests.support.failure_fixture import write_collection
from tests.support.loopback_llm import LoopbackLLMServer


def test_two_judges_with_the_same_model_name_on_two_hosts_both_survive(cache, tmp_path):
    files = write_collection(tmp_path / "c")
    data = load_collection("designed", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    logged = []
    with LoopbackLLMServer(models=["grader"]) as a, LoopbackLLMServer(models=["grader"]) as b:
        study = run_study(data, retrievers=[f"r={files['run.txt']}"], generators=[f"g={files['answers.jsonl']}"],
                          judges=[f"ollama:grader@{a.url}", f"ollama:grader@{b.url}"], setups=("binary",),
                          encoder="minilm", progress=False, log=logged.append,
                          llm_options={"timeout": 5, "retries": 0})
        asked = [sum(path == "/api/chat" for path, _ in s.requests) for s in (a, b)]
    assert asked == [16, 16]  # both servers judged every pair
    assert set(study.judges) == {f"ollama:grader@{a.url}", f"ollama:grader@{b.url}"}
    for server in (a, b):
        assert study.judges[f"ollama:grader@{server.url}"]["binary"].provenance["endpoint"] == server.url
    assert len(study.configurations) == 2 and {c.components.judge for c in study.configurations.values()} == \
        set(study.judges)
    assert any("is kept as" in line and a.url in line for line in logged)


def test_the_same_identity_twice_is_one_component_and_unique_names_stay_plain():
    ollama = {"backend": "ollama", "model": "m", "endpoint": "http://h:1", "digest": "a" * 64, "source": ""}
    repulled = {**ollama, "digest": "b" * 64}
    imported = {"backend": "imported", "model": "x", "endpoint": "", "digest": "", "source": "imported from /a.txt"}
    other_file = {**imported, "source": "imported from /b.txt"}
    assert component_keys([("ollama:m", ollama), ("ollama:m", ollama), ("x", imported)]) == ["ollama:m", "ollama:m", "x"]
    assert component_keys([("ollama:m", ollama), ("ollama:m", repulled)]) == [
        "ollama:m [aaaaaaaaaaaa]", "ollama:m [bbbbbbbbbbbb]"]  # a re-pulled tag
    assert component_keys([("x", imported), ("x", other_file)]) == ["x </a.txt>", "x </b.txt>"]
