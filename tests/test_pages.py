"""Every dashboard page under streamlit's AppTest: empty store, a store with runs, failed runs and jobs."""
from __future__ import annotations

import base64
import json
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import jobs
from ltr import views
from ltr.store import RunStore

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 60
DATA, MODEL, FOLDS = "synthetic-mq2008", "mlp", (1, 2, 3)
LOSSES = ("approxndcg", "neuralloss", "learndcg")
HOSTILE = "<script>alert('x')</script> <b>not bold</b>"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private cache (run store, jobs) per test; jobs and the worker it may start are ended after."""
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    # Nothing may start here, on the CPU or any GPU: jobs a page submits stay queued (the job runner
    # has its own tests).
    monkeypatch.setenv(jobs.LIMITS_ENV, ",".join(["cpu=0"] + [f"cuda:{i}=0" for i in range(views.gpu_count())]))
    yield tmp_path
    for job in jobs.list_jobs(status=jobs.ACTIVE_STATUSES):
        jobs.cancel(job.id)
    # A worker started by the page may not have checked in yet: give it a moment, then end it.
    deadline = time.monotonic() + (5 if jobs.list_jobs(limit=None) else 0)
    while True:
        info = jobs.worker_info()
        if info and info["alive"]:
            try:
                os.kill(info["pid"], signal.SIGKILL)
            except ProcessLookupError:  # the row is from an earlier worker; the live one exits when idle
                pass
            break
        if time.monotonic() >= deadline:
            break
        time.sleep(0.1)


def _config(fold, loss, **over):
    cfg = {"data": DATA, "fold": fold, "loss": loss, "model": MODEL, "epochs": 4, "lr": 0.001, "loss_lr": 0.001,
           "batch_size": 64, "slate_length": None, "patience": 10, "seed": 0, "loss_params": {}, "model_params": {},
           "data_signature": {"n_features": 46, "train_queries": 30 + fold}}
    cfg.update(over)
    return cfg


def _seed(path: Path, *, steps_per_run: int = 50) -> dict[str, str]:
    """Completed runs of three losses x three folds (LearnDCG clearly best), plus one failed run."""
    rng = np.random.default_rng(0)
    ids = {}
    with RunStore(path / "runs.sqlite") as store:
        for loss in LOSSES:
            for fold in FOLDS:
                run_id = f"{DATA}-f{fold}-{loss}-{MODEL}-test"
                ids[loss, fold] = run_id
                store.register_run(run_id, _config(fold, loss), total_epochs=4)
                store.start_run(run_id, device="cpu")
                learn = loss == "learndcg"
                store.log_steps(run_id, [
                    (s, s // 10, {"loss": 1.0 / (s + 1), **({"theta_d": 1.8 + 0.1 * fold + 1e-3 * s, "b_d": 2.0,
                                                              "theta_g": 0.5, "b_g": 2.0, "theta_alpha": 0.1,
                                                              "alpha": 1.0, "grad_theta_d": 1e-3} if learn else {})})
                    for s in range(steps_per_run)])
                for epoch in range(4):
                    store.log_epoch(run_id, epoch, {"ndcg@10": 0.4 + 0.02 * epoch, "seconds": 1.0})
                base = {"approxndcg": 0.45, "neuralloss": 0.47, "learndcg": 0.55}[loss]
                values = {f"q{fold}-{i}": float(np.clip(base + rng.normal(0, 0.02), 0, 1)) for i in range(30)}
                means = {f"ndcg@{k}": float(np.mean(list(values.values()))) for k in (1, 3, 5, 10)}
                store.finish_run(run_id, test_means=means, per_query={f"ndcg@{k}": values for k in (1, 3, 5, 10)},
                                 train_seconds=60.0 * fold, pretrain_seconds=120.0 if loss == "neuralloss" else None,
                                 best_epoch=3)
        failed = f"{DATA}-f1-listnet-{MODEL}-test"
        store.register_run(failed, _config(1, "listnet"), total_epochs=4)
        store.start_run(failed, device="cpu")
        store.fail_run(failed, f"FloatingPointError: training loss became nan {HOSTILE}")
        ids["failed"] = failed
    return ids


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    return at


def _page(page: str) -> AppTest:
    at = _app()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _plotly_specs(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _array(value) -> np.ndarray:
    """A plotly JSON array: a list, or plotly's typed-array form ``{"dtype", "bdata"}``."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value)


def _texts(at: AppTest) -> str:
    parts = [el.value for kind in ("markdown", "info", "warning", "error", "success", "caption", "code")
             for el in getattr(at, kind)]
    parts += [el.proto.label for el in at.get("expander")]
    return "\n".join(str(p) for p in parts)


# ---------------------------------------------------------------------------- home
def test_home_empty_store(cache):
    at = _app()
    assert at.title[0].value == "IR ranking-loss and query-failure lab"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Runs in the store"] == "0"
    # The device this machine trains on, whatever it is (cpu here, "cuda (<GPU name>)" on a GPU machine).
    assert metrics["Training device"] == views.training_device()
    assert metrics["Training device"] == "cpu" or metrics["Training device"].startswith("cuda (")
    datasets = at.dataframe[0].value
    row = datasets.set_index("dataset").loc["synthetic-mq2008"]
    assert row["kind"] == "synthetic" and row["status"].startswith("embedded")
    assert datasets.set_index("dataset").loc["mq2008", "status"] == "not configured"
    assert "TREC DL folder" in _texts(at)


def test_home_counts_runs_and_finds_configured_data(cache, tmp_path, monkeypatch):
    _seed(cache)
    folder = tmp_path / "MQ2008-missing"
    monkeypatch.setenv("IRDASH_DATA_MQ2008", str(folder))
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(tmp_path))
    at = _app()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Runs in the store"] == str(len(LOSSES) * len(FOLDS) + 1)
    status = at.dataframe[0].value.set_index("dataset").loc["mq2008", "status"]
    assert status.startswith("missing"), status
    assert str(tmp_path) in _texts(at)


# ---------------------------------------------------------------------------- training
def test_training_page_empty_store(cache):
    at = _page("pages/training.py")
    labels = [s.label for s in at.selectbox]
    assert labels[:3] == ["Dataset", "Loss", "Ranker"]
    assert at.selectbox[0].value == "synthetic-mq2008"
    assert "synthetic-mq2008" in at.selectbox[0].options and "mq2008" not in at.selectbox[0].options
    assert at.multiselect[0].value == [1]
    text = _texts(at)
    assert "No training jobs yet" in text and "Charts appear here once a run has started" in text
    assert not at.get("plotly_chart")


def test_training_page_charts_one_line_per_fold_downsampled(cache):
    ids = _seed(cache, steps_per_run=3000)
    at = _page("pages/training.py")
    watch = at.selectbox(key="watch")
    assert watch.value == "__latest__"
    # The most recently active group is the failed run seeded last: shown with its error, as text.
    latest = at.dataframe[-1].value
    assert list(latest["run_id"]) == [ids["failed"]] and HOSTILE in latest["error"][0]
    assert "No learnable loss parameters" in _texts(at)
    watch.set_value(next(o for o in watch.options if "· learndcg ·" in o)).run()
    specs = _plotly_specs(at)
    assert len(specs) == 3  # loss parameter, training loss, validation NDCG@10
    theta = specs[0]["data"]
    assert [t["name"] for t in theta] == ["fold 1", "fold 2", "fold 3"]
    assert all(len(_array(t["x"])) == views.CHART_MAX_POINTS for t in theta)  # 3000 steps downsampled
    assert _array(theta[1]["x"])[[0, -1]].tolist() == [0, 2999]  # first and last step kept
    assert _array(theta[1]["y"])[0] == pytest.approx(2.0)  # fold 2 starts at 1.8 + 0.2
    table = at.dataframe[-1].value
    assert set(table["run_id"]) == {ids["learndcg", f] for f in FOLDS}
    # Toggle to θ_g / b_g: two panels, three folds each.
    at.segmented_control(key="param_view").set_value("θ_g / b_g").run()
    names = [(t["name"], t.get("xaxis", "x")) for t in _plotly_specs(at)[0]["data"]]
    assert len(names) == 6 and {ax for _, ax in names} == {"x", "x2"}


def test_training_page_fixed_loss_has_no_parameter_chart(cache):
    ids = _seed(cache)
    at = _page("pages/training.py")
    key = next(o for o in at.selectbox(key="watch").options if "approxndcg" in o)
    at.selectbox(key="watch").set_value(key).run()
    assert "No learnable loss parameters" in _texts(at)
    assert len(_plotly_specs(at)) == 2
    assert set(at.dataframe[-1].value["run_id"]) == {ids["approxndcg", f] for f in FOLDS}


def test_start_button_queues_one_job_per_fold_and_cancel_works(cache):
    at = _page("pages/training.py")
    at.multiselect[0].set_value([1, 3])
    epochs = next(n for n in at.number_input if n.label == "Epochs")
    epochs.set_value(3)
    at.button[0].click().run()
    assert not at.exception
    queued = jobs.list_jobs()
    assert [j.status for j in queued] == ["queued", "queued"]
    from ltr.rankers import RANKER_NAMES
    from ltr.train import RunConfig

    n_gpus = views.gpu_count()  # folds go round-robin over the GPUs when there are some
    for i, (job, fold) in enumerate(zip(sorted(queued, key=lambda j: j.id), (1, 3))):
        config = RunConfig(data=DATA, fold=fold, loss="learndcg", model=RANKER_NAMES[0], epochs=3)
        assert job.command[:4] == [sys.executable, "-m", "ltr", "train"]
        assert job.command[4:] == config.to_cli_args()
        assert job.meta["run_ids"] == [config.run_id]
        assert job.resource == (f"cuda:{i % n_gpus}" if n_gpus else "cpu")
    frame = at.dataframe[0].value
    assert list(frame["status"]) == ["queued", "queued"]
    cancel = [b for b in at.button if b.label.startswith("Cancel #")]
    assert len(cancel) == 2
    cancel[0].click().run()
    assert sorted(j.status for j in jobs.list_jobs()) == ["cancelled", "queued"]


def test_training_page_shows_failed_job_and_failed_run_errors(cache):
    ids = _seed(cache)
    job_id = jobs.submit([sys.executable, "-c", f"import sys; sys.exit({HOSTILE!r})"], label="broken run",
                         meta={"kind": views.JOB_KIND, "run_ids": [ids["failed"]]}, start_worker=False)
    # Drive the runner in-process (the worker loop's two steps) instead of a detached worker.
    executor = jobs.LocalProcessExecutor()
    jobs.start_queued(executor, limits={"cpu": 1})
    deadline = time.monotonic() + 20
    while jobs.get_job(job_id).status == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
        jobs.reap(executor)
    assert jobs.get_job(job_id).status == "failed"
    at = _page("pages/training.py")
    frame = at.dataframe[0].value
    row = frame.set_index("job").loc[job_id]
    assert row["status"] == "failed" and row["run status"] == "failed"
    assert HOSTILE in row["message"]
    assert any(f"Job #{job_id} failed" in e.proto.label for e in at.get("expander"))
    assert any(HOSTILE in c.value for c in at.code)  # shown verbatim as text, not rendered


# ---------------------------------------------------------------------------- results
def test_results_page_empty_store(cache):
    at = _page("pages/results.py")
    assert "No completed runs yet" in _texts(at)
    assert not at.get("plotly_chart")


@pytest.mark.slow
def test_results_page_cost_plot_significance_and_drill_down(cache):
    ids = _seed(cache)
    at = _page("pages/results.py")
    assert at.selectbox[0].value == DATA and at.selectbox[1].value == MODEL and at.selectbox[2].value == 10
    (spec,) = _plotly_specs(at)
    points = {t["name"]: t for t in spec["data"]}
    assert set(points) == set(LOSSES)
    # NeuralLoss pays its 2-minute pre-training on top of 1, 2, 3 minutes of training.
    assert points["neuralloss"]["x"][0] == pytest.approx(4.0)
    assert points["approxndcg"]["x"][0] == pytest.approx(2.0)
    assert points["approxndcg"]["error_x"]["array"][0] == pytest.approx(1.0)
    sig = at.dataframe[1].value
    assert sig.loc["approxndcg", "NDCG@10"].endswith("\u2020") and not sig.loc["learndcg", "NDCG@10"].endswith("\u2020")
    assert "p@10" not in sig.columns
    at.toggle[1].set_value(True).run()
    sig = at.dataframe[1].value
    assert sig.loc["approxndcg", "p@10"] < 0.05
    downloads = [d.proto.label for d in at.get("download_button")]
    assert downloads == ["Download CSV", "Download LaTeX"]
    folds = at.dataframe[2].value
    assert list(folds.index) == ["fold 1", "fold 2", "fold 3", "mean"]
    at.selectbox[3].set_value("approxndcg").run()
    detail = at.dataframe[3].value
    assert list(detail["run_id"]) == [ids["approxndcg", f] for f in FOLDS]
    at.selectbox[2].set_value(1).run()
    assert "NDCG@1 vs training time" in _plotly_specs(at)[0]["layout"]["title"]["text"]
    failed = at.dataframe[-1].value
    assert list(failed["run_id"]) == [ids["failed"]] and HOSTILE in failed["error"][0]


def test_results_page_only_failed_runs(cache):
    with RunStore(cache / "runs.sqlite") as store:
        store.register_run("r1", _config(1, "learndcg"), total_epochs=4)
        store.fail_run("r1", "DatasetError: fold 1 is missing")
    at = _page("pages/results.py")
    assert "No completed runs yet" in _texts(at)
    assert "1 failed or cancelled run(s)" in _texts(at)
    assert at.dataframe[0].value["error"][0] == "DatasetError: fold 1 is missing"


def test_pages_never_render_html():
    root = Path(APP).parent
    for path in [root / "app.py", *sorted((root / "pages").glob("*.py"))]:
        assert "unsafe_allow_html" not in path.read_text() and "st.html" not in path.read_text(), path


def _navigation_pages() -> list[tuple[str, dict]]:
    """``(path, keyword arguments)`` of every ``st.Page(...)`` call in app.py."""
    import ast

    tree = ast.parse(Path(APP).read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page":
            out.append((node.args[0].value, {k.arg: ast.literal_eval(k.value) for k in node.keywords}))
    return out


def test_page_files_follow_the_layout_rule():
    """pages/__init__.py's rule: every page file is in app.py's navigation once, under its own name as
    URL path, and starts with use_app_navigation() (what makes a deep link work on a cold server)."""
    import ast

    root = Path(APP).parent
    files = sorted(p.relative_to(root).as_posix() for p in (root / "pages").glob("*.py") if p.name != "__init__.py")
    listed = _navigation_pages()
    assert sorted(path for path, _ in listed) == files, "every page file once in app.py's st.navigation"
    assert not (root / "app_pages").exists()
    for path, kwargs in listed:
        assert "url_path" not in kwargs, f"{path}: the file name is the URL path (no url_path=)"
        assert kwargs.get("title"), f"{path}: give the sidebar title in app.py"
        body = ast.parse((root / path).read_text()).body
        first = next(n for n in body if not isinstance(n, (ast.Import, ast.ImportFrom))
                     and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)))
        assert ast.unparse(first) == "use_app_navigation()", f"{path}: first statement must be use_app_navigation()"


def test_every_page_opens_once_from_the_navigation(cache):
    """Under AppTest (no browser): the app lists each page once and each one runs without an exception.
    The deep-link-on-a-cold-server check is the real-browser test (tests/test_browser_e2e.py)."""
    at = _app()
    for path, _ in _navigation_pages():
        at.switch_page(path).run()
        assert not at.exception, (path, [e.value for e in at.exception])
        assert at.title, path
