"""A further failure task (issue 27 item 4's leftover): a task registered by one class statement is run,
stored, read back and listed in the pairwise tables without its own section in ``StudyResult``; and a study
stored by the code before further tasks existed reads back byte for byte.

``tests/fixtures/study_before_generic_tasks.json`` was stored by ``run_study`` at commit edc9238 (the last
before further tasks) over the designed collection of ``tests.support.failure_fixture`` with its two gaps
(answers without q3, a second judge without q5's pairs; see ``test_task_interface.gapped_collection``),
written to ``/tmp/tasks_generic/designed``, both setups, MiniLM BERTScore, universe per-task.
"""
from __future__ import annotations

import json
import shutil

import pytest

from pipeline.export.study import pairwise_table
from pipeline.sets.overlap import further_note
from pipeline.study import store as studies
from pipeline.study.config import StudyConfig, load_collection
from pipeline.study.result import StudyResult
from pipeline.study.run import combine, failure_sets, read_tasks, run_study, study_tasks
from pipeline.study.task import HARDER, TASK_REGISTRY, FailureTask, not_scored
from pipeline.views import failure_overlap as view
from tests.support.failure_fixture import write_collection
from tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "study_before_generic_tasks.json"
# planted per-query scores, higher is harder: oracle's hard pair is H2R's {q7, q8}, q1-first's is {q1, q2}
PLANTED = {"oracle": {"q1": 0.1, "q2": 0.2, "q3": 0.3, "q4": 0.4, "q5": 0.5, "q6": 0.6, "q7": 0.9, "q8": 0.8},
           "q1-first": {"q1": 0.9, "q2": 0.8, "q3": 0.3, "q4": 0.4, "q5": 0.5, "q6": 0.6, "q7": 0.1, "q8": 0.2}}
PLANTED["without-q3"] = {q: v for q, v in PLANTED["oracle"].items() if q != "q3"}  # scores 7 of the 8


class PlantedTask(FailureTask, name="planted", role="predictor", measure="planted score", higher_is=HARDER,
                  convention="planted: a score per query set by the test; higher is harder"):
    """The whole of a fourth task: its declaration, its records and their values (no section anywhere)."""

    def records(self, config, data, context):
        for system in self.components(config):
            context.tracker.stage(f"planted {system}")
            yield system, None, PLANTED[system]

    def values_of(self, dataset, system, record, judged, setup=None):
        return self.per_query_values(dataset, system, dict(record), not_scored(judged, record, {}, "not planted"),
                                     {"planted by": "tests/pipeline/study/test_further_tasks.py"})


def designed_config(folder, **changes) -> StudyConfig:
    files = write_collection(folder)
    data = load_collection("designed", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    return StudyConfig.of(data, retrievers=[f"designed-run={files['run.txt']}"],
                          generators=[f"designed-answers={files['answers.jsonl']}"],
                          judges=[f"designed-judge={files['judge.txt']}"], setups=("binary",), encoder="minilm",
                          **changes)


def test_a_fourth_task_is_run_stored_read_back_and_paired(cache, tmp_path):
    logged = []
    study = run_study(designed_config(tmp_path / "c", further_tasks={"planted": ["oracle", "q1-first", "without-q3"]}),
                      progress=False, log=logged.append)
    stored = studies.load_study("designed", study.id)
    assert stored["configuration"]["further_tasks"] == {"planted": ["oracle", "q1-first", "without-q3"]}
    assert list(stored)[list(stored).index("judges") + 1] == "further_tasks"  # after the paper's sections
    back = StudyResult.from_dict(stored)
    assert back.to_dict() == stored and back.further_tasks == study.further_tasks  # read back as computed

    planted = read_tasks(back)["planted"]
    assert list(read_tasks(back)) == ["h2r", "h2g", "h2j", "planted"]
    assert (planted.task, planted.role, planted.quantile) == ("planted", "predictor", 0.25)
    assert [v.label for v in planted] == ["oracle", "q1-first", "without-q3"]
    assert planted.get("without-q3").excluded == {"q3": "not planted"}
    oracle = planted.get("oracle")
    assert oracle.values == PLANTED["oracle"] and oracle.excluded == {}
    assert (oracle.measure, oracle.higher_is, oracle.hard_is_top) == ("planted score", HARDER, True)
    assert oracle.provenance == {"planted by": "tests/pipeline/study/test_further_tasks.py"}
    assert oracle.convention == PlantedTask.convention
    assert stored["further_tasks"]["planted"]["systems"]["oracle"]["hard"] == ["q7", "q8"] \
        == list(oracle.hard_set(0.25).qids)

    # crossed into the configurations like the three tasks' systems
    base = "designed-run | designed-answers | designed-judge | binary"
    assert list(back.configurations) == [f"{base} | oracle", f"{base} | q1-first", f"{base} | without-q3"]
    # the common universe is the queries every task scores: without q3 when a system does not score it
    assert back.configurations[f"{base} | without-q3"].universe.n_common == 7
    assert back.configurations[f"{base} | without-q3"].universe.n_task["planted"] == 7
    assert view.find_configuration(back, "designed-run", "designed-answers", "designed-judge", "binary") \
        == f"{base} | oracle"
    config = back.configurations[f"{base} | oracle"]
    assert back.further_values(config.label)["planted"] == oracle
    assert config.hard_in_universe == {"h2r": ["q7", "q8"], "h2g": ["q6", "q8"], "h2j": ["q1", "q8"],
                                       "planted": ["q7", "q8"]}
    assert config.universe.n_task == {"h2r": 8, "h2g": 8, "h2j": 8, "planted": 8}
    # the paper's figures are those of the three sets alone (the planted task scores every query)
    three = {t: v.values for t, v in (("h2r", read_tasks(back)["h2r"].values[0]),
                                      ("h2g", read_tasks(back)["h2g"].values[0]),
                                      ("h2j", read_tasks(back)["h2j"].values[0]))}
    paper = combine("designed", {}, three, {}, 0.25).analysis
    assert {k: v for k, v in config.analysis.items() if k != "further_pairwise"} == paper
    assert "further_pairwise" not in paper and further_note(paper) is None

    pairs = {k: f["count"] for k, f in config.analysis["further_pairwise"].items()}
    assert pairs == {"h2r&planted": 2, "h2g&planted": 1, "h2j&planted": 1}
    other = back.configurations[f"{base} | q1-first"].analysis["further_pairwise"]
    assert {k: f["count"] for k, f in other.items()} == {"h2r&planted": 0, "h2g&planted": 0, "h2j&planted": 1}
    shown = view.pairwise_frame(config.analysis)
    # whole intersections in the one vocabulary (issue 33): "(incl. ...)" tells them from the Venn regions
    assert shown["pair"].tolist() == ["H2R ∩ H2G (incl. H2J)", "H2R ∩ H2J (incl. H2G)", "H2G ∩ H2J (incl. H2R)",
                                      "H2R ∩ PLANTED", "H2G ∩ PLANTED", "H2J ∩ PLANTED"]
    assert shown["overlap"].tolist() == [1, 1, 1, 2, 1, 1]
    assert shown["largest (ties marked)"].tolist() == [True, True, True, False, False, False]  # the paper's pairs
    exported = pairwise_table(config.analysis)
    assert exported["pair"].tolist() == shown["pair"].tolist() and exported["overlap"].tolist() == [1, 1, 1, 2, 1, 1]
    assert "paper's three sets (H2R, H2G, H2J)" in further_note(config.analysis) and "PLANTED" in further_note(
        config.analysis)
    assert any(line.startswith(f"[designed] study {study.id} stored: ") for line in logged)


def test_a_study_stored_before_further_tasks_reads_back_byte_for_byte(cache):
    text = FIXTURE.read_text(encoding="utf-8")
    fixture = json.loads(text)
    folder = studies.studies_dir("designed")
    folder.mkdir(parents=True)
    shutil.copy(FIXTURE, folder / f"{fixture['id']}.json")
    study = StudyResult.from_dict(studies.load_study("designed", fixture["id"]))
    assert json.dumps(study.to_dict(), ensure_ascii=False, indent=1) == text
    assert study.further_tasks == {} and list(read_tasks(study)) == ["h2r", "h2g", "h2j"]
    assert [c.components.further for c in study.configurations.values()] == [()] * 4
    assert all(further_note(c.analysis) is None for c in study.configurations.values())
    assert view.pairwise_frame(study.configurations[next(iter(study.configurations))].analysis)["pair"].tolist() \
        == ["H2R ∩ H2G (incl. H2J)", "H2R ∩ H2J (incl. H2G)", "H2G ∩ H2J (incl. H2R)"]


def test_a_three_task_configuration_stores_what_it_stored_before(tmp_path):
    """Same stored configuration, so the same id digest, as the fixture's (the study id's middle part)."""
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    asked = fixture["configuration"]
    data = load_collection("designed", qrels=write_collection(tmp_path / "c")["qrels.txt"])
    config = StudyConfig.of(data, retrievers=asked["retrievers"], generators=asked["generators"],
                            judges=asked["judges"], encoder="minilm")
    assert config.stored() == asked and "further_tasks" not in config.stored()
    assert fixture["id"].split("-")[1] == studies.configuration_digest(config.stored())
    assert [t.name for t in study_tasks(config)] == ["h2r", "h2g", "h2j"]


def test_further_tasks_are_named_by_their_registration(tmp_path):
    config = designed_config(tmp_path / "c", further_tasks={"planted": ["oracle"]})
    assert [t.name for t in study_tasks(config)] == ["h2r", "h2g", "h2j", "planted"]
    assert config.further_tasks == (("planted", ("oracle",)),) and config.further_systems("planted") == ("oracle",)
    with pytest.raises(ValueError, match="unknown failure task 'nope'; registered: .*planted"):
        study_tasks(config.replace(further_tasks={"nope": ["x"]}))
    with pytest.raises(ValueError, match="h2r is one of the study's own tasks: name its systems with "
                                         "StudyConfig.retrievers"):
        study_tasks(config.replace(further_tasks={"h2r": ["bm25"]}))
    with pytest.raises(ValueError, match="further task 'planted': name its systems as a non-empty list"):
        config.replace(further_tasks={"planted": []})
    with pytest.raises(ValueError, match="further tasks \\(planted\\) have no command-line option"):
        config.run_args()
    with pytest.raises(ValueError, match="further tasks \\(planted\\) run in a study"):
        failure_sets(config)
    with pytest.raises(ValueError, match="the task name 'planted' is taken by .*PlantedTask"):
        class Impostor(PlantedTask, name="planted"):
            pass
    assert TASK_REGISTRY["planted"] is PlantedTask
