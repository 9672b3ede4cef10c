"""The LearnDCG paper's claims checked on one experiment of the run store (``python -m ltr findings``).

Per (data set, ranker) of the experiment, the runs of the configuration the significance table
compares (:func:`ltr.report.select_configuration`: shared settings; folds paired only within it):

- ``learndcg_highest``: per NDCG@k, LearnDCG's mean over folds the highest and significantly better
  than every baseline: :data:`TEST` (the report's test and correction, named in every result);
- ``theta_d_fold_specific``: LearnDCG's final θ_d per fold (range over folds) and whether each fold
  settled, from the drift diagnostic (:func:`ltr.drift.drift_diagnostic`; the claims file's reading);
- ``neuralloss_vs_learndcg``: where both ran, LearnDCG against NeuralLoss per k (difference, p);
- the cost ranking behind the NDCG-vs-time scatter (:func:`ltr.cost.cost_effectiveness`: mean training
  minutes per loss, cheapest first). The issue states no cost claim to check, so it is reported
  without a verdict.

Verdicts as :mod:`core.findings` defines them: one part that does not hold makes the whole not hold.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from core.findings import FAILS, HOLDS, UNMEASURABLE, Finding, Part, from_claim
from ltr.ndcg_conventions import NDCG_CUTOFFS
from ltr.report import variant_loss
from ltr.store import RunStore

CANDIDATE, NEURALLOSS = "learndcg", "neuralloss"
TEST = ("two-sided paired t-test over the pooled test queries of all folds (ltr.report.paired_t_test, equal to "
        "scipy.stats.ttest_rel), Holm-corrected across the baselines at each k, alpha = 0.05")
CLAIMS_FILE = Path(__file__).with_name("paper_claims.json")


@lru_cache(maxsize=1)
def paper_claims() -> dict:
    return json.loads(CLAIMS_FILE.read_text(encoding="utf-8"))["claims"]


def experiment_pairs(store: RunStore, experiment: str) -> list[tuple[str, str]]:
    """``(data, model)`` with completed runs in ``experiment``."""
    runs = store.list_runs(status="completed", experiment=experiment)
    if runs.empty:
        return []
    return sorted({(d, m) for d, m in zip(runs["data"], runs["model"])})


def _table(store: RunStore, data: str, model: str, experiment: str) -> pd.DataFrame:
    from ltr.report import significance_table

    return significance_table(store, data, model, experiment=experiment, holm=True)


def _run_record(store: RunStore, data: str, model: str, experiment: str, table: pd.DataFrame) -> dict:
    from ltr.cost import completed_runs, in_configuration

    runs = in_configuration(completed_runs(store, data, model, experiment), table.attrs.get("configuration"))
    return {"kind": "runs", "experiment": experiment, "data": data, "model": model,
            "configuration": table.attrs.get("configuration"), "losses": sorted(set(runs["loss"])),
            "folds": sorted(int(f) for f in set(runs["fold"])), "run_ids": sorted(runs["run_id"])}


def candidate_row(table: pd.DataFrame) -> str | None:
    """The table's LearnDCG row: the variant the report tested (the study grid's runs carry loss parameters,
    so the row is ``learndcg(normalisation=standard)``, not ``learndcg``); None without LearnDCG runs."""
    candidate = table.attrs.get("candidate", CANDIDATE if CANDIDATE in set(table["loss"]) else None)
    return candidate if candidate is not None and variant_loss(candidate) == CANDIDATE else None


def highest_parts(table: pd.DataFrame, scope: str, ks=NDCG_CUTOFFS) -> list[Part]:
    rows = table.set_index("loss")
    candidate = candidate_row(table)
    if candidate is None:
        return [Part(scope, {}, UNMEASURABLE, f"no {CANDIDATE} runs in this configuration")]
    baselines = [b for b in rows.index if b != candidate and f"p@{ks[0]}" in rows and not np.isnan(rows.loc[b, f"p@{ks[0]}"])]
    if not baselines:
        return [Part(scope, {}, UNMEASURABLE, "no baseline trained on the same folds to test against")]
    parts = []
    for k in ks:
        means = rows[f"ndcg@{k}"].astype(float)
        p = rows[f"p_holm@{k}"] if f"p_holm@{k}" in rows else rows[f"p@{k}"]
        measured = {"k": k, "candidate": candidate, "ndcg": {loss: float(v) for loss, v in means.items()},
                    "p_holm": {b: float(p[b]) for b in baselines}, "folds": int(rows.loc[candidate, "folds"])}
        above = [b for b in baselines if means[b] >= means[candidate]]
        not_significant = [b for b in baselines if b not in above and not bool(rows.loc[b, f"better@{k}"])]
        where = f"{scope} · NDCG@{k}"
        if above:
            parts.append(Part(where, measured, FAILS, f"{', '.join(above)} at or above {candidate} "
                                                      f"({means[candidate]:.4f})"))
        elif not_significant:
            parts.append(Part(where, measured, FAILS, f"{candidate} highest ({means[candidate]:.4f}) but not "
                                                      f"significantly above "
                                                      f"{', '.join(f'{b} (p {p[b]:.3g})' for b in not_significant)}"))
        else:
            parts.append(Part(where, measured, HOLDS, f"{candidate} highest ({means[candidate]:.4f}), every baseline "
                                                      f"p < 0.05 (Holm)"))
    return parts


def neuralloss_parts(table: pd.DataFrame, scope: str, ks=NDCG_CUTOFFS) -> list[Part]:
    rows = table.set_index("loss")
    candidate = candidate_row(table)
    neural = [label for label in rows.index if variant_loss(label) == NEURALLOSS]
    if candidate is None or not neural:
        missing = [x for x, present in ((CANDIDATE, candidate), (NEURALLOSS, neural)) if not present]
        return [Part(scope, {}, UNMEASURABLE, f"{' and '.join(missing)} not trained in this configuration")]
    parts = []
    for label in neural:
        for k in ks:
            diff = float(rows.loc[label, f"diff@{k}"])
            p = float(rows.loc[label, f"p_holm@{k}"] if f"p_holm@{k}" in rows else rows.loc[label, f"p@{k}"])
            measured = {"k": k, "learndcg": float(rows.loc[candidate, f"ndcg@{k}"]),
                        "neuralloss": float(rows.loc[label, f"ndcg@{k}"]), "diff": diff, "p_holm": p,
                        "candidate": candidate, "baseline": label}
            better = bool(rows.loc[label, f"better@{k}"])
            where = f"{scope} · NDCG@{k}" if len(neural) == 1 else f"{scope} · {label} · NDCG@{k}"
            parts.append(Part(where, measured, HOLDS if better else FAILS,
                              f"LearnDCG - NeuralLoss {diff:+.4f}, p {p:.3g} (Holm)"))
    return parts


def theta_parts(store: RunStore, data: str, model: str, experiment: str, configuration: str | None,
                scope: str) -> list[Part]:
    from ltr.cost import completed_runs, in_configuration
    from ltr.drift import drift_diagnostic

    bound = paper_claims()["theta_d_fold_specific"]["settled_below"]
    runs = in_configuration(completed_runs(store, data, model, experiment), configuration)
    runs = runs[runs["loss_name"] == CANDIDATE]
    diag = drift_diagnostic(store, list(runs["run_id"])) if not runs.empty else pd.DataFrame()
    diag = diag[diag["parameter"] == "theta_d"] if not diag.empty else diag
    if diag.empty or diag["fold"].nunique() < 2:
        n = 0 if diag.empty else diag["fold"].nunique()
        return [Part(scope, {}, UNMEASURABLE, f"θ_d recorded for {n} fold(s) of {CANDIDATE}: at least 2 needed")]
    per_fold = {int(r["fold"]): {"theta_final": float(r["theta_final"]), "theta_0": float(r["theta_0"]),
                                 "steps": int(r["steps"]), "of_reference": float(r["of_reference"]),
                                 "one_sign": None if pd.isna(r["one_sign"]) else float(r["one_sign"]),
                                 "settled": bool(abs(r["of_reference"]) < bound)}
                for r in diag.to_dict("records")}
    finals = [f["theta_final"] for f in per_fold.values()]
    measured = {"per_fold": per_fold, "range": max(finals) - min(finals), "min": min(finals), "max": max(finals)}
    drifted = [fold for fold, f in per_fold.items() if not f["settled"]]
    text = (f"final θ_d {min(finals):.4f} to {max(finals):.4f} over {len(per_fold)} folds (range "
            f"{measured['range']:.4f})")
    if drifted:
        return [Part(scope, measured, FAILS, f"{text}; fold(s) {', '.join(map(str, drifted))} did not settle "
                                             f"(|of_reference| >= {bound}: the value follows the step count)")]
    return [Part(scope, measured, HOLDS, f"{text}; every fold settled (|of_reference| < {bound})")]


def cost_ranking(store: RunStore, data: str, model: str, experiment: str, configuration: str | None) -> list[dict]:
    from ltr.cost import completed_runs, cost_effectiveness, in_configuration

    runs = in_configuration(completed_runs(store, data, model, experiment), configuration)
    table = cost_effectiveness(runs, 10).sort_values("minutes_mean", kind="stable")
    return [{"rank": i, "loss": r["loss"], "minutes_mean": float(r["minutes_mean"]), "ndcg10_mean": float(r["ndcg_mean"]),
             "folds": int(r["folds"])} for i, r in enumerate(table.to_dict("records"), start=1)]


def check_findings(store: RunStore, experiment: str) -> dict:
    """``{"experiment", "test", "findings": {name: Finding}, "cost_ranking": {"data / model": [...]}}``."""
    from ltr.data.datasets import display_name
    from ltr.report import ReportError

    pairs = experiment_pairs(store, experiment)
    if not pairs:
        raise ReportError(f"no completed runs in experiment {experiment!r} (see python -m ltr runs)")
    highest, theta, neural, rests, costs = [], [], [], [], {}
    for data, model in pairs:
        scope = f"{display_name(data)} / {model}"  # the user's name for the data, never a cache path
        try:
            table = _table(store, data, model, experiment)
        except ReportError as exc:
            for bucket in (highest, theta, neural):
                bucket.append(Part(scope, {}, UNMEASURABLE, str(exc)))
            continue
        rests.append(_run_record(store, data, model, experiment, table))
        highest += highest_parts(table, scope)
        neural += neuralloss_parts(table, scope)
        theta += theta_parts(store, data, model, experiment, table.attrs.get("configuration"), scope)
        costs[scope] = cost_ranking(store, data, model, experiment, table.attrs.get("configuration"))
    claims = paper_claims()
    found = {"learndcg_highest": from_claim("learndcg_highest", claims["learndcg_highest"], highest, rests_on=rests,
                                            definitions={"test": TEST}),
             "theta_d_fold_specific": from_claim("theta_d_fold_specific", claims["theta_d_fold_specific"], theta,
                                                 rests_on=rests,
                                                 definitions={"reading": claims["theta_d_fold_specific"]["reading"]}),
             "neuralloss_vs_learndcg": from_claim("neuralloss_vs_learndcg", claims["neuralloss_vs_learndcg"], neural,
                                                  rests_on=rests, definitions={"test": TEST})}
    return {"experiment": experiment, "test": TEST, "findings": found, "cost_ranking": costs}


def as_json(result: dict) -> dict:
    return {**result, "findings": {name: f.to_dict() for name, f in result["findings"].items()},
            "cost_ranking_note": "mean training minutes per loss over the configuration's folds (training loop + "
                                 "NeuralLoss pre-training), cheapest first; no cost claim is checked"}


def text_lines(result: dict) -> list[str]:
    lines = [f"experiment {result['experiment']}; test: {result['test']}"]
    finding: Finding
    for finding in result["findings"].values():
        lines.append(f"{finding.name}: {finding.verdict} — {finding.reason}")
        lines.append(f"  paper: {finding.paper}")
        lines += [f"  [{p.verdict}] {p.scope}: {p.reason}" for p in finding.parts]
    for scope, ranking in result["cost_ranking"].items():
        lines.append(f"cost ranking {scope} (mean minutes, cheapest first): "
                     + ", ".join(f"{r['loss']} {r['minutes_mean']:.2f}" for r in ranking))
    return lines
