"""Publication files of one LearnDCG comparison (``python -m ltr export --data D --model M --experiment E``).

For the configuration the significance table compares (:func:`ltr.report.runs.select_configuration`):

- ``ndcg-vs-time``: test NDCG@10 against training minutes, every run (fold x seed) a small point, the mean
  over them a large marker with bars from the lowest to the highest run (the Results page's scatter and
  the ``cost`` table's runs, drawn with matplotlib so SVG keeps its text);
- ``theta-d-trajectories``: LearnDCG's θ_d against the training step, one line per run (fold, and seed where
  there are several), with the drift reference θ₀ + loss_lr × step (:mod:`ltr.drift`);
- ``theta-d-final``: final θ_d against the steps trained, one point per run;
- tables (CSV + booktabs LaTeX): ``significance`` (means, differences, p and Holm p; the caption names data,
  ranker, epochs, learning rate, seed, folds, test and correction), ``cost`` (the scatter's numbers),
  ``theta-d-drift`` (the drift diagnostic), ``findings`` (:mod:`ltr.findings`);
- ``manifest.json``: what each file is, the experiment, the run ids, the ranker and losses, commit and date.

Every figure's title is one short line (data by its display name, ranker); its caption (``<stem>.tex``, the
manifest, the files' metadata) names data, ranker, losses and the configuration (epochs, learning rate,
seed...). The manifest gives the sha256 of every LETOR file the runs read (and of the user's own file when the
data is one file split by query).
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd

from core.export import Export
from ltr.store import RunStore

K = 10


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def configuration_caption(table: pd.DataFrame, runs: pd.DataFrame) -> str:
    """``synthetic-mq2008 / mlp; losses approxndcg, learndcg; epochs=2 · lr=0.001 · ... · seed=0; folds 1, 2``
    (the data by its display name, :func:`ltr.data.datasets.display_name`)."""
    from ltr.data.datasets import display_name

    folds = ", ".join(str(int(f)) for f in sorted(set(runs["fold"])))
    return (f"{display_name(table['data'].iloc[0])} / {table['model'].iloc[0]}; losses "
            f"{', '.join(sorted(set(runs['loss'])))}; {table.attrs.get('configuration', '?')}; folds {folds}")


def letor_inputs(export: Export, data: str, folds) -> None:
    """Record the LETOR files of ``folds`` (train, vali, test) with their sha256 (none when the data can no
    longer be resolved: the manifest says why); for one file split by query (``FILE.txt:folds=3``), the
    user's file too, not only the fold files derived from it in the cache."""
    from core.errors import DatasetError
    from ltr.data.crossval import parse_file_split
    from ltr.data.datasets import SPLITS, resolve_dataset

    try:
        split = parse_file_split(data)
        _, folder = resolve_dataset(data)
    except DatasetError as exc:
        export.skip("LETOR input digests", str(exc))
        return
    if split is not None:
        export.input_file("letor source", split.path, folds=split.folds, seed=split.seed)
    for fold in folds:
        for split in SPLITS:
            export.input_file("letor", Path(folder) / f"Fold{int(fold)}" / f"{split}.txt", fold=int(fold),
                              split=split)


def run_names(runs: pd.DataFrame) -> dict[str, str]:
    """``{run_id: "fold 1"}``, or ``"fold 1 · seed 2"`` when the runs hold more than one seed: how the θ_d
    figures tell a configuration's runs apart."""
    seeds = "seed" in runs and runs["seed"].nunique() > 1
    ordered = runs.sort_values(["fold", "seed"] if "seed" in runs else "fold")
    return {r["run_id"]: f"fold {int(r['fold'])}" + (f" · seed {int(r['seed'])}" if seeds and pd.notna(r["seed"])
                                                     else "")
            for r in ordered.to_dict("records")}


def scatter_figure(cost: pd.DataFrame, runs: pd.DataFrame, title: str):
    """The ``ndcg-vs-time`` figure: a point per run the ``cost`` table summarises (one per fold and seed,
    :func:`ltr.cost.one_run_per_fold_and_seed`), its mean marker and min-max bars from that table."""
    from ltr.cost import MINUTES_AXIS_TITLE, one_run_per_fold_and_seed
    from ltr.report.runs import variant_loss

    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.5, 6.5))  # the legend stands below the axes
    latest = one_run_per_fold_and_seed(runs)
    seeds = latest["seed"].nunique() if "seed" in latest else 1
    # LearnDCG a black star; the others tab20's ten dark colours first, then their light twins, each its own
    # colour (the default cycle of ten gave the eleventh the first one's)
    tab20 = plt.get_cmap("tab20")
    colours = iter([tab20(i) for i in (*range(0, 20, 2), *range(1, 20, 2))] * 2)
    for row in cost.to_dict("records"):
        mine = latest[latest["loss"] == row["loss"]]
        learndcg = variant_loss(row["loss"]) == "learndcg"
        colour = "black" if learndcg else next(colours)
        ax.scatter(mine["minutes"], mine[f"test_ndcg{K}"], s=18, alpha=0.45, color=colour)
        label = f"{row['loss']} ({row['folds']} folds" + (f", {len(mine)} runs)" if seeds > 1 else ")")
        ax.errorbar([row["minutes_mean"]], [row["ndcg_mean"]],
                    xerr=[[row["minutes_mean"] - row["minutes_min"]], [row["minutes_max"] - row["minutes_mean"]]],
                    yerr=[[row["ndcg_mean"] - row["ndcg_min"]], [row["ndcg_max"] - row["ndcg_mean"]]],
                    fmt="*" if learndcg else "o", markersize=12 if learndcg else 8, color=colour, label=label,
                    capsize=2)
    ax.set_xlabel(MINUTES_AXIS_TITLE.replace(" (minutes:", "\n(minutes:"), fontsize=9)
    ax.set_ylabel(f"test NDCG@{K}")
    ax.set_xlim(left=0)
    ax.set_title(title, fontsize=10)
    # below the axes and their two-line label, not over the points (saved with a tight bounding box)
    ax.legend(fontsize=8, title="loss (mean, bars: min-max over " + ("folds x seeds)" if seeds > 1 else "folds)"),
              loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    fig.tight_layout()
    return fig


def pretraining_note(cost: pd.DataFrame) -> str:
    """The one-time pre-trainings behind a cost table's minutes, named in its captions (empty without one)."""
    rows = [r for r in cost.to_dict("records") if pd.notna(r.get("pretrain_once_minutes"))]
    return "".join(f"{r['loss']}: one-time pre-training {r['pretrain_once_minutes']:.2f} min shared by "
                   f"{int(r['pretrain_shared_by'])} runs. " for r in rows)


def theta_trajectories_figure(store: RunStore, runs: pd.DataFrame, diagnostic: pd.DataFrame, title: str):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    series = store.step_series(list(runs["run_id"]), ["theta_d"], max_points=500)
    names = run_names(runs)  # in fold, then seed order: the legend reads down the folds
    for run_id, group in sorted(series.groupby("run_id"), key=lambda item: list(names).index(item[0])):
        ax.plot(group["step"], group["value"], label=names[run_id], linewidth=1.4)
    theta = diagnostic[diagnostic["parameter"] == "theta_d"]
    for i, row in enumerate(theta.drop_duplicates(["theta_0", "loss_lr", "steps"]).to_dict("records")):
        ax.plot([0, row["steps"] - 1], [row["theta_0"], row["theta_0"] + row["loss_lr"] * (row["steps"] - 1)],
                linestyle="--", color="#444444", linewidth=1,
                label=f"drift reference θ₀ + {row['loss_lr']:g}·step" if i == 0 else None)
    ax.set_xlabel("training step")
    ax.set_ylabel("θ_d (LearnDCG)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def theta_final_figure(diagnostic: pd.DataFrame, runs: pd.DataFrame, title: str):
    """Final θ_d against the steps, a point per run; nearly coinciding runs share one label naming them all
    (:func:`ltr.drift.fold_labels`, as the Results page's chart), so no label is drawn over another."""
    from ltr.drift import fold_labels

    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    theta = diagnostic[diagnostic["parameter"] == "theta_d"]
    about = runs.set_index("run_id")
    points = theta.assign(loss=theta["run_id"].map(about["loss"]),
                          seed=theta["run_id"].map(about["seed"]) if "seed" in about else None)
    ax.scatter(points["steps"], points["theta_final"])
    right = points["steps"].min() + 0.6 * (points["steps"].max() - points["steps"].min())
    for index, text in fold_labels(points).items():
        if text:  # a long group's label wrapped, and to the left of a point in the right part: inside the axes
            left_of = points.at[index, "steps"] > right
            unbroken = text.replace(" (seed ", "\u00a0(seed\u00a0")  # a run's name is never split over lines
            ax.annotate(textwrap.fill(unbroken, 32), (points.at[index, "steps"], points.at[index, "theta_final"]),
                        fontsize=8, textcoords="offset points", xytext=(-4 if left_of else 4, 4),
                        ha="right" if left_of else "left")
    ax.set_xlabel("training steps")
    ax.set_ylabel("final θ_d")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def drift_for_latex(diagnostic: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The drift diagnostic as a paper prints it: each row named by its fold, its seed (when the runs hold
    several) and parameter, which a table split by columns repeats in every part; the run ids stay in the CSV."""
    shown = diagnostic.drop(columns="run_id")
    if "seed" in runs and runs["seed"].nunique() > 1:
        shown.insert(1, "seed", diagnostic["run_id"].map(runs.set_index("run_id")["seed"]).astype(int))
    return shown


def significance_for_latex(table: pd.DataFrame) -> pd.DataFrame:
    from ltr.report.text import display_table

    shown = display_table(table)
    for column in [c for c in table.columns if c.startswith("p_holm@") or c.startswith("p@")]:
        shown[column] = table[column].to_numpy()
    return shown


MARK_NOTES = ("† LearnDCG significantly better than this loss, ‡ significantly worse (the table's test and "
              "correction, alpha 0.05); p and Holm p: against LearnDCG, '--' for LearnDCG itself.")


def export_comparison(store: RunStore, data: str, model: str, experiment: str, out: str | Path) -> Export:
    """Write the module docstring's files for ``data``/``model`` in ``experiment`` into ``out``."""
    from ltr.cost import MINUTES_CONVENTION, completed_runs, cost_effectiveness, in_configuration
    from ltr.data.datasets import display_name
    from ltr.drift import drift_diagnostic
    from ltr.findings import TEST, check_findings
    from ltr.report.paired import significance_table
    from ltr.report.text import table_caption

    table = significance_table(store, data, model, experiment=experiment, holm=True)
    runs = in_configuration(completed_runs(store, data, model, experiment), table.attrs.get("configuration"))
    caption = configuration_caption(table, runs)
    name = display_name(data)
    folds = sorted(int(f) for f in set(runs["fold"]))
    export = Export(out, {"what": "LearnDCG comparison export", "experiment": experiment, "data": name,
                          "data_as_runs_name_it": data, "model": model,
                          "configuration": table.attrs.get("configuration"),
                          "losses": sorted(set(runs["loss"])), "folds": folds,
                          "run_ids": sorted(runs["run_id"]), "test": TEST,
                          "models": [{"role": "ranker", "name": model},
                                     *({"role": "loss", "name": loss}
                                       for loss in sorted(set(runs["loss"]) - set(table.attrs.get("baselines") or {}))),
                                     *({"role": "baseline", "name": loss, "settings": settings}
                                       for loss, settings in (table.attrs.get("baselines") or {}).items())]})
    letor_inputs(export, data, folds)
    cost = cost_effectiveness(runs, K)
    export.figure(scatter_figure(cost, runs, f"{name} · {model}: test NDCG@{K} vs training time"),
                  "ndcg-vs-time", f"test NDCG@{K} against training minutes per loss (runs and mean)",
                  f"Test NDCG@{K} against training time per run (small points: one per fold and seed) and the mean "
                  f"over those runs (large marker, bars from the lowest to the highest run). Cost convention: "
                  f"{MINUTES_CONVENTION}. {pretraining_note(cost)}{caption}.")
    export.table(cost, "cost", "the scatter's numbers: NDCG@10 and minutes per loss over its runs",
                 f"Test NDCG@{K} and training minutes per loss (mean, sd, min, max over its runs, one per fold and "
                 f"seed; folds: how many folds they cover). Cost convention: "
                 f"{MINUTES_CONVENTION}; pretrain_once_minutes: that one-time pre-training, pretrain_shared_by: the "
                 f"runs sharing it. {pretraining_note(cost)}{caption}.")
    learndcg = runs[runs["loss_name"] == "learndcg"]
    diagnostic = drift_diagnostic(store, list(learndcg["run_id"])) if not learndcg.empty else pd.DataFrame()
    if diagnostic.empty or "theta_d" not in set(diagnostic["parameter"]):
        export.skip("θ_d figures", "no LearnDCG run with a recorded θ_d in this configuration")
    else:
        export.figure(theta_trajectories_figure(store, learndcg, diagnostic, f"{name} · {model}: LearnDCG θ_d per run"),
                      "theta-d-trajectories", "LearnDCG's θ_d against the step, one line per run, drift reference",
                      f"LearnDCG's θ_d against the training step, one line per run (fold, and seed where there are "
                      f"several); dashed: the drift reference "
                      f"θ₀ + loss_lr · step (pure drift). {caption}.")
        export.figure(theta_final_figure(diagnostic, learndcg, f"{name} · {model}: final θ_d against steps"),
                      "theta-d-final", "final θ_d against the steps trained, one point per run",
                      f"Final θ_d against the steps trained, one point per run (fold, and seed where there are "
                      f"several). {caption}.")
        shown = drift_for_latex(diagnostic, learndcg)
        export.table(diagnostic, "theta-d-drift", "the drift diagnostic of LearnDCG's θ per run",
                     f"Drift diagnostic of LearnDCG's parameters (of_reference: share of pure drift used; run ids: "
                     f"theta-d-drift.csv). {caption}.", latex_frame=shown, keys=list(shown.columns).index("parameter") + 1)
    export.table(table, "significance", "the significance table: means, differences, p and Holm p, flags",
                 f"{table_caption(table)}. Runs: {caption}.", latex_frame=significance_for_latex(table),
                 notes=[MARK_NOTES])
    found = check_findings(store, experiment)
    from core.findings import LATEX_REASON_CHARS, summary_rows

    export.table(pd.DataFrame(summary_rows(found["findings"].values())),
                 "findings", "the LearnDCG paper's claims checked on this experiment",
                 f"The LearnDCG paper's claims against experiment {experiment}.",
                 latex_frame=pd.DataFrame(summary_rows(found["findings"].values(), LATEX_REASON_CHARS)),
                 notes=["Each verdict's parts, measured figures and full reasons: findings.csv and "
                        "python -m ltr findings --json."])
    export.write_manifest()
    return export
