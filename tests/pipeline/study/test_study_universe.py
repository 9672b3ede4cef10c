"""The study's query universe (issue 30 item 3): each task's set over its own queries (``per-task``, the
paper's, default) or within the queries all three tasks score (``common``, the rule before the choice),
named, stored with the study, shown with both sizes, and a warning when the common universe holds
under half of the judged queries. Real code throughout (MiniLM BERTScore on a designed collection)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline import cli
from pipeline.study import store as studies
from pipeline.study.result import StudyResult
from pipeline.study.config import load_collection
from pipeline.study.run import combine, run_study
from pipeline.study.universe import LEGACY_NOTE
from pipeline.study.jobs import study_command
from tests.support.failure_fixture import OFF_TOPIC, RELEVANT, write_collection
from tests.support.paths import PAGES

CONFIG = {"retriever": "r", "generator": "g", "judge": "j", "setup": "binary"}
LABEL = "r | g | j | binary"


def test_a_planted_per_task_quartile_differs_from_the_common_universe_quartile():
    """H2R scores eight queries, H2G only a5..a8. Over its own queries H2R's quartile (target 2) is a1, a2,
    neither of which H2G scores: no query of the common universe is hard to retrieve. Within the common
    universe (target 1) the rule calls a5, a median query (nDCG 0.5), hard to retrieve."""
    ndcg = {f"a{i}": i / 10 for i in range(1, 9)}
    values = {"h2r": ndcg, "h2g": {f"a{i}": 0.9 - i / 100 for i in range(5, 9)},
              "h2j": {f"a{i}": 0.0 for i in range(1, 9)} | {"a6": 1.0}}
    paper = combine("t", CONFIG, values, {}, 0.25, n_judged=8)  # default: per-task
    common = combine("t", CONFIG, values, {}, 0.25, universe="common", n_judged=8)
    assert paper.universe == common.universe == ["a5", "a6", "a7", "a8"]
    assert paper.configuration["universe"] == "per-task" and common.configuration["universe"] == "common"
    assert paper.sets["h2r"] == [] and common.sets["h2r"] == ["a5"]
    # the rule's N is the task's own n under per-task, the universe's under common
    assert paper.set_info["h2r"]["n_queries"] == 8 and paper.set_info["h2r"]["n_hard"] == 2
    assert common.set_info["h2r"]["n_queries"] == 4
    info = paper.universe_info
    assert (info["n_common"], info["n_judged"], info["n_task"]) == (4, 8, {"h2r": 8, "h2g": 4, "h2j": 8})
    assert info["hard_outside"] == {"h2r": 2, "h2g": 0, "h2j": 0} and info["warning"] is None  # 4 of 8: half
    assert paper.as_dict()["universe_info"] == info
    with pytest.raises(ValueError, match="unknown universe 'all'"):
        combine("t", CONFIG, values, {}, 0.25, universe="all")


def _small_universe_collection(folder: Path) -> dict[str, Path]:
    """The designed collection with two more queries (q9, q10, easy everywhere) and answers for q5..q8
    only: every task but H2G scores 10 queries, the common universe holds 4 (under half)."""
    files = write_collection(folder)
    extra = {"q9": "colour of the sky", "q10": "freezing point of water"}
    relevant = {"q9": "The sky looks blue because air scatters blue light.", "q10": "Water freezes at 0 degrees."}
    with files["topics.tsv"].open("a") as f:
        f.writelines(f"{q}\t{t}\n" for q, t in extra.items())
    with files["qrels.txt"].open("a") as f:
        f.writelines(f"{q} 0 r{q[1:]} 3\n{q} 0 n{q[1:]} 0\n" for q in extra)
    with files["passages.tsv"].open("a") as f:
        f.writelines(f"r{q[1:]}\t{relevant[q]}\nn{q[1:]}\t{OFF_TOPIC}\n" for q in extra)
    with files["run.txt"].open("a") as f:
        f.writelines(f"{q} Q0 r{q[1:]} 1 10 designed\n{q} Q0 n{q[1:]} 2 9 designed\n" for q in extra)
    with files["judge.txt"].open("a") as f:
        f.writelines(f"{q} 0 r{q[1:]} 3\n{q} 0 n{q[1:]} 0\n" for q in extra)
    files["answers.jsonl"].write_text("".join(
        json.dumps({"qid": q, "text": OFF_TOPIC if q in ("q6", "q8") else RELEVANT[q]}) + "\n"
        for q in ("q5", "q6", "q7", "q8")))
    return files


def _run(files, **options) -> StudyResult:
    data = load_collection("small", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    return run_study(data, retrievers=[f"r={files['run.txt']}"], generators=[f"g={files['answers.jsonl']}"],
                     judges=[f"j={files['judge.txt']}"], setups=("binary",), encoder="minilm", progress=False,
                     log=lambda m: None, **options)


def test_the_study_stores_its_universe_rule_both_sizes_and_warns_on_a_small_universe(cache, tmp_path, capsys):
    files = _small_universe_collection(tmp_path / "c")
    study = _run(files)
    stored = studies.load_study("small", study.id)
    assert stored["universe"] == "per-task" and stored["configuration"]["universe"] == "per-task"
    config = study.configurations[LABEL]
    # q7 and q8 miss their relevant passage: H2R over its 10 queries (target 3) holds them, the 8 others tie
    # at 1.0 and stay out; both lie in the common universe {q5..q8}
    assert config.hard_in_universe["h2r"] == ["q7", "q8"]
    universe = study.universe_summary(LABEL)
    assert (universe.rule, universe.n_common, universe.n_judged) == ("per-task", 4, 10)
    assert universe.n_task == {"h2r": 10, "h2g": 4, "h2j": 10}
    assert universe.warning.startswith("the overlap is computed over 4 of 10 judged queries (40%, under half)")
    assert "H2G scores only 4" in universe.warning
    assert stored["configurations"][LABEL]["universe_info"]["warning"] == universe.warning  # in the JSON
    # the same study under the common rule: within {q5..q8} (target 1) q7 and q8 tie at nDCG 0 and the
    # block of two is left out, so no query is hard to retrieve
    common = _run(files, universe="common")
    assert common.universe == "common" and common.configurations[LABEL].hard_in_universe["h2r"] == []
    # the CLI: --universe, both sizes and the warning in its text and in its JSON
    args = ["run", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]), "--passages",
            str(files["passages.tsv"]), "--retriever", f"r={files['run.txt']}", "--generator",
            f"g={files['answers.jsonl']}", "--judge", f"j={files['judge.txt']}", "--encoder", "minilm",
            "--setup", "binary"]
    assert cli.main(args) == 0
    text = capsys.readouterr().out
    assert ("universe per-task (each task's set over its own scored queries): queries scored H2R 10, H2G 4, "
            "H2J 10; overlap over the 4 all three score (of 10 judged)") in text
    assert "warning: the overlap is computed over 4 of 10 judged queries" in text
    assert cli.main([*args, "--universe", "common", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["universe"] == "common" and out["configurations"][LABEL]["sets"]["h2r"] == []
    assert out["configurations"][LABEL]["universe_info"]["n_task"] == {"h2r": 10, "h2g": 4, "h2j": 10}
    with pytest.raises(SystemExit):
        cli.main([*args, "--universe", "everything"])
    assert "invalid choice: 'everything'" in capsys.readouterr().err


def test_overlap_command_shows_the_universe_and_warns(tmp_path, capsys):
    files = _small_universe_collection(tmp_path / "c")
    args = ["overlap", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]), "--passages",
            str(files["passages.tsv"]), "--retriever", f"r={files['run.txt']}", "--generator",
            f"g={files['answers.jsonl']}", "--judge", f"j={files['judge.txt']}", "--setup", "binary",
            "--encoder", "minilm"]
    assert cli.main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["configuration"]["universe"] == "per-task" and out["h2r"] == ["q7", "q8"]
    assert out["universe_info"]["n_common"] == 4 and "under half" in out["universe_info"]["warning"]
    assert cli.main(args) == 0
    assert "  warning: the overlap is computed over 4 of 10 judged queries" in capsys.readouterr().out


def test_a_study_stored_before_the_choice_reads_as_common_and_says_so(cache, tmp_path):
    files = _small_universe_collection(tmp_path / "c")
    study = _run(files, universe="common").to_dict()
    del study["universe"], study["configuration"]["universe"]
    for config in study["configurations"].values():
        del config["universe_info"]
    old = StudyResult.from_dict(study)
    assert old.universe is None and old.universe_rule == "common" and "universe" not in old.to_dict()
    assert old.to_dict() == study  # reads back and writes out unchanged
    universe = old.universe_summary(LABEL)  # derived from the components' values
    assert (universe.rule, universe.recorded, universe.n_common, universe.n_judged) == ("common", False, 4, 10)
    assert universe.n_task == {"h2r": 10, "h2g": 4, "h2j": 10} and LEGACY_NOTE in universe.line()


def test_the_page_shows_the_rule_both_sizes_the_warning_and_labels_an_old_study(cache, tmp_path, monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from pipeline.views import failure_overlap as view

    monkeypatch.setenv("IRDASH_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.delenv("IRDASH_DATA_TREC_DL", raising=False)
    st.cache_data.clear()
    study = _run(_small_universe_collection(tmp_path / "c"))
    page = str(PAGES / "failure-overlap.py")
    at = AppTest.from_file(page, default_timeout=90)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [w.value for w in at.warning][0] == (
        "Small common universe: the overlap is computed over 4 of 10 judged queries (40%, under half): the queries "
        "all three tasks score; H2G scores only 4.")
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Query universe per-task (each task's set over its own scored queries): queries "
                            "scored H2R 10, H2G 4, H2J 10; overlap over the 4 all three score (of 10 judged)")
               for c in captions), captions
    assert "4 of 10 judged queries scored by all three tasks<br>H2R 10, H2G 4, H2J 10 scored · universe per-task" in \
        view.venn_plotly(study.configurations[LABEL].analysis, None, study.universe_summary(LABEL)).layout.title.text
    stability = view.stability_frame(study)
    assert stability.loc[0, "scored per task"] == "H2R 10, H2G 4, H2J 10" and stability.loc[0, "universe"] == "per-task"
    # the form's choice reaches the job's command line
    command = study_command("dl19", None, generator="auto", llm_judge="embedded", universe="common")
    assert command[command.index("--universe") + 1] == "common"
    # a study stored before the choice: labelled common, rule not recorded
    path = studies.study_path("small", study.id)
    old = json.loads(path.read_text())
    del old["universe"], old["configuration"]["universe"], old["configurations"][LABEL]["universe_info"]
    path.write_text(json.dumps(old))
    st.cache_data.clear()
    at = AppTest.from_file(page, default_timeout=90)
    at.run()
    assert not at.exception
    assert any(c.value.startswith("Query universe common (each task's set within the common universe)")
               and LEGACY_NOTE in c.value for c in at.caption)
