"""The failure-task interface (issue 27 item 4): each task's per-query values with their direction,
hard set, exclusions and provenance, read alike from a live run and from a study stored by the code
before the interface existed.

``tests/fixtures/study_before_task_interface.json`` was stored by ``run_study`` at commit 20028e0 (the
last before the interface) over the designed collection of ``tests.support.failure_fixture`` with two gaps
made for this fixture: the answers lack q3 (H2G does not score it) and the second judge's file lacks
q5's pairs (H2J does not score it for that judge). :func:`gapped_collection` writes the same files again.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipeline.study import store as studies
from pipeline.study.config import StudyConfig, load_collection
from pipeline.study.result import StudyResult
from pipeline.study.task import EASIER, HARDER, PerQueryValues, StepContext
from pipeline.study.run import STUDY_TASKS, combine, read_tasks, run_study
from pipeline.study.tasks.h2r import RetrievalTask
from pipeline.study.universe import common_universe
from tests.support.failure_fixture import write_collection
from tests.support.float_json import json_differences
from tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "study_before_task_interface.json"


@pytest.fixture
def old_study(cache) -> StudyResult:
    """The fixture put into the study store as the old code left it, and opened by the store."""
    folder = studies.studies_dir("designed")
    folder.mkdir(parents=True)
    stored = json.loads(FIXTURE.read_text())
    shutil.copy(FIXTURE, folder / f"{stored['id']}.json")
    return StudyResult.from_dict(studies.load_study("designed", stored["id"]))


def gapped_collection(folder: Path) -> dict[str, Path]:
    """The fixture's files: the designed collection, its answers without q3, its judge without q5."""
    files = write_collection(folder)
    answers = [line for line in files["answers.jsonl"].read_text().splitlines() if json.loads(line)["qid"] != "q3"]
    files["answers-without-q3"] = folder / "answers-without-q3.jsonl"
    files["answers-without-q3"].write_text("\n".join(answers) + "\n")
    judge = [line for line in files["judge.txt"].read_text().splitlines() if not line.startswith("q5 ")]
    files["judge-without-q5"] = folder / "judge-without-q5.txt"
    files["judge-without-q5"].write_text("\n".join(judge) + "\n")
    return files


def fixture_config(files: dict[str, Path], **changes) -> StudyConfig:
    data = load_collection("designed", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    return StudyConfig.of(data, retrievers=[f"designed-run={files['run.txt']}"],
                          generators=[f"answers-without-q3={files['answers-without-q3']}"],
                          judges=[f"designed-judge={files['judge.txt']}",
                                  f"judge-without-q5={files['judge-without-q5']}"],
                          encoder="minilm", **changes)


def test_an_old_study_reads_as_h2r_values_with_their_direction_and_sets(old_study):
    h2r = RetrievalTask().read_study(old_study)
    assert (h2r.task, h2r.role, h2r.dataset, h2r.quantile) == ("h2r", "retriever", "designed", 0.25)
    assert h2r.rule == old_study.conventions["quantile"]  # the rule the old study states
    (values,) = h2r
    assert isinstance(values, PerQueryValues) and values.system == "designed-run"
    assert values.measure == "nDCG@10" and values.higher_is == EASIER and not values.hard_is_top
    stored = old_study.retrievers["designed-run"]
    assert values.values == stored.per_query and values.excluded == {}  # every judged query scored
    assert values.provenance == stored.info and values.provenance["kind"] == "imported"
    assert values.convention == old_study.conventions["h2r"]
    hard = values.hard_set(h2r.quantile)
    assert list(hard.qids) == stored.hard_all_queries == ["q7", "q8"]
    assert h2r.hard_sets()["designed-run"] == hard
    # the sets of the stored configurations are the values' sets within each configuration's universe
    for label, config in old_study.configurations.items():
        universe = set(common_universe({"h2r": values.values, "h2g": old_study.generator(label).per_query,
                                        "h2j": old_study.judge(label).per_query}))
        assert config.hard_in_universe["h2r"] == [q for q in hard.qids if q in universe]


def test_a_live_h2r_run_gives_the_old_study_values(old_study, tmp_path):
    config = fixture_config(gapped_collection(tmp_path / "c"))
    logged = []
    (live,) = RetrievalTask().run(config, StepContext(log=logged.append))
    (stored,) = RetrievalTask().read_study(old_study)
    assert (live.system, live.values, live.hard_set(0.25).qids) == (stored.system, stored.values,
                                                                    stored.hard_set(0.25).qids)
    assert logged == ["[designed] retriever designed-run: 8 queries"]


def test_direction_sets_the_end_of_the_hard_set():
    values = {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4, "e": 0.5}
    easier = PerQueryValues("t", "d", "s", "m", EASIER, values)
    harder = PerQueryValues("t", "d", "s", "m", HARDER, values)
    assert easier.hard_set(0.25).qids == ("a", "b") and harder.hard_set(0.25).qids == ("e", "d")
    assert harder.hard_set(0.25, within=["a", "b", "c"]).qids == ("c",)
    with pytest.raises(ValueError, match="higher_is must be one of"):
        PerQueryValues("t", "d", "s", "m", "lower", values)


def test_the_page_form_and_the_cli_build_one_configuration(tmp_path):
    """The page's job command parses back, through the CLI's flags, into the configuration it came from."""
    from pipeline.cli import build_parser
    from pipeline.cli.config import study_config

    config = StudyConfig(dataset="dl19", data_dir=str(tmp_path), generators=["embedded"],
                         judges=["llama-3.3-70b", "embedded"], cap=3, max_queries=5, universe="common",
                         truncated_answers="include")
    args = build_parser().parse_args(["run", *config.run_args("20261201T211003Z-3fa2c1d0-9b1e")])
    assert args.study_id == "20261201T211003Z-3fa2c1d0-9b1e"
    rebuilt = study_config(args, retrievers=args.retriever or (), generators=args.generator or (),
                           judges=args.judge or (), setups=args.setup or ("binary", "graded"))
    assert rebuilt == config
    with pytest.raises(ValueError, match="unknown universe"):
        StudyConfig(dataset="dl19", universe="everything")
    with pytest.raises(TypeError, match="sequence of names"):
        StudyConfig(dataset="dl19", judges="embedded")


def test_an_old_study_reads_as_every_task_with_exclusions_and_provenance(old_study):
    tasks = read_tasks(old_study)
    assert [t.task for t in tasks.values()] == ["h2r", "h2g", "h2j"] == [t.name for t in STUDY_TASKS]
    (h2g,) = tasks["h2g"]
    assert (h2g.system, h2g.measure, h2g.higher_is) == ("answers-without-q3", "BERTScore F1", EASIER)
    assert h2g.excluded == {"q3": "no answer"} and set(h2g.values) == set(old_study.queries) - {"q3"}
    assert h2g.provenance["bertscore"]["encoder"] == "minilm" and h2g.model["backend"] == "imported"
    assert h2g.identity["source"].endswith("answers-without-q3.jsonl")
    h2j = tasks["h2j"]
    assert [v.label for v in h2j] == ["designed-judge (binary)", "designed-judge (graded)",
                                      "judge-without-q5 (binary)", "judge-without-q5 (graded)"]
    assert all(v.higher_is == HARDER and v.hard_is_top for v in h2j)
    assert h2j.get("designed-judge", "binary").excluded == {}
    assert h2j.get("judge-without-q5", "graded").excluded == {"q5": "no pair labelled by both NIST and the judge"}
    assert list(h2j.get("designed-judge", "graded").hard_set(0.25).qids) == ["q1", "q8"]
    for values in (h2g, *h2j):  # each system's own set, as the old study recorded it
        assert list(values.hard_set(0.25).qids) == values.record.hard_all_queries


def test_the_old_study_configurations_are_recomposed_from_the_task_values(old_study):
    """Every stored configuration's sets, rule summaries, universe and figures come back from the three
    tasks' values through the study's composition (the same sets and figures the page shows)."""
    tasks = read_tasks(old_study)
    assert len(old_study.configurations) == 4
    for label, stored in old_study.configurations.items():
        c = stored.components
        chosen = {"h2r": tasks["h2r"].get(c.retriever), "h2g": tasks["h2g"].get(c.generator),
                  "h2j": tasks["h2j"].get(c.judge, c.setup)}
        again = combine(old_study.dataset, c.to_dict(), {t: v.values for t, v in chosen.items()}, {},
                        old_study.quantile, universe=old_study.universe_rule, n_judged=len(old_study.queries))
        assert again.sets == stored.hard_in_universe
        assert again.analysis == stored.analysis
        assert again.set_info == {t: s.to_dict() for t, s in stored.hard_in_universe_rule.items()}
        assert again.universe_info == stored.universe.to_dict()
    assert old_study.configurations["designed-run | answers-without-q3 | judge-without-q5 | binary"] \
        .universe.n_common == 6  # q3 (no answer) and q5 (no judged pair) outside


def test_a_live_study_stores_what_the_old_code_stored(old_study, cache, tmp_path):
    """The whole study through the new composition equals, field by field, the study the old code stored
    for the same files (paths, times and the machine's load aside)."""
    files = gapped_collection(tmp_path / "c")
    logged = []
    study = run_study(fixture_config(files), progress=False, log=logged.append)
    old = json.loads(FIXTURE.read_text())
    new = json.loads(json.dumps(study.to_dict()).replace(str(tmp_path / "c"), "/tmp/tasks_old/designed"))
    for key in ("id", "time", "finished"):
        old.pop(key), new.pop(key)
    for study_json in (old, new):  # the encoder's CPU threads and load: the machine at run time
        study_json["generators"]["answers-without-q3"]["bertscore"].pop("threads")
    # issue 33: each configuration now also records its gated models (imported: of unknown size)
    gated = {label: c.pop("gated") for label, c in new["configurations"].items()}
    assert all(set(g) == {"generator", "judge"} and "unknown size" in g["judge"] for g in gated.values())
    # BERTScore's floats come from a float32 encoder on another machine: equal within its rounding
    # (tests.support.float_json), every other field exactly.
    assert json_differences(new, old) == []
    assert logged[:2] == ["[designed] retriever designed-run: 8 queries",
                          "[designed] generator answers-without-q3: 7 queries scored (minilm); "
                          + logged[1].split("(minilm); ", 1)[1]]
    assert len(logged) == 7 and logged[-1].startswith(f"[designed] study {study.id} stored: ")


def test_overlap_scores_with_the_aggregate_it_is_given(cache, tmp_path, capsys):
    """``overlap --aggregate mean`` was parsed and dropped (the command passed every BERTScore option but
    that one): its configuration now carries it, like ``run``'s and ``h2g``'s."""
    from pipeline import cli

    files = write_collection(tmp_path / "c")
    assert cli.main(["overlap", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
                     "--passages", str(files["passages.tsv"]), "--json", "--encoder", "minilm", "--aggregate", "mean",
                     "--retriever", f"r={files['run.txt']}", "--generator", f"g={files['answers.jsonl']}",
                     "--judge", f"j={files['judge.txt']}", "--setup", "binary"]) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    assert out["provenance"]["generator"]["bertscore"]["aggregate"] == "mean"
