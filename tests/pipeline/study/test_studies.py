"""Failure studies are kept, not replaced (issue 19 item 2), a failing step stops the run and stores
nothing (item 4), and a study job reports its progress in words (item 6).

The designed collection of ``tests.support.failure_fixture`` (real MiniLM BERTScore); the dead host is a real
closed localhost port, no mock."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core.jobs import progress as job_progress
from pipeline import cli
from pipeline.study import store as studies
from pipeline.study.config import load_collection
from pipeline.study.run import run_study
from pipeline.llm.base import LLMError
from tests.support.failure_fixture import run_designed_study, write_collection
from tests.support.paths import ROOT


def _cli_json(capsys, argv):
    assert cli.main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_two_runs_are_two_studies_listed_newest_first(cache, tmp_path, capsys):
    first = run_designed_study(tmp_path / "a")
    second = run_designed_study(tmp_path / "b")
    assert first["id"] != second["id"] and studies.STUDY_ID.match(first["id"])
    listed = studies.list_studies("designed")
    assert [s["id"] for s in listed] == [second["id"], first["id"]] or (
        first["time"] == second["time"] and {s["id"] for s in listed} == {first["id"], second["id"]})
    # both kept whole: the first is still readable after the second run
    assert studies.load_study("designed", first["id"])["configurations"] == first["configurations"]
    assert first["configuration"]["judges"][0].startswith("designed-judge=")
    # the CLI contract that checks outside the suite call
    out = _cli_json(capsys, ["studies", "--dataset", "designed", "--json"])
    assert {s["id"] for s in out["studies"]} == {first["id"], second["id"]}
    for entry in out["studies"]:
        assert {"id", "configuration", "time"} <= set(entry) and entry["time"].endswith("Z")
        assert entry["configuration"]["setups"] == ["binary", "graded"]
    # delete is explicit: one study goes, the other stays
    _cli_json(capsys, ["studies", "--dataset", "designed", "--delete", first["id"], "--json"])
    assert [s["id"] for s in studies.list_studies("designed")] == [second["id"]]
    assert cli.main(["studies", "--dataset", "designed", "--delete", first["id"]]) == 2  # bad input (core.cli)
    assert f"no study {first['id']}" in capsys.readouterr().err


def test_studies_command_as_a_process(cache, tmp_path):
    study = run_designed_study(tmp_path / "a")
    result = subprocess.run([sys.executable, "-m", "pipeline", "studies", "--dataset", "designed", "--json"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    (entry,) = json.loads(result.stdout)["studies"]
    assert entry["id"] == study["id"] and entry["configuration"] == study["configuration"]
    # --data keeps only the studies computed from that folder (this one had none)
    result = subprocess.run([sys.executable, "-m", "pipeline", "studies", "--dataset", "designed", "--data",
                             str(tmp_path), "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert json.loads(result.stdout)["studies"] == []


def test_a_legacy_study_json_is_migrated_without_loss(cache, tmp_path):
    study = run_designed_study(tmp_path / "a")
    legacy = {k: v for k, v in study.items() if k not in ("id", "configuration", "time", "finished")}
    studies.delete_study("designed", study["id"])
    path = cache / "failure" / "designed" / "study.json"
    path.write_text(json.dumps(legacy))
    written = path.stat().st_mtime_ns
    assert studies.study_datasets() == ["designed"]
    (entry,) = studies.list_studies("designed")
    assert not path.exists()
    migrated = studies.load_study("designed", entry["id"])
    assert migrated["configurations"] == legacy["configurations"] and migrated["migrated_from"] == str(path)
    assert entry["configuration"]["retrievers"] == ["designed-run"]
    # a second migration of the same file (a crash before the unlink: same content, same modification
    # time) writes the same id again; rewriting the file here takes a new mtime, so the old one is put back
    # (without it the test failed whenever the two writes fell in different seconds)
    path.write_text(json.dumps(legacy))
    os.utime(path, ns=(written, written))
    assert [s["id"] for s in studies.list_studies("designed")] == [entry["id"]]


def test_a_stored_study_reads_back_as_its_type_unchanged(cache, tmp_path):
    """Issue 20: the study result type's JSON form is the study file: dict -> StudyResult -> dict is
    the stored dict, written in the same bytes (the CLI's --json prints it), and the fields say which
    of a retriever's two H2R sets is the study's (over the configuration's universe)."""
    from pipeline.study.result import StudyResult

    study = run_designed_study(tmp_path / "a")
    path = studies.study_path("designed", study["id"])
    stored = json.loads(path.read_text(encoding="utf-8"))
    typed = StudyResult.from_dict(stored)
    assert typed.to_dict() == stored == study
    assert json.dumps(typed.to_dict(), ensure_ascii=False, indent=1) == path.read_text(encoding="utf-8")
    label = "designed-run | designed-answers | designed-judge | graded"
    config = typed.configurations[label]
    assert config.hard_in_universe == stored["configurations"][label]["sets"]
    assert config.hard_in_universe_rule["h2r"].to_dict() == stored["configurations"][label]["set_info"]["h2r"]
    assert typed.retriever(label).hard_all_queries == stored["retrievers"]["designed-run"]["h2r"]
    # a study stored before grades and the tie rule (no relevant_grades, set_info, *_set) still reads
    legacy = json.loads(path.read_text(encoding="utf-8"))
    del legacy["relevant_grades"], legacy["configurations"][label]["set_info"]
    for per in (legacy["retrievers"], legacy["generators"]):
        for entry in per.values():
            entry.pop("h2r_set", None), entry.pop("h2g_set", None)
    old = StudyResult.from_dict(legacy)
    assert old.relevant_grades is None and old.configurations[label].hard_in_universe_rule is None
    assert old.retriever(label).hard_all_queries_rule is None and "relevant_grades" not in old.to_dict()


def test_the_run_command_prints_and_writes_the_stored_study(cache, tmp_path, capsys):
    """``run --json`` and ``--out`` give the stored study's JSON form; the text output reads its fields."""
    files = write_collection(tmp_path / "c")
    args = ["run", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]), "--passages",
            str(files["passages.tsv"]), "--retriever", f"r={files['run.txt']}", "--generator",
            f"g={files['answers.jsonl']}", "--judge", f"j={files['judge.txt']}", "--encoder", "minilm"]
    out = _cli_json(capsys, [*args, "--json", "--out", str(tmp_path / "out.json")])
    stored = studies.load_study(out["dataset"], out["id"])
    assert out == stored and json.loads((tmp_path / "out.json").read_text(encoding="utf-8")) == stored
    assert cli.main(args) == 0
    captured = capsys.readouterr()
    text = captured.out
    # the same command again: the stored study, nothing new stored (one study per configuration and inputs)
    assert f"the same as stored study {out['id']}" in captured.err
    assert [s["id"] for s in studies.list_studies(out["dataset"])] == [out["id"]]
    # an imported model's size is unknown without a models.tsv row or --model-size, and the line says what that means
    assert ("generator g: imported:g, unknown size: a model of unknown size (state it to count its output); "
            "BERTScore all-MiniLM-L6-v2") in text and "judge j: imported:j, unknown size" in text
    assert "r | g | j | binary: all three 12.5%; exclusive h2r 50%, h2g 50%, h2j 50%; largest pair" in text


def test_bad_study_ids_are_refused(cache):
    with pytest.raises(studies.StudyError, match="not a study id"):
        studies.load_study("designed", "../../etc/passwd")


def test_a_dead_generator_stops_the_study_and_stores_nothing(cache, tmp_path):
    files = write_collection(tmp_path / "c")
    data = load_collection("designed", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    study_id = studies.new_study_id({"test": 1})
    with pytest.raises(LLMError) as err:  # whichever LLM error the backend raises (LLMUnavailable today)
        run_study(data, retrievers=[f"r={files['run.txt']}"], generators=["ollama:llama3.2:3b@http://127.0.0.1:9"],
                  judges=[f"j={files['judge.txt']}"], encoder="minilm", progress=False, log=lambda m: None,
                  llm_options={"timeout": 5, "retries": 0}, study_id=study_id, progress_key=study_id)
    assert "127.0.0.1:9" in str(err.value)
    assert studies.list_studies("designed") == []
    assert not list((cache / "failure" / "designed").glob("generations/*.json"))  # no empty answers file
    record = job_progress.read_progress(study_id)
    # stopped in stage 2 of 6 (retriever; answers; BERTScore; binary and graded judgments; overlap)
    assert record["status"] == "failed" and record["stage_index"] == 2 and record["stages"] == 1 + 2 + 2 + 1
    assert record["stage"].startswith("answers of ollama:llama3.2:3b") and "127.0.0.1:9" in record["error"]
    assert "failed: " in job_progress.describe(record)


def test_an_llm_judge_that_labels_nothing_stops_the_study(cache, tmp_path):
    """An LLM judge whose every call fails without the server being unreachable (the loopback server's
    ``empty`` model: every reply empty, each recorded as a failed call) stops the run at that step:
    before, the study went on with an empty H2J set."""
    from pipeline.study.task import StudyStepError
    from tests.support.loopback_llm import LoopbackLLMServer

    files = write_collection(tmp_path / "c")
    data = load_collection("designed", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    with LoopbackLLMServer() as server:
        with pytest.raises(StudyStepError, match=r"answered none of 16 pairs; last error: .*empty"):
            run_study(data, retrievers=[f"r={files['run.txt']}"], generators=[f"g={files['answers.jsonl']}"],
                      judges=[f"ollama:empty@{server.url}"], setups=("binary",), encoder="minilm", progress=False,
                      log=lambda m: None, llm_options={"timeout": 5, "retries": 0})
    assert studies.list_studies("designed") == []


def test_progress_in_words_hand_computed():
    record = {"status": "running", "stage": "binary judgments of llama", "stage_index": 3, "stages": 7,
              "done": 12, "total": 43, "unit": "pair", "stage_started": 1000.0, "updated": 1008.0}
    # 12 pairs in 8 s = 1.5 pairs/s; 31 left / 1.5 = 20.7 s
    assert job_progress.describe(record) == ("stage 3 of 7: binary judgments of llama · 12/43 pairs · "
                                             "1.50 pairs/s · about 21 s left in this stage")
    assert job_progress.duration(3725) == "1 h 02 min" and job_progress.duration(65) == "1 min 05 s"


def test_progress_writer_records_stages(cache):
    writer = job_progress.ProgressWriter("k1", stages=2, interval=0)
    writer.stage("answers", 4, "answer")
    writer.advance(3)
    record = job_progress.read_progress("k1")
    assert (record["stage_index"], record["done"], record["total"], record["status"]) == (1, 3, 4, "running")
    writer.finish()
    assert job_progress.read_progress("k1")["status"] == "completed"
    with pytest.raises(ValueError):
        job_progress.progress_path("../x")


def test_job_fraction_counts_finished_stages_and_the_current_share(cache):
    from types import SimpleNamespace

    from pipeline.views import failure_overlap as overlap_view

    writer = job_progress.ProgressWriter("k2", stages=4, interval=0)
    writer.stage("retriever", 0)
    writer.stage("answers", 10, "answer")
    writer.advance(5)
    job = SimpleNamespace(meta={"progress": "k2"})
    assert overlap_view.job_fraction(job) == pytest.approx((1 + 0.5) / 4)  # one stage done, half of the second


def test_a_failed_study_job_row_shows_the_error_line_not_the_exit_code(tmp_path, monkeypatch):
    """Item 4: a study job whose generator cannot be reached fails at that step (no judging after it),
    and its row says why. A real job through the real worker; the host is a closed localhost port."""
    from tests.support.waiting import wait_for_job_status

    from core import jobs
    from pipeline.views import failure_overlap as overlap_view

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(jobs.LIMITS_ENV, raising=False)
    files = write_collection(tmp_path / "c")
    study_id = studies.new_study_id({"t": 2})
    command = [sys.executable, "-m", "pipeline", "run", "--qrels", str(files["qrels.txt"]), "--topics",
               str(files["topics.tsv"]), "--passages", str(files["passages.tsv"]), "--retriever",
               f"r={files['run.txt']}", "--generator", "ollama:llama3.2:3b@http://127.0.0.1:9", "--judge",
               f"j={files['judge.txt']}", "--encoder", "minilm", "--timeout", "5", "--retries", "0",
               "--study-id", study_id]
    job_id = jobs.submit(command, label="failure study on designed",
                         meta={"kind": overlap_view.STUDY.name, "dataset": "qrels", "study_id": study_id,
                               "progress": study_id})
    try:
        job = wait_for_job_status(job_id, ("completed", "failed"), timeout=240)
    finally:
        info = jobs.worker_info()
        if info and info["alive"]:
            import os
            import signal
            os.kill(info["pid"], signal.SIGKILL)
    assert job.status == "failed"
    row = overlap_view.jobs_frame([job]).iloc[0]
    assert row["progress"].startswith("error: ") and "127.0.0.1:9" in row["progress"]
    assert "connection refused" in row["progress"]
    assert "[job runner]" not in row["progress"] and row["study"] == ""
    assert "judgments" not in job.log_tail  # it stopped at the failed step
    assert studies.list_studies("qrels") == []


def test_a_queued_typology_job_says_why_it_waits(tmp_path, monkeypatch):
    """Item 6: every failure page's jobs table gives a queued job's reason (here the typology page's)."""
    from core import jobs
    from pipeline.views import failure_typology as typology_view

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0")
    job_id = jobs.submit([sys.executable, "-c", "pass"], label="typology h2r on dl19",
                         meta={"kind": typology_view.TYPOLOGY.name}, start_worker=False)
    (row,) = typology_view.jobs_rows(jobs.list_jobs())
    assert row["job"] == job_id and row["status"] == "queued" and "the cpu limit is 0" in row["message"]
    jobs.cancel(job_id)
