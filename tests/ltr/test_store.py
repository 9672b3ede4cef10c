"""The run store: writer/reader round trips, resume truncation, stale-run reaping, concurrent writers."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.paths import PROJECT_ROOT
from ltr import store as ltr_store
from ltr.store.schema import STEP_SERIES_SELECT
from ltr.store import RunBusy, RunConfigMismatch, RunStore, UnknownRun, proc_start_time, run_is_live

CONFIG = {"data": "synthetic-mq2008", "fold": 1, "loss": "learndcg", "model": "mlp", "seed": 0, "lr": 0.001}


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "runs.sqlite") as s:
        yield s


def test_register_is_idempotent_and_refuses_a_different_config(store):
    assert store.register_run("r1", CONFIG, experiment="exp", total_epochs=3) == "pending"
    assert store.register_run("r1", dict(CONFIG)) == "pending"
    with pytest.raises(RunConfigMismatch, match="r1"):
        store.register_run("r1", {**CONFIG, "lr": 0.01})
    run = store.get_run("r1")
    assert run["config"] == CONFIG and run["experiment"] == "exp" and run["total_epochs"] == 3
    assert store.counts()["pending"] == 1 and sum(store.counts().values()) == 1
    with pytest.raises(UnknownRun):
        store.get_run("nope")
    assert store.find_run("nope") is None


def test_full_run_round_trip(store):
    store.register_run("r1", CONFIG)
    store.start_run("r1", device="cpu")
    assert store.get_run("r1")["status"] == "running"
    store.log_steps("r1", [(s, s // 5, {"loss": -0.1 * s, "theta_d": 0.5 + s}) for s in range(10)])
    store.log_epoch("r1", 0, {"ndcg@10": 0.4, "seconds": 1.5})
    store.log_epoch("r1", 1, {"ndcg@10": 0.5, "seconds": 1.4})
    per_query = {f"ndcg@{k}": {"q1": 0.1 * k, "q2": float("nan")} for k in (1, 3, 5, 10)}
    store.finish_run("r1", test_means={"ndcg@1": 0.2, "ndcg@3": 0.3, "ndcg@5": 0.4, "ndcg@10": 0.5},
                     per_query=per_query, train_seconds=3.0, pretrain_seconds=None, best_epoch=1)
    run = store.get_run("r1")
    assert (run["status"], run["epochs_done"], run["best_epoch"], run["test_ndcg10"]) == ("completed", 2, 1, 0.5)
    steps = store.step_series(["r1"], ["theta_d"])
    assert steps["step"].tolist() == list(range(10)) and steps["value"].tolist() == [0.5 + s for s in range(10)]
    assert store.step_metric_names("r1") == ["loss", "theta_d"]
    epochs = store.epoch_series(["r1"], ["ndcg@10"])
    assert epochs["value"].tolist() == [0.4, 0.5]
    pq = store.per_query(["r1"], "ndcg@3")
    assert pq["qid"].tolist() == ["q1", "q2"]
    assert pq["value"].iloc[0] == pytest.approx(0.3) and np.isnan(pq["value"].iloc[1])  # NaN stored as NULL
    assert store.list_runs(status="completed", fold=[1, 2])["run_id"].tolist() == ["r1"]
    assert store.list_runs(loss=[]).empty and store.list_runs(model="attsets").empty
    assert store.list_runs(with_config=True)["config"].iloc[0] == CONFIG


def test_truncate_after_forgets_the_lost_part_of_a_killed_run(store):
    store.register_run("r1", CONFIG)
    store.start_run("r1", device="cpu")
    store.log_steps("r1", [(s, s // 4, {"loss": float(s)}) for s in range(10)])
    for e in range(3):
        store.log_epoch("r1", e, {"ndcg@10": 0.1 * e})
    store.truncate_after("r1", step=8, epoch=2)
    assert store.step_series(["r1"], ["loss"])["step"].max() == 7
    assert store.epoch_series(["r1"])["epoch"].tolist() == [0, 1]
    assert store.get_run("r1")["epochs_done"] == 2
    # Re-logging a step after a resume replaces it instead of duplicating it.
    store.log_steps("r1", [(8, 2, {"loss": 80.0}), (7, 1, {"loss": 70.0})])
    assert store.step_series(["r1"], ["loss"])["value"].tolist()[-2:] == [70.0, 80.0]


def test_step_series_is_downsampled_keeping_first_and_last(store):
    store.register_run("r1", CONFIG)
    store.log_steps("r1", [(s, 0, {"loss": float(s)}) for s in range(1000)])
    series = store.step_series(["r1"], ["loss"], max_points=50)
    assert len(series) <= 50 and series["step"].iloc[0] == 0 and series["step"].iloc[-1] == 999
    assert np.all(np.diff(series["step"]) > 0)
    assert store.step_series(["r1"], ["loss"], max_points=2000)["step"].tolist() == list(range(1000))  # short: all


def test_live_series_reads_incrementally_and_matches_a_fresh_read(store, tmp_path):
    """Charts redrawn while a run logs: each call reads only what is new, and what it returns is what
    a fresh store would return (grid points plus the last row, at most max_points)."""
    store.register_run("r1", CONFIG)
    calls = []
    store.conn.set_trace_callback(calls.append)
    for end in (300, 1700, 1750, 5000):
        start = 0 if end == 300 else previous
        store.log_steps("r1", [(s, s // 100, {"loss": float(s)}) for s in range(start, end)])
        previous = end
        calls.clear()
        live = store.live_step_series(["r1"], ["loss"], max_points=400)
        with RunStore(tmp_path / "runs.sqlite") as fresh:
            cold = fresh.live_step_series(["r1"], ["loss"], max_points=400)
        assert live.equals(cold), end
        steps = live["step"].tolist()
        assert len(steps) <= 400 and steps[0] == 0 and steps[-1] == end - 1 and np.all(np.diff(steps) > 0)
        assert live["value"].tolist() == [float(s) for s in steps]
    # 1750 kept the stride of 1700 (ceil(1750 / 400) == 5): only the new grid points were read.
    store.log_steps("r1", [(s, 50, {"loss": float(s)}) for s in range(5000, 5010)])
    calls.clear()
    assert store.live_step_series(["r1"], ["loss"], max_points=400)["step"].iloc[-1] == 5009
    assert sum("WITH RECURSIVE" in c for c in calls) == 2  # new grid points + the tail, not the whole series


def test_fail_delete_and_reap(store):
    for rid in ("dead", "alive", "silent"):
        store.register_run(rid, {**CONFIG, "seed": len(rid)})
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    store.start_run("dead", device="cpu", pid=finished.pid)  # a pid that no longer exists
    store.start_run("alive", device="cpu")  # this test process: alive
    store.start_run("silent", device="cpu")  # this process too, but its heartbeat is late (a loaded machine)
    store.conn.execute("UPDATE runs SET heartbeat = heartbeat - 1000 WHERE run_id = 'silent'")
    assert run_is_live(store.get_run("alive")) and not run_is_live(store.get_run("dead"))
    assert run_is_live(store.get_run("silent"))  # alive and the same process: live, however late its heartbeat
    assert store.reap_stale_runs() == ["dead"]
    dead = store.get_run("dead")
    assert dead["status"] == "failed" and "died" in dead["error"]
    assert store.get_run("alive")["status"] == "running" and store.get_run("silent")["status"] == "running"
    with pytest.raises(RunBusy, match="alive"):  # a second trainer cannot claim a live run
        store.start_run("alive", device="cpu", pid=finished.pid)
    store.start_run("dead", device="cpu")  # a dead one can be resumed by anyone
    assert store.fail_run("alive", "SIGTERM", status="cancelled")
    assert store.get_run("alive")["status"] == "cancelled"
    # only_running (a Ray driver marking a cancelled task's run) leaves a run that is no longer running alone
    assert not store.fail_run("alive", "driver", status="cancelled", only_running=True)
    assert store.get_run("alive")["error"] == "SIGTERM"
    store.fail_run("dead", "boom")
    store.log_epoch("dead", 0, {"ndcg@10": 0.3})
    assert store.delete_run("dead") and not store.delete_run("dead")
    assert store.epoch_series(["dead"]).empty and store.find_run("dead") is None


_WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from ltr.store import RunStore
    path, run_id, other, n, chunk = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])

    def checkpoint(k):
        # Neither writer passes checkpoint k before the other has reached it: a file each, both wait.
        Path(f"{path}.{run_id}.{k}").touch()
        deadline = time.monotonic() + 120
        while not Path(f"{path}.{other}.{k}").exists():
            if time.monotonic() > deadline:
                sys.exit(f"{run_id}: {other} never reached checkpoint {k}")
            time.sleep(0.001)

    store = RunStore(path)
    store.register_run(run_id, {"data": "d", "fold": 1, "loss": run_id, "model": "mlp", "seed": 0})
    store.start_run(run_id, device="cpu")
    for step in range(n):
        if step % chunk == 0:
            checkpoint(step // chunk)  # the first: both runs started before either writes a step
        store.log_steps(run_id, [(step, step // 10, {"loss": float(step), "theta_d": -float(step)})])
        if step % 10 == 9:
            store.log_epoch(run_id, step // 10, {"ndcg@10": step / n})
    checkpoint(n // chunk)  # both wrote every step before either finishes
    store.finish_run(run_id, test_means={"ndcg@10": 0.5}, per_query={"ndcg@10": {str(q): q / n for q in range(n)}},
                     train_seconds=1.0)
""")


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    """Two writer processes in lockstep: each writes its steps in chunks and waits at every chunk's end
    for the other, so their transactions interleave (both runs started before either finishes) by
    construction, however the machine schedules them; a reader polls meanwhile."""
    path, n, chunk = tmp_path / "runs.sqlite", 2000, 100
    RunStore(path).close()
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), rid, other, str(n), str(chunk)],
                              cwd=PROJECT_ROOT, stderr=subprocess.PIPE, text=True)
             for rid, other in (("a", "b"), ("b", "a"))]
    # A reader polling meanwhile never blocks the writers (WAL) and never sees an error.
    with RunStore(path) as reader:
        while any(p.poll() is None for p in procs):
            reader.list_runs()
            reader.step_series(["a", "b"], ["loss"])
            time.sleep(0.01)
        for p in procs:
            assert p.wait() == 0, p.stderr.read()
        a, b = reader.get_run("a"), reader.get_run("b")
        assert a["started"] < b["finished"] and b["started"] < a["finished"]  # holds by construction
        for rid in ("a", "b"):
            assert reader.get_run(rid)["status"] == "completed"
            steps = reader.step_series([rid], ["loss", "theta_d"], max_points=10 * n)
            assert len(steps) == 2 * n
            assert sorted(steps[steps.name == "loss"]["step"]) == list(range(n))
            assert len(reader.epoch_series([rid])) == n // 10
            assert len(reader.per_query([rid])) == n


def test_reaping_checks_the_same_process_not_the_heartbeat(store):
    """A live local trainer is never reaped, whatever its heartbeat; a reused pid is not the trainer;
    a run of another host is judged by its heartbeat."""
    for rid in ("live-late", "reused", "remote-silent", "remote-recent"):
        store.register_run(rid, {**CONFIG, "seed": len(rid) + 100})
        store.start_run(rid, device="cpu")
    assert store.get_run("live-late")["pid_started"] == proc_start_time(os.getpid())
    store.conn.execute("UPDATE runs SET heartbeat = heartbeat - 86400 WHERE run_id = 'live-late'")
    # the pid exists (this process) but started at another time: another process got the trainer's pid
    store.conn.execute("UPDATE runs SET pid_started = '1' WHERE run_id = 'reused'")
    store.conn.execute("UPDATE runs SET host = 'elsewhere' WHERE run_id LIKE 'remote-%'")
    store.conn.execute("UPDATE runs SET heartbeat = heartbeat - 1000 WHERE run_id = 'remote-silent'")
    assert sorted(store.reap_stale_runs()) == ["remote-silent", "reused"]
    assert store.get_run("live-late")["status"] == "running" and store.get_run("remote-recent")["status"] == "running"
    assert "no heartbeat from elsewhere" in store.get_run("remote-silent")["error"]
    assert store.get_run("live-late")["load_at_start"] is not None


def test_listing_runs_never_changes_state(store, capsys):
    from ltr.cli import main

    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    store.register_run("dead", CONFIG)
    store.start_run("dead", device="cpu", pid=finished.pid)
    before = store.get_run("dead")
    assert main(["runs", "--store", str(store.path)]) == 0
    assert "running (dead)" in capsys.readouterr().out
    assert store.get_run("dead") == before  # still running in the store: listing is read only


def test_store_created_before_the_new_columns_gets_them(tmp_path):
    import sqlite3

    old = tmp_path / "old.sqlite"
    conn = sqlite3.connect(old)
    conn.executescript(ltr_store.SCHEMA.migrations[0].step)  # the first release's tables
    conn.close()
    assert "pid_started" not in {r[1] for r in sqlite3.connect(old).execute("PRAGMA table_info(runs)")}
    with RunStore(old) as s:
        s.register_run("r", CONFIG)
        s.start_run("r", device="cpu", threads=3)
        assert s.get_run("r")["pid_started"] == proc_start_time(os.getpid())
        assert s.get_run("r")["threads"] == 3


_SUMMARY_COLUMNS = ["run_id", "name", "n", "first_step", "last_step", "first_value", "last_value", "negative",
                    "zero", "positive"]


def assert_summary_matches_rows(store: RunStore, run_id: str) -> None:
    """The write path's step_series rows equal the summaries aggregated from every step row."""

    sql = STEP_SERIES_SELECT.format(where="run_id = ?")
    order = ["run_id", "name", "n", "first_step", "first_value", "last_step", "last_value", "negative", "zero",
             "positive"]
    expected = pd.DataFrame([dict(zip(order, r)) for r in store.conn.execute(sql, (run_id,))], columns=order)
    expected = expected[_SUMMARY_COLUMNS].sort_values("name", ignore_index=True)
    stored = store.step_summary([run_id], ["loss", "theta_d", "grad"])
    assert not stored.empty
    pd.testing.assert_frame_equal(stored, expected, check_dtype=False)


def test_step_series_summary_follows_appends_resumes_and_relogged_steps(store):
    """The write path's per-series summary equals one aggregated from the step rows after appends in
    several batches, a NaN value, a truncation (resume) with a different continuation, a batch that
    re-logs stored steps without truncating, and a batch holding one step twice."""
    rng = np.random.default_rng(3)
    store.register_run("r", CONFIG)

    def batch(start, stop):
        return [(s, s // 10, {"loss": float(v[0]), "theta_d": float(v[1]), "grad": float(np.sign(v[2]))})
                for s, v in zip(range(start, stop), rng.normal(size=(stop - start, 3)))]

    store.log_steps("r", batch(0, 25))
    store.log_steps("r", batch(25, 40) + [(40, 4, {"loss": float("nan"), "grad": 0.0})])
    assert_summary_matches_rows(store, "r")
    loss = store.step_summary(["r"], ["loss"]).iloc[0]
    assert loss["n"] == 41 and loss["first_step"] == 0 and loss["last_step"] == 40 and pd.isna(loss["last_value"])
    grad = store.step_summary(["r"], ["grad"]).iloc[0]
    assert grad["negative"] + grad["zero"] + grad["positive"] == 41 and grad["zero"] >= 1

    store.truncate_after("r", step=30, epoch=3)  # resumed from a checkpoint at step 30
    assert store.step_summary(["r"], ["loss"]).iloc[0]["last_step"] == 29
    assert_summary_matches_rows(store, "r")
    store.log_steps("r", batch(30, 50))
    store.log_steps("r", batch(45, 55))  # re-logs steps 45-49 without a truncation
    store.log_steps("r", [(55, 5, {"loss": -1.0}), (55, 5, {"loss": 2.0})])  # the same step twice
    assert_summary_matches_rows(store, "r")
    assert store.step_summary(["r"], ["loss"]).iloc[0]["last_value"] == 2.0
    store.delete_run("r")
    assert store.step_summary(["r"], ["loss"]).empty


def test_store_created_before_step_series_gets_it_filled(tmp_path):
    """A store written by the previous schema (no step_series) gets its summaries on first open."""
    import sqlite3

    old = tmp_path / "old.sqlite"
    conn = sqlite3.connect(old)
    conn.executescript(ltr_store.SCHEMA.migrations[0].step)  # the first release's tables, no step_series
    conn.executemany("INSERT INTO step_metrics VALUES (?, ?, ?, ?, ?)",
                     [("r", "theta_d", s, 0, 0.5 - 0.1 * s) for s in range(10)])
    conn.commit()
    conn.close()
    with RunStore(old) as s:
        row = s.step_summary(["r"], ["theta_d"]).iloc[0]
        assert (row["n"], row["first_step"], row["last_step"]) == (10, 0, 9)
        assert (row["positive"], row["zero"], row["negative"]) == (5, 1, 4)
        assert row["first_value"] == 0.5 and row["last_value"] == pytest.approx(-0.4)


def test_step_summary_is_never_stale_when_rows_bypass_the_write_path(store):
    """Step rows written past the summary (a trainer of an older version still running after the
    upgrade: it writes step_metrics only) are aggregated on read: appended rows, and a resume that
    re-logs the same last step with other values."""
    store.register_run("r", CONFIG)
    store.log_steps("r", [(s, 0, {"theta_d": 1.0 + s}) for s in range(10)])
    conn = store.conn
    conn.executemany("INSERT INTO step_metrics VALUES ('r', 'theta_d', ?, 0, ?)", [(s, -1.0) for s in range(10, 15)])
    row = store.step_summary(["r"], ["theta_d"]).iloc[0]
    assert (row["n"], row["last_step"], row["last_value"], row["negative"], row["positive"]) == (15, 14, -1.0, 5, 10)
    conn.execute("DELETE FROM step_metrics WHERE run_id = 'r' AND step >= 12")
    conn.executemany("INSERT INTO step_metrics VALUES ('r', 'theta_d', ?, 0, ?)", [(s, 0.0) for s in range(12, 15)])
    row = store.step_summary(["r"], ["theta_d"]).iloc[0]
    assert (row["n"], row["last_step"], row["last_value"], row["zero"], row["negative"]) == (15, 14, 0.0, 3, 2)
    assert store.step_summary(["r", "absent"], ["theta_d", "nothing"])["name"].tolist() == ["theta_d"]


_OPENER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from ltr.store import RunStore
    path = sys.argv[1]
    Path(path + "." + sys.argv[2] + ".ready").touch()
    while not Path(path + ".go").exists():  # every opener starts together
        time.sleep(0.0005)
    with RunStore(path) as store:
        store.register_run(sys.argv[2], {"data": "d", "fold": 1, "loss": "l", "model": "m", "seed": 0})
""")


def test_processes_creating_one_new_store_at_once_all_open_it(tmp_path):
    """A Ray driver and a page opening a store file that does not exist yet raced for SQLite's switch
    to WAL, and the loser got "database is locked" at once (seen in CI). Eight processes now create
    the same new file together: every one opens it and writes its run."""
    path, names = tmp_path / "new.sqlite", [f"p{i}" for i in range(8)]
    procs = [subprocess.Popen([sys.executable, "-c", _OPENER, str(path), name], cwd=PROJECT_ROOT,
                              stderr=subprocess.PIPE, text=True) for name in names]
    deadline = time.monotonic() + 120
    while not all(Path(f"{path}.{n}.ready").exists() for n in names) and time.monotonic() < deadline:
        time.sleep(0.005)
    Path(f"{path}.go").touch()
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    with RunStore(path) as store:
        assert sorted(store.list_runs()["run_id"]) == names
