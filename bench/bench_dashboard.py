"""Dashboard render time with a large run store (target: every page under 2 s), and the Training
page's live refresh at Yahoo scale (target: under 150 ms).

Seeds a throw-away store with 500 completed runs (3 synthetic data sets x 4 rankers x 11 losses x
5 folds, cut at 500) holding about 1 million step-metric rows (LearnDCG runs log 9 series of 1,500
steps, the others an 850-step loss series), 50 epochs of validation metrics and 200 per-query
results per run, then renders each page with streamlit's AppTest: one warm-up render (imports),
then the median of ``--repeats`` renders. Prints one line per page and the store's size.

Live refresh: a second store holds 5 folds of one LearnDCG run with 28,000 steps x 8 series each.
Between refreshes 20 new steps are logged (as a training run does), then the Training page's live
fragment is timed: with this design (one store per session, step series downsampled in SQL and read
incrementally, per-series summaries kept by the writer, figures built from plain data) as the page
draws it (jobs table, run group, the loss-parameter chart in its largest view -- the three θ
gradients, one panel per fold, 15 panels -- with drift references and the drift table, the loss and
validation figures, each serialised as st.plotly_chart does), and, interleaved, the pre-change data path alone (a new connection running the schema DDL,
every step row fetched, downsampled in Python), whose ratio is printed; then the page itself (AppTest
reruns).

    .venv/bin/python bench/bench_dashboard.py [--runs 500] [--repeats 5] [--live-steps 28000]
"""
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LEARN_NAMES = ("loss", "theta_g", "theta_d", "theta_alpha", "b_g", "b_d", "alpha", "grad_theta_d", "grad_theta_g")
LEARN_STEPS, OTHER_STEPS, EPOCHS, QUERIES = 1500, 850, 50, 200


def seed_store(path: Path, n_runs: int) -> int:
    from ltr.losses import LOSS_NAMES
    from ltr.rankers import RANKER_NAMES
    from ltr.ndcg_conventions import NDCG_CUTOFFS
    from ltr.store import RunStore

    rng = np.random.default_rng(0)
    grid = itertools.product(("synthetic-mq2008", "synthetic-mq2007", "synthetic-web10k"), RANKER_NAMES,
                             LOSS_NAMES, range(1, 6))
    step_rows = 0
    with RunStore(path) as store:
        for data, model, loss, fold in itertools.islice(grid, n_runs):
            run_id = f"{data}-f{fold}-{loss}-{model}-bench"
            config = {"data": data, "fold": fold, "loss": loss, "model": model, "epochs": EPOCHS, "lr": 1e-3,
                      "loss_lr": 1e-3, "batch_size": 64, "slate_length": None, "patience": 10, "seed": 0,
                      "loss_params": {}, "model_params": {}}
            store.register_run(run_id, config, total_epochs=EPOCHS)
            store.start_run(run_id, device="cpu")
            learn = loss == "learndcg"
            names, n_steps = (LEARN_NAMES, LEARN_STEPS) if learn else (("loss",), OTHER_STEPS)
            values = rng.normal(size=(n_steps, len(names))).tolist()
            store.log_steps(run_id, [(s, s * EPOCHS // n_steps, dict(zip(names, v))) for s, v in enumerate(values)])
            step_rows += n_steps * len(names)
            for epoch in range(EPOCHS):
                store.log_epoch(run_id, epoch, {"ndcg@1": rng.random(), "ndcg@3": rng.random(),
                                                "ndcg@5": rng.random(), "ndcg@10": rng.random(), "seconds": 1.0})
            pq = {f"q{fold}-{i}": float(v) for i, v in enumerate(rng.random(QUERIES))}
            store.finish_run(run_id, test_means={f"ndcg@{k}": float(np.mean(list(pq.values()))) for k in NDCG_CUTOFFS},
                             per_query={f"ndcg@{k}": pq for k in NDCG_CUTOFFS}, train_seconds=float(rng.uniform(30, 600)),
                             pretrain_seconds=300.0 if loss == "neuralloss" else None, best_epoch=EPOCHS - 1)
    return step_rows


LIVE_NAMES = ("loss", "theta_g", "theta_d", "theta_alpha", "b_d", "grad_theta_g", "grad_theta_d", "grad_theta_alpha")
LIVE_FOLDS = 5


def seed_live_store(path: Path, steps: int) -> list[str]:
    """5 folds of one LearnDCG run, ``steps`` steps x 8 series each, still running."""
    from ltr.store import RunStore

    rng = np.random.default_rng(1)
    run_ids = []
    with RunStore(path) as store:
        for fold in range(1, LIVE_FOLDS + 1):
            run_id = f"synthetic-yahoo-f{fold}-learndcg-mlp-live"
            config = {"data": "synthetic-yahoo", "fold": fold, "loss": "learndcg", "model": "mlp", "epochs": 100,
                      "seed": 0}
            store.register_run(run_id, config, total_epochs=100)
            store.start_run(run_id, device="cpu")
            for start in range(0, steps, 4000):
                values = rng.normal(size=(min(4000, steps - start), len(LIVE_NAMES))).tolist()
                store.log_steps(run_id, [(start + i, (start + i) // 700, dict(zip(LIVE_NAMES, v)))
                                         for i, v in enumerate(values)])
            for epoch in range(steps // 700):
                store.log_epoch(run_id, epoch, {"ndcg@10": rng.random()})
            run_ids.append(run_id)
    return run_ids


def old_live_data(path: Path, run_ids, names, max_points: int) -> int:
    """The pre-change data path of one refresh: new connection + schema DDL, every row, numpy downsampling."""
    import sqlite3

    from ltr.store.schema import _TABLES

    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(_TABLES)  # the DDL the old code ran on every open
    points = 0
    for run_id in run_ids:
        for name in names:
            rows = conn.execute("SELECT step, epoch, value FROM step_metrics WHERE run_id = ? AND name = ? ORDER BY step",
                                (run_id, name)).fetchall()
            arr = np.asarray(rows, dtype=np.float64)
            idx = np.unique(np.linspace(0, len(arr) - 1, max_points).round().astype(np.int64))
            points += len(arr[idx])
    conn.close()
    return points


def serialise(fig) -> str:
    """What st.plotly_chart does with a figure: to_dict, then JSON for the browser."""
    import plotly.io

    return plotly.io.to_json(fig.to_dict(), validate=False)


def live_refresh(store, run_ids) -> int:
    """What the Training page's fragment computes on a refresh (gradient view selected)."""
    from ltr.views import charts, drift, reader, run_groups, training

    training.jobs_frame(store, training.TRAINING.jobs(30))
    group = run_groups.run_groups(store)[0]
    run_groups.group_runs(store, group)
    points = 0
    if charts.has_step_metric(store, group.run_ids, "theta_d"):  # as pages/training.py draws the parameter chart
        layout = charts.FOLD_LAYOUTS["one panel per fold"]  # the page's default layout, its largest figure
        names = charts.PARAMETER_VIEWS["θ gradients"]  # the view with the most series (3 x 5 folds)
        fig, points = charts.step_figure(store, group.run_ids, names, title="", **layout)
        diagnostic = drift.drift_diagnostic(store, group.run_ids)
        drift.add_drift_reference(fig, store, group.run_ids, names, diagnostic=diagnostic, **layout)
        serialise(fig)
    fig, n = charts.step_figure(store, group.run_ids, ("loss",), title="")
    serialise(fig)
    fig, m = charts.validation_figure(store, group.run_ids, "ndcg@10")
    serialise(fig)
    return points + n + m


def bench_live(tmp: Path, steps: int, repeats: int) -> None:
    from ltr.views import charts, drift, reader, run_groups, training
    from ltr.store import RunStore

    path = tmp / "live" / "runs.sqlite"
    path.parent.mkdir()
    start = time.perf_counter()
    run_ids = seed_live_store(path, steps)
    print(f"live store: {LIVE_FOLDS} folds x {steps:,} steps x {len(LIVE_NAMES)} series "
          f"({LIVE_FOLDS * steps * len(LIVE_NAMES):,} rows) seeded in {time.perf_counter() - start:.1f} s")
    drawn = charts.PARAMETER_VIEWS["θ gradients"] + ("loss",)  # the series live_refresh draws
    state: dict = {}
    new_t, old_t, step = [], [], steps
    with RunStore(path) as writer:
        for i in range(repeats + 1):
            for run_id in run_ids:  # the runs go on training between refreshes
                writer.log_steps(run_id, [(step + j, step // 700, dict(zip(LIVE_NAMES, np.random.randn(8).tolist())))
                                          for j in range(20)])
            step += 20
            t0 = time.perf_counter()
            with reader.session_store(state, path) as store:
                live_refresh(store, run_ids)
            t1 = time.perf_counter()
            old_live_data(path, run_ids, drawn, charts.CHART_MAX_POINTS)
            t2 = time.perf_counter()
            if i:  # the first refresh of a session reads every series once (cold)
                new_t.append(t1 - t0)
                old_t.append(t2 - t1)
            else:
                print(f"live refresh, first of a session (cold): {1000 * (t1 - t0):7.1f} ms")
    new_ms, old_ms = 1000 * statistics.median(new_t), 1000 * statistics.median(old_t)
    verdict = "ok" if new_ms < 150 else "SLOW (target < 150 ms)"
    print(f"live refresh (data + figures, median of {repeats}): {new_ms:7.1f} ms   {verdict}")
    print(f"pre-change data path alone (interleaved):        {old_ms:7.1f} ms   -> refresh / old data = "
          f"{new_ms / old_ms:.3f} ({old_ms / new_ms:.1f}x faster, figures included on our side)")
    os.environ["IRDASH_CACHE_DIR"] = str(path.parent)
    first, median = render_seconds("pages/training.py", repeats, reruns=True)
    # A whole-script rerun (what a widget change costs; AppTest cannot rerun a fragment alone). The
    # 2 s live refresh reruns only the page's fragment, timed above against the 150 ms target.
    print(f"page training (live store) first render {first:6.3f} s   whole-page rerun median of {repeats}: "
          f"{1000 * median:6.1f} ms")


def render_seconds(page: str | None, repeats: int, reruns: bool = False) -> tuple[float, float]:
    from streamlit.testing.v1 import AppTest

    def once() -> float:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.run()
        start = time.perf_counter()
        if page is not None:
            at.switch_page(page).run()
        else:
            at.run()
        elapsed = time.perf_counter() - start
        if at.exception:
            raise RuntimeError(f"{page}: {[e.value for e in at.exception]}")
        return elapsed

    if reruns:  # one session: the first render of the page, then reruns of it (a live refresh)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.run()
        start = time.perf_counter()
        at.switch_page(page).run()
        first = time.perf_counter() - start
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - start)
            if at.exception:
                raise RuntimeError(f"{page}: {[e.value for e in at.exception]}")
        return first, statistics.median(times)
    first = once()
    return first, statistics.median(once() for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--live-steps", type=int, default=28_000, help="steps per fold of the live store (0: skip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="irdash-bench-") as tmp:
        os.environ["IRDASH_CACHE_DIR"] = tmp
        start = time.perf_counter()
        step_rows = seed_store(Path(tmp) / "runs.sqlite", args.runs)
        size_mb = (Path(tmp) / "runs.sqlite").stat().st_size / 2**20
        print(f"seeded {args.runs} runs, {step_rows:,} step-metric rows, {args.runs * EPOCHS * 5:,} epoch-metric "
              f"rows, {args.runs * QUERIES * 4:,} per-query rows ({size_mb:.0f} MiB) in "
              f"{time.perf_counter() - start:.1f} s")
        for name, page in (("home", None), ("training", "pages/training.py"), ("results", "pages/results.py")):
            first, median = render_seconds(page, args.repeats)
            verdict = "ok" if median < 2.0 else "SLOW (target < 2 s)"
            print(f"page {name:<9} first render {first:6.3f} s   median of {args.repeats}: {median:6.3f} s   {verdict}",
                  flush=True)
        if args.live_steps:
            bench_live(Path(tmp), args.live_steps, args.repeats)


if __name__ == "__main__":
    main()
