"""The LearnDCG paper's claims checked on one experiment of the run store (``python -m ltr findings``).

Per (data set, ranker) of the experiment, the runs of the report's configuration
(:func:`ltr.report.runs.select_configuration`: runs whose result-defining settings differ only in their seed are one;
default: the configuration with the most runs), with the tree baselines (LambdaMART) on its folds and seeds.
Every figure is a mean over seeds, and each claim is graded by its evidence, with the rule the claims file
(``paper_claims.json``) states beside it:

- ``learndcg_highest``: per NDCG@k, an **Order** claim of the shared inference core (:mod:`core.inference.claims`)
  on the report's one seed-averaged paired test (:func:`ltr.report.paired.paired_table`, via
  :func:`comparison_table`): LearnDCG significantly above every baseline (the tree baselines included) holds, a
  baseline significantly above it does not, and otherwise the verdict is inconclusive and names the tied group (no
  order within it) with the MDE and the n that would decide; its n (paired test queries) and the magnitude in
  NDCG points beside the paper's; inconclusive below the rule's minimum n;
- ``theta_d_fold_specific``: θ_d and b_d = 1 + softplus(θ_d) per fold and seed; fold-specific only if every
  run settled (drift against learning, :func:`ltr.drift.drift_diagnostic`), the folds' range exceeds the
  seed-to-seed spread and a one-way ANOVA over folds says so; one seed: inconclusive; b_d beside the paper's
  1.80–2.15 (the claims file says why b_d is the quantity compared);
- ``neuralloss_vs_learndcg``: where both ran, an **Effect** claim per k: the direction (one-sided) is the verdict,
  the magnitude (the 95% interval against the paper's difference: contains, below, above) is shown apart; a lead
  the test cannot tell from none is inconclusive with the MDE and the n that would decide;
- the cost ranking behind the NDCG-vs-time scatter (mean training minutes per loss over folds x seeds,
  cheapest first). The issue states no cost claim to check, so it is reported without a verdict.

Runs trained from the Training page carry no experiment name; they are checked as the experiment
:data:`NO_EXPERIMENT`. Verdicts as :mod:`core.findings` defines them: one part that does not hold makes the
whole not hold.
"""
from __future__ import annotations

import json
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from core.findings import FAILS, HOLDS, INCONCLUSIVE, UNMEASURABLE, Finding, Part, from_claim
from core.inference.claims import Claim, effect, order
from core.inference.summary import PairedT
from ltr.ndcg_conventions import NDCG_CUTOFFS
from ltr.report.paired import ALPHA, paired_table
from ltr.report.runs import select_configuration, variant_loss
from ltr.store import RunStore

CANDIDATE, NEURALLOSS = "learndcg", "neuralloss"
TEST = ("paired t-test over the pooled test queries of all folds, on per-query NDCG@k averaged over seeds (the query "
        "is the paired unit; ltr.report.paired); learndcg_highest reads it as an Order claim (one-sided against each "
        "baseline, no correction for 'LearnDCG beats each', Holm for 'a baseline beats LearnDCG'), "
        "neuralloss_vs_learndcg as an Effect claim (one-sided direction; magnitude: the two-sided 95% interval against "
        "the paper's difference), both decided by core.inference.claims, alpha = 0.05")
CLAIMS_FILE = Path(__file__).with_name("paper_claims.json")
# The Training page stores its runs without an experiment name (RunConfig.experiment None), while Findings
# listed only named experiments, so dashboard runs never appeared there: they are listed under this name
# (brackets and a colon, unlike a grid's file-stem or TOML name; a grid given exactly this name would be
# read as the unnamed runs)
NO_EXPERIMENT = "(runs without an experiment: Training page)"


@lru_cache(maxsize=1)
def _claims_file() -> dict:
    return json.loads(CLAIMS_FILE.read_text(encoding="utf-8"))


def paper_claims() -> dict:
    return _claims_file()["claims"]


def paper_figures(data: str) -> dict | None:
    """The paper's NDCG@10 figures for the data set ``data`` names (``mq2008``, ``web10k``, ``yahoo`` matched
    in its name, case-insensitive); None for a synthetic or unmatched data set."""
    name = Path(str(data)).name.lower() or str(data).lower()
    if name.startswith("synthetic"):
        return None
    for key, figures in _claims_file()["paper_figures"]["datasets"].items():
        if any(m in name for m in figures["match"]):
            return {"dataset": key, **figures}
    return None


# -- which runs ---------------------------------------------------------------------------------------------

def _in_experiment(runs: pd.DataFrame, experiment: str) -> pd.DataFrame:
    if experiment == NO_EXPERIMENT:
        return runs[runs["experiment"].isna()]
    return runs[runs["experiment"] == experiment]


def experiment_runs(store: RunStore, experiment: str) -> pd.DataFrame:
    """The completed runs of ``experiment`` (:data:`NO_EXPERIMENT`: those stored without one)."""
    runs = store.list_runs(status="completed", experiment=None if experiment == NO_EXPERIMENT else experiment)
    return _in_experiment(runs, experiment)


def experiment_pairs(store: RunStore, experiment: str) -> list[tuple[str, str]]:
    """``(data, model)`` with completed runs in ``experiment``; a tree ranker (LambdaMART) only where no neural
    ranker ran on that data (it is a baseline of theirs otherwise: :func:`ltr.report.runs.reported_models`)."""
    from ltr.report.runs import reported_models

    runs = experiment_runs(store, experiment)
    if runs.empty:
        return []
    return sorted((d, m) for d, g in runs.groupby("data") for m in reported_models(g["model"]))


def comparison_runs(store: RunStore, data: str, model: str, experiment: str) -> pd.DataFrame:
    """Completed runs of ``data``/``model`` in ``experiment`` with minutes, ``configuration`` and ``variant``
    (:func:`ltr.cost.completed_runs`, so the tree baselines of :func:`ltr.report.runs.tree_baselines` too)."""
    from ltr.cost import completed_runs

    return _in_experiment(completed_runs(store, data, model, None if experiment == NO_EXPERIMENT else experiment),
                          experiment).copy()


def comparison_table(store: RunStore, data: str, model: str, runs: pd.DataFrame,
                     ks=NDCG_CUTOFFS) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """``(table, runs, other configurations)``: the report's configuration (:func:`ltr.report.runs.select_configuration`:
    the one with the most runs; runs differing only in seed are one, tree baselines on its folds and seeds
    included) and its seed-averaged paired test (:func:`ltr.report.paired.paired_table`), Holm across the baselines,
    LearnDCG's row the candidate (:func:`candidate_variant`; none: ``attrs["no_candidate"]`` says why)."""
    chosen, configuration, others = select_configuration(runs, None)
    candidate, why = candidate_variant(chosen["variant"])
    table = paired_table(store, chosen, data=data, model=model, candidate=candidate, configuration=configuration,
                         others=others, ks=ks, holm=True, alpha=ALPHA, no_candidate=why)
    return table, chosen, others


def candidate_variant(variants) -> tuple[str | None, str]:
    """LearnDCG's row among ``variants``: the plain ``learndcg``, else its only variant (the study grid's is
    ``learndcg(normalisation=standard)``); ``(None, why)`` without one or with several."""
    mine = sorted({v for v in variants if variant_loss(v) == CANDIDATE})
    if CANDIDATE in mine:
        return CANDIDATE, ""
    if len(mine) == 1:
        return mine[0], ""
    if not mine:
        return None, f"no {CANDIDATE} runs in this configuration"
    return None, f"{CANDIDATE} has several variants in this configuration ({', '.join(mine)})"


# -- learndcg_highest and neuralloss_vs_learndcg --------------------------------------------------------------

def _n_pairs(rows: pd.DataFrame, baselines: list[str], k: int) -> int:
    """The paired test queries behind the tests at k (the smallest over the baselines); a table from
    :func:`ltr.report.paired.significance_table` (no ``pairs@k``) counts the queries of the loss with fewest."""
    if f"pairs@{k}" in rows:
        return int(min(rows.loc[b, f"pairs@{k}"] for b in baselines))
    return int(rows["queries"].min())


def _seeds_text(table: pd.DataFrame, folds: int) -> str:
    """``5 folds × 3 seeds``, naming the losses trained on other seeds than the rest (their per-query NDCG
    is averaged over fewer or other seeds)."""
    seeds = table.attrs.get("seeds")
    if not seeds:
        return f"{folds} folds"
    text = f"{folds} folds × {len(seeds)} seed{'s' if len(seeds) != 1 else ''}"
    other = {v: s for v, s in (table.attrs.get("seeds_of") or {}).items() if s != seeds}
    return text + ("; other seeds: " + ", ".join(f"{v} {','.join(map(str, s))}" for v, s in other.items())
                   if other else "")


def _magnitude(table: pd.DataFrame, rows: pd.DataFrame, candidate: str, baselines: list[str], k: int) -> dict:
    """LearnDCG minus each baseline in NDCG points here and, at NDCG@10 where the paper gives both figures,
    the paper's difference."""
    out = {"measured_points": {b: 100 * float(rows.loc[b, f"diff@{k}"]) for b in baselines}}
    figures = paper_figures(table["data"].iloc[0]) if len(table) else None
    if figures and figures.get("ranker") not in (None, table["model"].iloc[0]):
        figures = None  # the paper's figure is another ranker's (WEB10K's are the MLP's)
    if figures and k == 10:
        paper = {variant_loss(b): round(figures["learndcg"] - figures["baselines"][variant_loss(b)], 2)
                 for b in baselines if variant_loss(b) in figures["baselines"]}
        if paper:
            out.update(paper_points=paper, paper_dataset=figures["dataset"], paper_learndcg=figures["learndcg"])
    return out


def _magnitude_text(magnitude: dict, names: list[str]) -> str:
    paper = magnitude.get("paper_points", {})
    return ", ".join(f"{b} {magnitude['measured_points'][b]:+.2f} pts"
                     + (f" (paper {paper[variant_loss(b)]:+.2f})" if variant_loss(b) in paper else "")
                     for b in names)


def _evidence(table, rows, candidate, baselines, k, claim: str) -> dict:
    """The report's figures behind a claim at k: n, the two-sided test and Holm p per baseline (as the table shows
    them), the magnitude beside the paper's, folds, seeds, configuration and ranker."""
    rule = paper_claims()[claim]["rule"]
    p_col = f"p_holm@{k}" if f"p_holm@{k}" in rows else f"p@{k}"
    return {"n": _n_pairs(rows, baselines, k), "unit": "paired queries", "minimum_n": rule["min_queries"],
            "statistic": rule["statistic"], "correction": f"{rule['correction']} ({len(baselines)} baseline(s) at "
                                                          f"NDCG@{k})",
            "alpha": rule["alpha"],
            "test": {b: {"diff_points": 100 * float(rows.loc[b, f"diff@{k}"]), "p": float(rows.loc[b, f"p@{k}"]),
                         "p_holm": float(rows.loc[b, p_col])} for b in baselines},
            "magnitude": _magnitude(table, rows, candidate, baselines, k),
            "folds": int(rows.loc[candidate, "folds"]), "seeds": table.attrs.get("seeds"),
            "configuration": table.attrs.get("configuration"),
            "models": [f"ranker: {table['model'].iloc[0]}"]}


def _claim(name: str) -> Claim:
    """The claims file's rule of ``name`` as the inference core reads it (:mod:`core.inference.claims`)."""
    return Claim.from_rule(name, paper_claims()[name]["rule"])


def _differences(rows: pd.DataFrame, k: int, baseline: str) -> PairedT:
    """LearnDCG minus ``baseline`` over the paired queries at k, in NDCG points, from the report's table (its
    ``diff@k``, ``sd_diff@k``, ``pairs@k``: the seed-averaged pairs' mean, SD and count)."""
    return PairedT(100 * float(rows.loc[baseline, f"diff@{k}"]), 100 * float(rows.loc[baseline, f"sd_diff@{k}"]),
                   int(rows.loc[baseline, f"pairs@{k}"]))


def _power_note(decision) -> str:
    return f"; {decision.power_text()} (NDCG points)" if decision.verdict == INCONCLUSIVE and decision.power else ""


def highest_parts(table: pd.DataFrame, scope: str, ks=NDCG_CUTOFFS) -> list[Part]:
    """Per k, an Order claim (:func:`core.inference.claims.order`): LearnDCG against each baseline on the paired
    queries. Holds when it is significantly above each (one-sided, no correction: every one must hold); does not
    hold when a baseline is significantly above it (Holm); otherwise inconclusive, naming the tied group (no order
    within it) with the MDE and the n that would decide; inconclusive below the rule's minimum n."""
    rows = table.set_index("loss")
    candidate = candidate_row(table)
    if candidate is None:
        return [Part(scope, {}, UNMEASURABLE, table.attrs.get("no_candidate") or f"no {CANDIDATE} runs in this "
                                                                                  f"configuration")]
    baselines = [b for b in rows.index if b != candidate and f"p@{ks[0]}" in rows and not np.isnan(rows.loc[b, f"p@{ks[0]}"])]
    if not baselines:
        return [Part(scope, {}, UNMEASURABLE, "no baseline trained on the same folds to test against")]
    claim = _claim("learndcg_highest")
    aliases = set(table.attrs.get("identical") or {})  # reported under a second name: one competitor, not two
    parts = []
    for k in ks:
        means = rows[f"ndcg@{k}"].astype(float)
        evidence = _evidence(table, rows, candidate, baselines, k, "learndcg_highest")
        decision = order(candidate, {b: _differences(rows, k, b) for b in baselines if b not in aliases}, claim)
        evidence.update({key: value for key, value in decision.evidence().items() if key != "n"})
        evidence["shown"] = f"order of LearnDCG against each baseline, NDCG points: {decision.shown}"
        measured = {"k": k, "candidate": candidate, "ndcg": {loss: float(v) for loss, v in means.items()},
                    "p_holm": {b: evidence["test"][b]["p_holm"] for b in baselines}, "folds": evidence["folds"],
                    "seeds": evidence["seeds"], "n": evidence["n"], "tied": list(decision.tied)}
        head = (f"n = {evidence['n']} paired queries ({_seeds_text(table, evidence['folds'])}); {candidate} "
                f"{means[candidate]:.4f}")
        size = _magnitude_text(evidence["magnitude"], baselines)
        parts.append(Part(f"{scope} · NDCG@{k}", measured, decision.verdict,
                          f"{head}: {decision.reason()}{_power_note(decision)} ({size})", evidence))
    return parts


def candidate_row(table: pd.DataFrame) -> str | None:
    """The table's LearnDCG row: the variant the table tested (the study grid's runs carry loss parameters,
    so the row is ``learndcg(normalisation=standard)``, not ``learndcg``); None without LearnDCG runs."""
    candidate = table.attrs.get("candidate", CANDIDATE if CANDIDATE in set(table["loss"]) else None)
    return candidate if candidate is not None and variant_loss(candidate) == CANDIDATE else None


def neuralloss_parts(table: pd.DataFrame, scope: str, ks=NDCG_CUTOFFS) -> list[Part]:
    """Per k, an Effect claim (:func:`core.inference.claims.effect`) on LearnDCG minus NeuralLoss per paired query:
    the direction (one-sided) is the verdict; the magnitude (the two-sided interval at the level against the
    paper's difference, at NDCG@10 where the paper gives both figures) is reported apart. A lead the test cannot
    tell from none is inconclusive with the MDE and the n that would decide, never "does not hold"."""
    rows = table.set_index("loss")
    candidate = candidate_row(table)
    neural = [label for label in rows.index if variant_loss(label) == NEURALLOSS]
    if candidate is None or not neural:
        missing = [x for x, present in ((CANDIDATE, candidate), (NEURALLOSS, neural)) if not present]
        return [Part(scope, {}, UNMEASURABLE, f"{' and '.join(missing)} not trained in this configuration")]
    baselines = [b for b in rows.index if b != candidate and not np.isnan(rows.loc[b, f"p@{ks[0]}"])]
    claim = _claim("neuralloss_vs_learndcg")
    parts = []
    for label in neural:
        for k in ks:
            evidence = _evidence(table, rows, candidate, baselines, k, "neuralloss_vs_learndcg")
            evidence["n"] = _n_pairs(rows, [label], k)
            paper = evidence["magnitude"].get("paper_points", {}).get(variant_loss(label))
            decision = effect(_differences(rows, k, label), claim, paper=paper)
            evidence.update({key: value for key, value in decision.evidence().items() if key != "n"})
            evidence["correction"] = claim_correction = paper_claims()["neuralloss_vs_learndcg"]["rule"]["correction"]
            evidence["shown"] = (f"paired t of LearnDCG - NeuralLoss in NDCG points (one-sided direction, "
                                 f"p {decision.p_holds:.3g}): {decision.shown}")
            diff = evidence["test"][label]["diff_points"] / 100
            measured = {"k": k, "learndcg": float(rows.loc[candidate, f"ndcg@{k}"]),
                        "neuralloss": float(rows.loc[label, f"ndcg@{k}"]), "diff": diff,
                        "p_one_sided": decision.p_holds, "magnitude": decision.magnitude,
                        "interval_points": decision.details["magnitude_interval"], "paper_points": paper,
                        "candidate": candidate, "baseline": label, "n": evidence["n"]}
            where = f"{scope} · NDCG@{k}" if len(neural) == 1 else f"{scope} · {label} · NDCG@{k}"
            text = (f"n = {evidence['n']} paired queries; LearnDCG - NeuralLoss in NDCG points: {decision.reason()}"
                    f"{_power_note(decision)} (correction: {claim_correction})")
            parts.append(Part(where, measured, decision.verdict, text, evidence))
    return parts


# -- theta_d_fold_specific ------------------------------------------------------------------------------------

def theta_parts(store: RunStore, runs: pd.DataFrame, candidate: str | None, scope: str) -> list[Part]:
    """θ_d and b_d per fold and seed of the candidate's runs (``runs``: one seed group), graded by the claims
    file's rule (see the module docstring)."""
    from ltr.drift import drift_diagnostic, log_base

    claim = paper_claims()["theta_d_fold_specific"]
    rule, bound, (low, high) = claim["rule"], claim["settled_below"], claim["paper_range"]
    mine = runs[runs["variant"] == candidate] if candidate is not None else runs.iloc[:0]
    diag = drift_diagnostic(store, list(mine["run_id"])) if not mine.empty else pd.DataFrame()
    diag = diag[diag["parameter"] == "theta_d"] if not diag.empty else diag
    if diag.empty or diag["fold"].nunique() < rule["min_folds"]:
        n = 0 if diag.empty else diag["fold"].nunique()
        return [Part(scope, {}, UNMEASURABLE, f"θ_d recorded for {n} fold(s) of {CANDIDATE}: at least "
                                              f"{rule['min_folds']} needed", {"n": n, "unit": "folds"})]
    seed_of = dict(zip(mine["run_id"], mine["seed"].astype(int)))
    tested = tested_parameters(store, mine)
    diag = diag.assign(seed=diag["run_id"].map(seed_of), b_final=log_base(diag["theta_final"].astype(float)),
                       b_start=log_base(diag["theta_0"].astype(float)))
    # the folds are compared on the value the tested ranker was trained with (its best validation epoch) where
    # every run recorded it, else on the last step's; the other is kept beside it
    at_test = not diag.empty and all(run_id in tested and "b_d" in tested[run_id] for run_id in diag["run_id"])
    b_compared = diag["run_id"].map(lambda r: tested[r]["b_d"]).astype(float) if at_test else diag["b_final"]
    # θ_d from b_d = 1 + softplus(θ_d) (ltr.losses.learndcg.inverse_softplus, vectorised: that module loads torch)
    diag = diag.assign(b_compared=b_compared, theta_compared=np.log(np.expm1(b_compared - 1)))
    per_fold, b_means, b_by_fold = {}, {}, []
    for fold, g in diag.groupby("fold"):
        seeds = {int(r["seed"]): {"theta_0": float(r["theta_0"]), "b_d_start": float(r["b_start"]),
                                  "theta_d_final": float(r["theta_final"]),
                                  "b_d_final": float(r["b_final"]), "steps": int(r["steps"]),
                                  "of_reference": float(r["of_reference"]),
                                  "one_sign": None if pd.isna(r["one_sign"]) else float(r["one_sign"]),
                                  "settled": bool(abs(r["of_reference"]) < bound),
                                  **{f"{name}_tested": value for name, value in tested.get(r["run_id"], {}).items()}}
                 for r in g.to_dict("records")}
        b = g["b_compared"].to_numpy(float)
        per_fold[int(fold)] = {"seeds": seeds, "theta_d_mean": float(g["theta_compared"].mean()),
                               "b_d_mean": float(b.mean()), "b_d_seed_range": float(b.max() - b.min()),
                               "b_d_final_mean": float(g["b_final"].mean()),
                               "b_d_start_mean": float(g["b_start"].mean()),
                               "in_paper_range": bool(low <= b.mean() <= high)}
        b_means[int(fold)] = float(b.mean())
        b_by_fold.append(b)
    seed_counts = sorted({len(f["seeds"]) for f in per_fold.values()})
    seeds_per_fold = seed_counts[0]
    fold_range = max(b_means.values()) - min(b_means.values())
    theta_means = [f["theta_d_mean"] for f in per_fold.values()]
    measured = {"per_fold": per_fold, "compared_quantity": claim["compared_quantity"],
                "read_at": "tested checkpoint" if at_test else "last step", "b_d_range": fold_range,
                "theta_d_range": max(theta_means) - min(theta_means),
                "b_d_min": min(b_means.values()), "b_d_max": max(b_means.values()),
                "seeds_per_fold": seeds_per_fold, "paper_range": [low, high],
                "folds_in_paper_range": sorted(f for f, v in per_fold.items() if v["in_paper_range"])}
    evidence = {"n": len(per_fold), "unit": "folds", "seeds_per_fold": seeds_per_fold,
                "statistic": rule["statistic"], "alpha": rule["alpha"], "minimum_seeds": rule["min_seeds"],
                "compared_quantity": claim["compared_quantity"], "paper_range": [low, high]}
    seeds_text = "–".join(map(str, (seed_counts[0], seed_counts[-1]) if len(seed_counts) > 1 else seed_counts))
    text = (f"{len(per_fold)} folds × {seeds_text} seed{'' if seed_counts == [1] else 's'}: "
            f"b_d {min(b_means.values()):.4f} to {max(b_means.values()):.4f} (θ_d {min(theta_means):.4f} to {max(theta_means):.4f}), across-fold range "
            f"{fold_range:.4f}; {len(measured['folds_in_paper_range'])} of {len(per_fold)} folds' b_d inside the "
            f"paper's {low:.2f}–{high:.2f}")
    if seeds_per_fold >= rule["min_seeds"]:  # measured whatever the verdict: it is part of the evidence
        spread = max(f["b_d_seed_range"] for f in per_fold.values())
        anova = _one_way_anova(b_by_fold)
        measured.update(seed_spread=spread, anova=anova)
        evidence.update(seed_spread=spread, fold_range=fold_range, anova=anova)
        text += f", seed-to-seed spread {spread:.4f}, one-way ANOVA F {anova['F']:.3g}, p {anova['p']:.3g}"
    runs_total = sum(len(v["seeds"]) for v in per_fold.values())
    drifted = sorted((f, s) for f, v in per_fold.items() for s, r in v["seeds"].items() if not r["settled"])
    identifiable, why_identifiable = _identifiable(per_fold, drifted, runs_total, bound, low)
    fold_specific, why_fold = _fold_specific(measured, fold_range, seeds_per_fold, rule)
    measured.update(identifiable={"verdict": identifiable, "step_correlation": _step_correlation(per_fold)},
                    fold_specific={"verdict": fold_specific})
    evidence["step_correlation"] = r = measured["identifiable"]["step_correlation"]
    anova = measured.get("anova")
    evidence["shown"] = ("b_d per fold: range " + f"{fold_range:.4f}"
                         + (f" vs seed spread {measured['seed_spread']:.4f}, one-way ANOVA p {anova['p']:.3g}"
                            if anova else "") + (f"; θ_d's climb vs steps r {r:.4f}" if r is not None else "")
                         + f"; identifiable: {identifiable}; fold-specific: {fold_specific}")
    verdict = FAILS if FAILS in (identifiable, fold_specific) else (
        INCONCLUSIVE if INCONCLUSIVE in (identifiable, fold_specific) else HOLDS)
    finals = [f["b_d_final_mean"] for f in per_fold.values()]
    where = (f"b_d read at the checkpoint that was tested (its best validation epoch; at the last step "
             f"{min(finals):.4f} to {max(finals):.4f})" if at_test else
             "b_d read at the last logged step, up to the early-stopping patience after the checkpoint that was tested "
             "(the runs did not record it at the tested checkpoint)")
    return [Part(scope, measured, verdict, f"{text}; {where}; identifiable: {identifiable} ({why_identifiable}); "
                                           f"fold-specific: {fold_specific} ({why_fold})", evidence)]


def tested_parameters(store: RunStore, runs: pd.DataFrame) -> dict[str, dict[str, float]]:
    """``{run_id: {theta_d, b_d, b_g, alpha}}`` at the end of each run's best validation epoch (the checkpoint that
    was tested), where the trainer recorded the learned loss parameters per epoch; runs without them are absent."""
    names = ("theta_d", "b_d", "b_g", "alpha")
    series = store.epoch_series(list(runs["run_id"]), list(names))
    best = dict(zip(runs["run_id"], runs["best_epoch"])) if "best_epoch" in runs else {}
    out: dict[str, dict[str, float]] = {}
    for run_id, name, epoch, value in series[["run_id", "name", "epoch", "value"]].itertuples(index=False):
        if best.get(run_id) is not None and not pd.isna(best[run_id]) and int(epoch) == int(best[run_id]):
            out.setdefault(run_id, {})[name] = float(value)
    return out


def _step_correlation(per_fold: dict) -> float | None:
    """Pearson r of the runs' climb of θ_d (last step's value less its start) against their step counts (scipy):
    near 1 where the value follows the step count. The climb, not the final value: runs that start elsewhere (a
    tuned or user-chosen start) would otherwise correlate with their starts. None with fewer than 3 runs or one
    step count."""
    from scipy import stats

    runs = [r for v in per_fold.values() for r in v["seeds"].values()]
    steps, theta = [r["steps"] for r in runs], [r["theta_d_final"] - r["theta_0"] for r in runs]
    if len(runs) < 3 or len(set(steps)) < 2 or len(set(theta)) < 2:
        return None
    return float(stats.pearsonr(steps, theta).statistic)


def _identifiable(per_fold: dict, drifted: list, runs_total: int, bound: float,
                  paper_low: float) -> tuple[str, str]:
    """Is θ_d set by the data rather than by the step count? Not where a run did not settle (ltr.drift): under the
    paper's formula b_d only rescales the loss (standard normalisation; it cancels under learned normalisation),
    so θ_d can only climb with the steps (ltr/losses/learndcg.py)."""
    r = _step_correlation(per_fold)
    steps = (f"θ_d's climb (last step less start) against steps r = {r:.4f}" if r is not None
             else "no step correlation (fewer than 3 runs)")
    if drifted:
        used = [per_fold[f]["seeds"][s]["of_reference"] for f, s in drifted]
        which = (f"all {runs_total} runs" if len(drifted) == runs_total else
                 f"run(s) {', '.join(f'fold {f} seed {s}' for f, s in drifted)}")
        return FAILS, (f"{which} did not settle (of_reference {min(used):.2f} to {max(used):.2f}, |of_reference| >= "
                       f"{bound}: the value follows the step count), {steps}; b_d only rescales the loss under the "
                       f"paper's formula, so θ_d can only climb with the steps{_reach(per_fold, paper_low)}")
    return HOLDS, f"every run settled (|of_reference| < {bound}), {steps}"


def _reach(per_fold: dict, paper_low: float) -> str:
    """What the runs' starting b_d leave within reach of a value that can only climb."""
    starts = sorted({round(r["b_d_start"], 4) for v in per_fold.values() for r in v["seeds"].values()})
    where = f"b_d = {starts[0]:g}" if len(starts) == 1 else f"starts of b_d = {starts[0]:.2f} to {starts[-1]:.2f}"
    if starts[0] >= paper_low:
        return f", and from {where} the paper's {paper_low:.2f} is out of reach"
    return f" from its start ({where}): the value reached is the start plus the climb"


def _fold_specific(measured: dict, fold_range: float, seeds_per_fold: int, rule: dict) -> tuple[str, str]:
    """Do the folds differ more than the seeds do (range against the seed-to-seed spread, one-way ANOVA)? Not
    answerable where the folds started from different values (tuned per fold, or set per run): their difference is
    then the starts'."""
    starts = [v["b_d_start_mean"] for v in measured["per_fold"].values()]
    if max(starts) - min(starts) > 1e-6:
        return INCONCLUSIVE, (f"the folds started b_d from different values ({min(starts):.2f} to {max(starts):.2f}, "
                              "e.g. tuned per fold), so a difference between the folds is their starts', not the "
                              "data's; only runs started alike can answer it")
    if fold_range == 0:
        return FAILS, "θ_d is the same in every fold"
    if seeds_per_fold < rule["min_seeds"]:
        return INCONCLUSIVE, ("one seed per fold: the seed-to-seed spread is unknown, so the folds' differences "
                              "cannot be told from seed noise")
    if fold_range <= measured["seed_spread"]:
        return FAILS, "the folds differ no more than the seeds do"
    if not measured["anova"]["p"] < rule["alpha"]:
        return INCONCLUSIVE, f"the range exceeds the spread but the ANOVA's p is not below {rule['alpha']}"
    return HOLDS, "the folds differ more than the seeds do"


def _one_way_anova(groups: list[np.ndarray]) -> dict:
    """scipy.stats.f_oneway over the folds (seeds as replicates); a zero within-fold spread gives F = inf,
    p = 0 when the folds differ (scipy's warning about it is the degenerate case this reads on purpose)."""
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.f_oneway(*groups)
    return {"F": float(result.statistic), "p": float(result.pvalue), "df_between": len(groups) - 1,
            "df_within": int(sum(len(g) for g in groups) - len(groups))}


# -- cost and the whole -----------------------------------------------------------------------------------------

def cost_ranking(runs: pd.DataFrame) -> list[dict]:
    """Mean training minutes (:data:`ltr.cost.MINUTES_CONVENTION`) and test NDCG@10 per loss variant over the
    group's folds x seeds, cheapest first; a variant with a one-time pre-training also gives it
    (``pretrain_once_minutes``, ``pretrain_shared_by``: :func:`ltr.cost.pretraining_summary`)."""
    from ltr.cost import pretraining_summary

    agg = (runs.groupby("variant").agg(minutes_mean=("minutes", "mean"), ndcg10_mean=("test_ndcg10", "mean"),
                                       folds=("fold", "nunique"), seeds=("seed", "nunique"))
           .join(pretraining_summary(runs, by="variant"))
           .reset_index().sort_values(["minutes_mean", "variant"], kind="stable"))
    return [{"rank": i, "loss": r["variant"], "minutes_mean": float(r["minutes_mean"]),
             "ndcg10_mean": float(r["ndcg10_mean"]), "folds": int(r["folds"]), "seeds": int(r["seeds"]),
             **({"pretrain_once_minutes": float(r["pretrain_once_minutes"]),
                 "pretrain_shared_by": int(r["pretrain_shared_by"])}
                if pd.notna(r.get("pretrain_once_minutes")) else {})}
            for i, r in enumerate(agg.to_dict("records"), start=1)]


def _run_record(experiment: str, data: str, model: str, configuration: str, runs: pd.DataFrame,
                others: list[str]) -> dict:
    return {"kind": "runs", "experiment": experiment, "data": data, "model": model, "configuration": configuration,
            "losses": sorted(set(runs["variant"])), "folds": sorted(int(f) for f in set(runs["fold"])),
            "seeds": sorted(int(s) for s in set(runs["seed"])), "run_ids": sorted(runs["run_id"]),
            "other_configurations": others}


def check_findings(store: RunStore, experiment: str) -> dict:
    """``{"experiment", "test", "findings": {name: Finding}, "cost_ranking": {"data / model": [...]}}``."""
    from ltr.data.datasets import display_name
    from ltr.report.runs import ReportError

    pairs = experiment_pairs(store, experiment)
    if not pairs:
        raise ReportError(f"no completed runs in experiment {experiment!r} (see python -m ltr runs)")
    highest, theta, neural, rests, costs = [], [], [], [], {}
    for data, model in pairs:
        scope = f"{display_name(data)} / {model}"  # the user's name for the data, never a cache path
        table, runs, others = comparison_table(store, data, model, comparison_runs(store, data, model, experiment))
        configuration = table.attrs["configuration"]
        rests.append(_run_record(experiment, data, model, configuration, runs, others))
        highest += highest_parts(table, scope)
        neural += neuralloss_parts(table, scope)
        theta += theta_parts(store, runs, table.attrs["candidate"], scope)
        costs[scope] = cost_ranking(runs)
    claims = paper_claims()
    theta_claim = claims["theta_d_fold_specific"]
    found = {"learndcg_highest": from_claim("learndcg_highest", claims["learndcg_highest"], highest, rests_on=rests,
                                            definitions={"test": TEST}),
             "theta_d_fold_specific": from_claim("theta_d_fold_specific", theta_claim, theta, rests_on=rests,
                                                 definitions={"reading": theta_claim["reading"],
                                                              "compared_quantity": theta_claim["compared_quantity"],
                                                              "why_b_d": theta_claim["why_b_d"]}),
             "neuralloss_vs_learndcg": from_claim("neuralloss_vs_learndcg", claims["neuralloss_vs_learndcg"], neural,
                                                  rests_on=rests, definitions={"test": TEST})}
    return {"experiment": experiment, "test": TEST, "findings": found, "cost_ranking": costs}


COST_RANKING_NOTE = ("mean training minutes per loss over the configuration's folds x seeds, cheapest first; no "
                     "cost claim is checked. Cost convention: ")


def as_json(result: dict) -> dict:
    from ltr.cost import MINUTES_CONVENTION

    return {**result, "findings": {name: f.to_dict() for name, f in result["findings"].items()},
            "cost_ranking_note": COST_RANKING_NOTE + MINUTES_CONVENTION}


def rule_text(rule: dict) -> str:
    """A claim's rule in one line: statistic, correction, alpha, minimum n (shown with the verdict)."""
    parts = [rule.get("statistic", "")]
    if rule.get("correction"):
        parts.append(rule["correction"])
    if "alpha" in rule:
        parts.append(f"alpha = {rule['alpha']}")
    for key, unit in (("min_queries", "paired queries"), ("min_folds", "folds"), ("min_seeds", "seeds per fold")):
        if key in rule:
            parts.append(f"minimum {rule[key]} {unit}")
    return "; ".join(p for p in parts if p)


def n_text(finding: Finding) -> str:
    """The n its parts' verdicts rest on (``120 paired queries``, ``40–120 paired queries``); ``—`` without."""
    counts = [(p.evidence["n"], p.evidence.get("unit", "")) for p in finding.parts if "n" in p.evidence]
    if not counts:
        return "—"
    low, high = min(n for n, _ in counts), max(n for n, _ in counts)
    return (f"{low}" if low == high else f"{low}–{high}") + f" {counts[0][1]}".rstrip()


def text_lines(result: dict, verbose: bool = False) -> list[str]:
    """``ltr findings``' text, within 100 columns (:func:`core.findings.finding_lines`): per finding its
    verdict, n and reason on a line, then a line per part; ``verbose``: every reason, rule and headline whole."""
    from core.findings import MORE_TEXT, finding_lines, one_line, wrapped
    from ltr.cost import MINUTES_CONVENTION

    as_lines = (lambda text, indent="": wrapped(text, indent)) if verbose else (
        lambda text, indent="": [one_line(indent + text)])
    lines = as_lines(f"experiment {result['experiment']}; test: {result['test']}")
    finding: Finding
    for finding in result["findings"].values():
        lines += finding_lines(finding, verbose, n=n_text(finding))
    for scope, ranking in result["cost_ranking"].items():
        lines += as_lines(f"cost ranking {scope} (mean minutes over folds × seeds, cheapest first): "
                          + ", ".join(f"{r['loss']} {r['minutes_mean']:.2f}" + (
                              f" (incl. its share of {r['pretrain_once_minutes']:.2f} min one-time pre-training "
                              f"shared by {r['pretrain_shared_by']} runs)" if "pretrain_once_minutes" in r else "")
                                      for r in ranking))
    if result["cost_ranking"]:
        lines += as_lines(f"cost convention: {MINUTES_CONVENTION}", "  ")
    return lines if verbose else [*lines, MORE_TEXT]
