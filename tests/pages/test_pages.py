"""Every dashboard page under streamlit's AppTest: empty store, a store with runs, failed runs and jobs."""
from __future__ import annotations

import base64
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import jobs
from ltr.views import charts, home, training
from ltr.store import RunStore
from tests.pages.support import APP

TIMEOUT = 60
DATA, MODEL, FOLDS = "synthetic-mq2008", "mlp", (1, 2, 3)
LOSSES = ("approxndcg", "neuralloss", "learndcg")
HOSTILE = "<script>alert('x')</script> <b>not bold</b>"


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
    assert metrics["Training device"] == home.training_device()
    assert metrics["Training device"] == "cpu" or metrics["Training device"].startswith("cuda (")
    datasets = at.dataframe[0].value
    row = datasets.set_index("dataset").loc["synthetic-mq2008"]
    assert row["kind"] == "synthetic" and row["status"].startswith("embedded")
    assert datasets.set_index("dataset").loc["mq2008", "status"] == "not configured"
    assert "TREC DL folder" in _texts(at)
    # "Start here": what to do first, in order, each step with buttons to its pages (before: the studies
    # explained, a link per page, and no first step)
    steps = [m.value for m in at.markdown if re.match(r"\*\*\d+\. ", m.value)]
    assert steps[:3] == ["**1. Train a first run**", "**2. Compare the losses**",
                         "**3. Point the tool at the TREC DL data**"]
    links = [link.proto.page for link in at.get("page_link")]
    assert links == ["training", "results", "hard-to-retrieve", "failure-overlap", "failure-typology",
                     "annotate-reasons", "difficulty-aware-generation", "predicting-failure", "findings"]
    linked = {f"pages/{page}.py" for page in links}
    # every page has its step; the Query page (one query across the stores) opens from the tables that list queries
    assert linked == {page for page, _title in _navigation_pages()} - {"pages/home.py", "pages/query.py"}
    assert sum(c.value == "Needs the TREC DL folder (step 3)." for c in at.caption) == 4  # no folder configured
    assert "IRDASH_DATA_TREC_DL" in _texts(at) and "**Data** section of `README.md`" in _texts(at)


def test_home_marks_the_steps_already_done(cache, tmp_path, monkeypatch):
    """A step the store shows done says so (runs stored, the TREC DL folder found), and the failure steps
    no longer say they wait for the folder."""
    _seed(cache)
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(tmp_path))
    at = _app()
    steps = [m.value for m in at.markdown if re.match(r"\*\*\d+\. ", m.value)]
    n_runs = len(LOSSES) * len(FOLDS) + 1
    assert steps[0] == f"**1. Train a first run** · done: {n_runs} run(s) in the store"
    assert steps[1] == f"**2. Compare the losses** · done: {n_runs - 1} completed run(s)"
    assert steps[2] == f"**3. Point the tool at the TREC DL data** · done: found `{tmp_path}`"
    assert not [c for c in at.caption if c.value.startswith("Needs the TREC DL folder")]


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
    assert labels[:2] == ["Dataset", "Ranker"] and at.multiselect[1].label == "Losses"
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
    assert "listnet has no learnable loss parameters" in _texts(at)
    watch.set_value(next(o for o in watch.options if "· learndcg ·" in o)).run()
    at.segmented_control(key="fold_layout").set_value("overlaid").run()
    specs = _plotly_specs(at)
    assert len(specs) == 3  # loss parameter, training loss, validation NDCG@10
    theta, drift = specs[0]["data"][:3], specs[0]["data"][3:]
    assert [t["name"] for t in theta] == ["fold 1", "fold 2", "fold 3"]
    assert all(len(_array(t["x"])) == charts.CHART_MAX_POINTS for t in theta)  # 3000 steps downsampled
    assert _array(theta[1]["x"])[[0, -1]].tolist() == [0, 2999]  # first and last step kept
    assert _array(theta[1]["y"])[0] == pytest.approx(2.0)  # fold 2 starts at 1.8 + 0.2
    # these folds drift at exactly the loss lr: each lies on its drift reference θ₀ + 0.001·step
    assert len(drift) == 3 and all(t["name"].startswith("drift reference") for t in drift)
    assert _array(drift[1]["y"]).tolist() == pytest.approx([2.0, 2.0 + 1e-3 * 3000])
    diagnostic = at.dataframe[-1].value
    diagnostic = diagnostic[diagnostic["parameter"] == "theta_d"]
    assert diagnostic["one_sign"].tolist() == [1.0, 1.0, 1.0]
    assert diagnostic["of_reference"].tolist() == pytest.approx([2999 / 3000] * 3)
    table = at.dataframe[-2].value
    assert set(table["run_id"]) == {ids["learndcg", f] for f in FOLDS}
    # Toggle to θ_g / b_g: two panels, three folds each.
    at.segmented_control(key="param_view").set_value("θ_g / b_g").run()
    names = [(t["name"], t.get("xaxis", "x")) for t in _plotly_specs(at)[0]["data"]]
    folds = [(n, ax) for n, ax in names if n.startswith("fold")]
    assert len(folds) == 6 and {ax for _, ax in folds} == {"x", "x2"}
    assert all(ax == "x" for n, ax in names if n.startswith("drift"))  # the reference sits on the θ panel only


def test_training_page_fixed_loss_has_no_parameter_chart(cache):
    ids = _seed(cache)
    at = _page("pages/training.py")
    key = next(o for o in at.selectbox(key="watch").options if "approxndcg" in o)
    at.selectbox(key="watch").set_value(key).run()
    assert "approxndcg has no learnable loss parameters" in _texts(at)
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

    n_gpus = home.gpu_count()  # folds go round-robin over the GPUs when there are some
    for i, (job, fold) in enumerate(zip(sorted(queued, key=lambda j: j.id), (1, 3))):
        config = RunConfig(data=DATA, fold=fold, loss="learndcg", model=RANKER_NAMES[0], epochs=3)
        assert job.command[:4] == [sys.executable, "-m", "ltr", "train"]
        assert job.command[4:] == config.to_cli_args()
        assert job.meta["run_ids"] == [config.run_id]
        assert job.resource == (f"cuda:{i % n_gpus}" if n_gpus else "cpu")
    frame = at.dataframe[0].value
    assert list(frame["status"]) == ["queued", "queued"]
    cancel = [b for b in at.button if b.label.startswith("Cancel #")]
    # each names the loss and the fold it stops (before: "Cancel #1 · fold 1", the loss only on hover)
    first, second = sorted(j.id for j in queued)
    assert sorted(b.label for b in cancel) == [f"Cancel #{first} · learndcg · fold 1",
                                               f"Cancel #{second} · learndcg · fold 3"]
    cancel[0].click().run()
    assert sorted(j.status for j in jobs.list_jobs()) == ["cancelled", "queued"]


def test_training_page_shows_failed_job_and_failed_run_errors(cache):
    ids = _seed(cache)
    job_id = jobs.submit([sys.executable, "-c", f"import sys; sys.exit({HOSTILE!r})"], label="broken run",
                         meta={"kind": training.TRAINING.name, "run_ids": [ids["failed"]]}, start_worker=False)
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
    assert "lr=0.001" in at.selectbox[3].value  # the one configuration stored
    spec, theta_steps = _plotly_specs(at)
    assert {t["name"] for t in theta_steps["data"]} >= {"learndcg"}  # final θ_d against steps, per fold
    points = {t["name"]: t for t in spec["data"] if t.get("showlegend", True)}  # the means; folds are faint points
    assert set(points) == set(LOSSES)
    folds = {t["name"]: t for t in spec["data"] if t.get("showlegend", True) is False}
    assert _array(folds["approxndcg (folds)"]["x"]).tolist() == pytest.approx([1.0, 2.0, 3.0])
    # NeuralLoss pays its 2-minute pre-training on top of 1, 2, 3 minutes of training.
    assert points["neuralloss"]["x"][0] == pytest.approx(4.0)
    assert points["approxndcg"]["x"][0] == pytest.approx(2.0)
    # bars span the folds: 1..3 minutes around the mean of 2, never below 0
    assert points["approxndcg"]["error_x"]["array"][0] == pytest.approx(1.0)
    assert points["approxndcg"]["error_x"]["arrayminus"][0] == pytest.approx(1.0)
    assert spec["layout"]["xaxis"]["range"][0] == 0.0 and spec["layout"]["yaxis"]["range"][1] <= 1.0
    sig = at.dataframe[1].value.set_index("loss")  # the loss is a column of its own (never truncated)
    assert sig.loc["approxndcg", "NDCG@10"].endswith("\u2020") and not sig.loc["learndcg", "NDCG@10"].endswith("\u2020")
    assert "p@10" not in sig.columns
    at.toggle[1].set_value(True).run()
    sig = at.dataframe[1].value.set_index("loss")
    assert sig.loc["approxndcg", "p@10"] < 0.05
    downloads = [d.proto.label for d in at.get("download_button")]
    assert downloads == ["Download CSV", "Download LaTeX"]
    spread = at.dataframe[2].value.set_index("loss")  # mean and seed spread beside the test (one seed here)
    assert spread.loc["approxndcg", "seeds"] == 1 and spread.loc["approxndcg", "folds"] == 3
    per_run = at.dataframe[3].value  # test NDCG per fold x seed
    assert list(per_run.columns) == ["loss", "fold", "seed 0", "mean over seeds"] and len(per_run) == 3 * len(LOSSES)
    slopes = at.dataframe[4].value
    assert list(slopes["loss"]) == ["learndcg"]
    folds = at.dataframe[5].value
    assert list(folds.index) == ["fold 1", "fold 2", "fold 3", "mean"]
    at.selectbox[4].set_value("approxndcg").run()
    detail = at.dataframe[6].value
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


def test_every_download_leaves_the_page_as_it_is():
    """A download reruns nothing (on_click="ignore"): with Streamlit's default rerun, a second download
    clicked while the first one's rerun redraws the page asked for a file that run had just revoked, and
    no file came (CI, stop 38; tests/browser/test_browser_e2e.py keeps the clicks)."""
    import ast

    root = Path(APP).parent
    found = 0
    for path in [root / "app.py", *sorted((root / "pages").rglob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "download_button":
                found += 1
                on_click = {k.arg: k.value for k in node.keywords}.get("on_click")
                assert isinstance(on_click, ast.Constant) and on_click.value == "ignore", \
                    f"{path.relative_to(root)}:{node.lineno}: give the download on_click=\"ignore\""
    assert found >= 10  # the pages' downloads were all seen


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
    The deep-link-on-a-cold-server check is the real-browser test (tests/browser/test_browser_e2e.py)."""
    at = _app()
    for path, _ in _navigation_pages():
        at.switch_page(path).run()
        assert not at.exception, (path, [e.value for e in at.exception])
        assert at.title, path


def test_training_form_proposes_the_study_slate_for_long_lists(cache):
    at = _page("pages/training.py")
    slate = next(n for n in at.number_input if n.label.startswith("Slate length"))
    assert slate.value == 0  # synthetic-mq2008: whole lists, as the study
    at.selectbox[0].set_value("synthetic-web10k").run()
    slate = next(n for n in at.number_input if n.label.startswith("Slate length"))
    assert slate.value == 240 and "240" in slate.help


def test_broken_dataset_is_marked_on_home_and_kept_out_of_training(cache, tmp_path, monkeypatch):
    import shutil

    from ltr.data.synthetic import write_synthetic

    good = tmp_path / "mq2008"
    write_synthetic("synthetic-mq2008", good, seed=1, n_queries=25)
    wrong = tmp_path / "web10k-wrong"
    shutil.copytree(good / "Fold1", wrong / "Fold1")  # 1 fold, 46 features, configured as web10k
    monkeypatch.setenv("IRDASH_DATA_MQ2008", str(good))
    monkeypatch.setenv("IRDASH_DATA_WEB10K", str(wrong))
    at = _app()
    table = at.dataframe[0].value.set_index("dataset")
    assert table.loc["mq2008", "status"] == "found · 5 folds · 46 features"
    assert table.loc["web10k", "status"].startswith("broken: 1 of 5 folds")
    at.switch_page("pages/training.py").run()
    options = at.selectbox[0].options
    assert "mq2008" in options and "web10k" not in options
    assert any(c.value.startswith("Not offered: web10k (broken: 1 of 5 folds") for c in at.caption)


# ---------------------------------------------------------------------------- issue 10: queues, charts, widths
def test_training_page_shows_what_a_queued_job_waits_for(cache, monkeypatch):
    """A retrieval job from the Hard-to-retrieve page holds the only CPU slot: the Training page lists
    it, and the queued training job says it waits for it."""
    from core.db import transaction
    from core.jobs.records import connect_jobs

    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=1")
    monkeypatch.setattr(jobs, "ensure_worker", lambda: None)  # nothing starts: the queue is only read
    monkeypatch.setattr(jobs.queue, "ensure_worker", lambda: None)
    holder = jobs.submit(["true"], label="retrieve dense on dl19 (partial corpus)",
                         meta={"kind": "pipeline.retrieve", "dataset": "dl19", "retriever": "dense"}, start_worker=False)
    conn = connect_jobs()
    with transaction(conn) as c:
        c.execute("UPDATE jobs SET status = 'running', started = ?, handle = '1:1' WHERE id = ?",
                  (time.time() - 720, holder))
    conn.close()
    at = _page("pages/training.py")
    at.button[0].click().run()  # Start training: one fold
    assert not at.exception
    others = at.dataframe[0].value
    assert list(others["job"]) == [holder] and others["for"][0] == "12 min"
    frame = at.dataframe[1].value
    (message,) = frame["message"]
    assert message == f"waiting for cpu: job #{holder}, retrieve dense on dl19 (partial corpus), running 12 min"
    cancel = [b for b in at.button if b.label.startswith("Cancel #")]
    assert [b.label for b in cancel] == [f"Cancel #{holder + 1} · learndcg · fold 1"]  # short: never cut


def test_five_folds_on_one_line_stay_visible(cache):
    """θ_d of five folds often coincide: one panel per fold (default) or the change since step 0."""
    with RunStore(cache / "runs.sqlite") as store:
        ids = []
        for fold in range(1, 6):
            rid = f"{DATA}-f{fold}-learndcg-{MODEL}-same"
            store.register_run(rid, _config(fold, "learndcg"), total_epochs=4)
            store.start_run(rid, device="cpu")
            store.log_steps(rid, [(s, 0, {"loss": 1.0, "theta_d": 0.5413 + 1e-3 * s, "b_d": 2.0 + 1e-3 * s})
                                  for s in range(40)])
            ids.append(rid)
    at = _page("pages/training.py")
    assert at.segmented_control(key="fold_layout").value == "one panel per fold"
    traces = _plotly_specs(at)[0]["data"]
    data = [t for t in traces if t.get("legendgroup") != "drift"]
    drift = [t for t in traces if t.get("legendgroup") == "drift"]
    assert len(data) == 5 and len({t.get("xaxis", "x") for t in data}) == 5  # one panel each
    # each fold's panel carries its own drift reference θ₀ + loss_lr·step
    assert sorted(t.get("xaxis", "x") for t in drift) == sorted(t.get("xaxis", "x") for t in data)
    at.segmented_control(key="fold_layout").set_value("change since step 0").run()
    data = _plotly_specs(at)[0]["data"]
    assert all(_array(t["y"])[0] == 0.0 for t in data)
    assert _array(data[0]["y"])[-1] == pytest.approx(0.039)
    at.segmented_control(key="param_view").set_value("θ_g / b_g").run()
    assert not at.exception


def test_one_fold_one_panel_per_fold_and_remaining_time(cache):
    """A single running fold (the real-browser test's case) in the default per-fold layout, and its
    job's estimated remaining time from the mean epoch time so far."""
    with RunStore(cache / "runs.sqlite") as store:
        rid = f"{DATA}-f1-learndcg-{MODEL}-one"
        store.register_run(rid, _config(1, "learndcg"), total_epochs=10)
        store.start_run(rid, device="cpu")
        store.log_steps(rid, [(s, 0, {"loss": 1.0, "theta_d": 0.5 + 1e-3 * s}) for s in range(10)])
        for epoch in range(4):
            store.log_epoch(rid, epoch, {"ndcg@10": 0.5, "seconds": 3.0})
    jobs.submit(["true"], label="fold 1", meta={"kind": training.TRAINING.name, "run_ids": [rid], "fold": 1},
                start_worker=False)
    from core.db import transaction
    from core.jobs.records import connect_jobs

    conn = connect_jobs()
    with transaction(conn) as c:
        c.execute("UPDATE jobs SET status = 'running', started = ?, handle = '1:1'", (time.time() - 12,))
    conn.close()
    at = _page("pages/training.py")
    traces = _plotly_specs(at)[0]["data"]
    assert [t.get("legendgroup") for t in traces] == ["fold 1", "drift"]  # the fold and its drift reference
    assert at.dataframe[0].value["message"][0] == "≤ 18 s left (3.0 s/epoch)"  # 6 epochs of 3 s at most


def test_fixed_loss_message_says_it_learns_nothing(cache):
    _seed(cache)
    at = _page("pages/training.py")
    key = next(o for o in at.selectbox(key="watch").options if "approxndcg" in o)
    at.selectbox(key="watch").set_value(key).run()
    text = _texts(at)
    assert "approxndcg has no learnable loss parameters" in text and "(yet)" not in text


def test_results_single_point_has_sane_axes(cache):
    with RunStore(cache / "runs.sqlite") as store:
        store.register_run("one", _config(1, "approxndcg"), total_epochs=4)
        store.start_run("one", device="cpu")
        store.finish_run("one", test_means={f"ndcg@{k}": 0.98 for k in (1, 3, 5, 10)},
                         per_query={"ndcg@10": {"q": 0.98}}, train_seconds=3.0, cpu_seconds=2.5)
    at = _page("pages/results.py")
    (spec,) = _plotly_specs(at)
    x0, x1 = spec["layout"]["xaxis"]["range"]
    y0, y1 = spec["layout"]["yaxis"]["range"]
    assert x0 == 0.0 and x1 > 0.05 and 0.0 <= y0 < 0.98 < y1 <= 1.0
    assert not at.get("download_button")  # one loss: nothing to test, nothing to export
