"""A run store written by the code before the versioned migrations (main at 20028e0,
``tests/fixtures/old_stores/``) opens with the current code: every row reads back as before, the
readers answer as they did, it is adopted at its version once, and new runs are written to it."""
from __future__ import annotations

import pytest

from ltr.store import RunStore, ndcg_per_query
from tests.support.old_stores import copy_old_store, rows_as_before, versions


def test_an_old_run_store_reads_back_identically_and_takes_new_runs(tmp_path):
    path = copy_old_store("runs.sqlite", tmp_path)
    with RunStore(path) as store:
        rows_as_before(path, "runs.sqlite")
        done = store.get_run("run-done")
        assert (done["status"], done["test_ndcg10"], done["threads"], done["best_epoch"]) == ("completed", 0.45, 2, 1)
        assert done["config"] == {"data": "mq2008", "fold": 1, "loss": "learndcg", "model": "mlp", "seed": 0}
        assert store.get_run("run-failed")["error"] == "RuntimeError: boom"
        assert store.counts() == {"pending": 1, "running": 0, "completed": 1, "failed": 1, "cancelled": 0}
        assert list(store.step_series(["run-done"], ["loss"])["step"]) == list(range(10))
        summary = store.step_summary(["run-done"], ["theta_d"]).iloc[0]
        assert (summary["n"], summary["first_value"], summary["last_step"]) == (10, 0.5, 9)
        per_query = ndcg_per_query(store, ["run-done"], 10)
        assert dict(zip(per_query["qid"], per_query["value"])) == {"q1": 0.5, "q2": 0.4}
        assert list(store.epoch_series(["run-done"], ["val_ndcg@10"])["value"]) == [0.41, 0.44]

        store.register_run("run-new", {"data": "mq2008", "fold": 3, "loss": "listnet", "model": "mlp"})
        store.start_run("run-new", device="cpu", threads=1)
        store.log_steps("run-new", [(0, 0, {"loss": 2.0}), (1, 0, {"loss": 1.0})])
        store.finish_run("run-new", test_means={"ndcg@10": 0.5}, per_query={}, train_seconds=1.0)
        assert store.get_run("run-new")["status"] == "completed"
        assert store.step_summary(["run-new"], ["loss"]).iloc[0]["n"] == 2
    # adopted at 3 (what it holds), then migrations 4 (pretrain_paid, pretrain_key) and 5 (code_commit,
    # code_dirty), empty on its rows
    assert [(s, v) for s, v, _ in versions(path)] == [("runs", 3), ("runs", 4), ("runs", 5)]
    with RunStore(path) as again:  # opened again: nothing migrates twice
        assert len(again.list_runs()) == 4
    assert len(versions(path)) == 3


@pytest.mark.parametrize("missing", ["threads", "step_series"])
def test_an_older_run_store_is_adopted_below_the_change_it_lacks(tmp_path, missing):
    """A store of an older release (without the liveness/threads columns, or without step_series)
    gets exactly the migrations it lacks, and keeps its rows."""
    import sqlite3

    path = copy_old_store("runs.sqlite", tmp_path)
    conn = sqlite3.connect(path)
    if missing == "threads":
        conn.execute("ALTER TABLE runs DROP COLUMN threads")
    else:
        conn.execute("DROP TABLE step_series")
    conn.commit()
    conn.close()
    with RunStore(path) as store:
        if missing == "step_series":
            rows_as_before(path, "runs.sqlite")  # the summaries filled from the step rows equal those it had
        assert store.step_summary(["run-done"], ["loss"]).iloc[0]["n"] == 10
        assert store.get_run("run-done")["threads"] == (None if missing == "threads" else 2)
    assert [v for _, v, _ in versions(path)] == ([1, 2, 3, 4, 5] if missing == "threads" else [2, 3, 4, 5])
