"""The Findings page's LearnDCG section (``pages/findings.py``): one experiment's claims checked on the run
store (:mod:`ltr.findings`), its cost ranking, and a comparison's export (:mod:`ltr.export`) as one ZIP."""
from __future__ import annotations

import json

import pandas as pd

from core.export import booktabs, in_temporary_folder
from core.findings import LATEX_REASON_CHARS, part_rows, summary_rows
from ltr.cost import MINUTES_CONVENTION
from ltr.data.datasets import display_name  # noqa: F401  (the Findings page names data by it)
from ltr.store import RunStore


def experiments(store: RunStore) -> list[str]:
    """Experiments with completed runs, by name, then :data:`ltr.findings.NO_EXPERIMENT` when completed runs
    have no experiment name (the Training page stores its runs so: they were never listed before)."""
    from ltr.findings import NO_EXPERIMENT

    runs = store.list_runs(status="completed")
    if runs.empty:
        return []
    named = sorted({e for e in runs["experiment"].dropna()} - {NO_EXPERIMENT})
    return named + ([NO_EXPERIMENT] if runs["experiment"].isna().any() else [])


def experiment_version(store: RunStore, experiment: str) -> tuple:
    """Changes exactly when what the findings of ``experiment`` read does: its completed runs, by id and
    finish time (a run completing, retrained or deleted changes it; runs still training leave it alone, so
    a grid in progress does not make the page check again on every rerun). A cache key of the page."""
    from ltr.findings import experiment_runs

    runs = experiment_runs(store, experiment)
    return str(store.path), tuple(sorted(zip(runs["run_id"], runs["finished"].astype(float))))


def exportable(experiment: str) -> bool:
    """Whether ``ltr export`` can write this experiment's comparison (it takes a named experiment)."""
    from ltr.findings import NO_EXPERIMENT

    return experiment != NO_EXPERIMENT


def check(store: RunStore, experiment: str) -> dict:
    from ltr.findings import check_findings

    return check_findings(store, experiment)


def summary_frame(result: dict, reason_chars: int | None = None) -> pd.DataFrame:
    """One row per finding: verdict, the paper's figure, the claim's rule (statistic, correction, alpha,
    minimum n: shown with the verdict), the n its parts rest on, and the reason (each part's n leads it;
    ``reason_chars``: cut as the exports' LaTeX cuts it)."""
    from ltr.findings import n_text

    found = list(result["findings"].values())
    rows = [{**row, "n": n_text(f), "rule": rule_text(f)} for row, f in zip(summary_rows(found, reason_chars), found)]
    return pd.DataFrame(rows, columns=["finding", "verdict", "n", "paper", "rule", "reason"])


def file_stem(experiment: str) -> str:
    """The experiment as a download's file-name part (the unnamed runs' label has spaces and brackets)."""
    from ltr.findings import NO_EXPERIMENT

    return "no-experiment" if experiment == NO_EXPERIMENT else experiment


def rule_text(finding) -> str:
    """The claim's rule (statistic, correction, alpha, minimum n), shown with the verdict."""
    from ltr.findings import rule_text as text

    return text(finding.rule)


def parts_frame(finding) -> pd.DataFrame:
    """One row per part: scope, verdict, its n (with the unit), the reason."""
    rows = [{**row, "n": "—" if "n" not in p.evidence else f"{p.evidence['n']} {p.evidence.get('unit', '')}".strip()}
            for row, p in zip(part_rows(finding), finding.parts)]
    return pd.DataFrame(rows, columns=["scope", "verdict", "n", "reason"])


def theta_frame(result: dict) -> pd.DataFrame:
    """θ_d and b_d per fold and seed of every comparison (the theta_d_fold_specific finding's figures): b_d at the
    start, at the checkpoint that was tested (empty where the run did not record it) and at the last step."""
    rows = []
    for part in result["findings"]["theta_d_fold_specific"].parts:
        for fold, figures in part.measured.get("per_fold", {}).items():
            for seed, run in figures["seeds"].items():
                rows.append({"data / ranker": part.scope, "fold": fold, "seed": seed,
                             "b_d start": run.get("b_d_start"), "b_d tested": run.get("b_d_tested"),
                             "θ_d final": run["theta_d_final"], "b_d final": run["b_d_final"],
                             "steps": run["steps"], "of_reference": run["of_reference"], "settled": run["settled"]})
    return pd.DataFrame(rows, columns=["data / ranker", "fold", "seed", "b_d start", "b_d tested", "θ_d final",
                                       "b_d final", "steps",
                                       "of_reference", "settled"])


# under the cost ranking: what its minutes are, the one-time pre-training named (ltr.cost's one convention)
COST_CAPTION = ("Mean minutes per loss over the configuration's folds x seeds, cheapest first (no cost claim is "
                "checked). Cost convention: " + MINUTES_CONVENTION + "; pretrain_once_minutes: that one-time "
                "pre-training, pretrain_shared_by: the runs sharing it.")


def cost_frame(result: dict) -> pd.DataFrame:
    rows = [{"data / ranker": scope, **r} for scope, ranking in result["cost_ranking"].items() for r in ranking]
    return pd.DataFrame(rows)


def findings_csv(result: dict) -> str:
    return summary_frame(result).to_csv(index=False)


def findings_latex(result: dict) -> str:
    """The findings table, reasons cut as ``python -m ltr export`` cuts them (a row cannot break across pages)."""
    return booktabs(summary_frame(result, LATEX_REASON_CHARS).drop(columns="rule"),
                    f"The LearnDCG paper's claims checked on experiment {result['experiment']} "
                    f"(test: {result['test']}).", label="tab:ltr-findings",
                    notes=["Reasons cut at about 400 characters; in full: the CSV and JSON downloads and python -m ltr findings --json."])


def findings_json(result: dict) -> str:
    from ltr.findings import as_json

    return json.dumps(as_json(result), indent=1, ensure_ascii=False, default=str)


def comparisons(store: RunStore, experiment: str) -> list[tuple[str, str]]:
    from ltr.findings import experiment_pairs

    return experiment_pairs(store, experiment)


def export_zip(store_path: str, data: str, model: str, experiment: str) -> bytes:
    """The files ``python -m ltr export --data D --model M --experiment E`` writes, as one ZIP."""
    from ltr.export import export_comparison

    def write(folder):
        with RunStore(store_path) as store:
            export_comparison(store, data, model, experiment, folder)

    return in_temporary_folder(write)
