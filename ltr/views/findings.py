"""The Findings page's LearnDCG section (``pages/findings.py``): one experiment's claims checked on the run
store (:mod:`ltr.findings`), its cost ranking, and a comparison's export (:mod:`ltr.export`) as one ZIP."""
from __future__ import annotations

import json

import pandas as pd

from core.export import booktabs, in_temporary_folder
from core.findings import part_rows, summary_rows
from ltr.data.datasets import display_name  # noqa: F401  (the Findings page names data by it)
from ltr.store import RunStore


def experiments(store: RunStore) -> list[str]:
    """Experiments with completed runs, by name."""
    runs = store.list_runs(status="completed")
    return sorted({e for e in runs["experiment"].dropna()}) if not runs.empty else []


def experiment_version(store: RunStore, experiment: str) -> tuple:
    """Changes exactly when what the findings of ``experiment`` read does: its completed runs, by id and
    finish time (a run completing, retrained or deleted changes it; runs still training leave it alone, so
    a grid in progress does not make the page check again on every rerun). A cache key of the page."""
    runs = store.list_runs(status="completed", experiment=experiment)
    return str(store.path), tuple(sorted(zip(runs["run_id"], runs["finished"].astype(float))))


def check(store: RunStore, experiment: str) -> dict:
    from ltr.findings import check_findings

    return check_findings(store, experiment)


def summary_frame(result: dict) -> pd.DataFrame:
    return pd.DataFrame(summary_rows(result["findings"].values()), columns=["finding", "verdict", "paper", "reason"])


def parts_frame(finding) -> pd.DataFrame:
    return pd.DataFrame(part_rows(finding), columns=["scope", "verdict", "reason"])


def cost_frame(result: dict) -> pd.DataFrame:
    rows = [{"data / ranker": scope, **r} for scope, ranking in result["cost_ranking"].items() for r in ranking]
    return pd.DataFrame(rows)


def findings_csv(result: dict) -> str:
    return summary_frame(result).to_csv(index=False)


def findings_latex(result: dict) -> str:
    return booktabs(summary_frame(result), f"The LearnDCG paper's claims checked on experiment {result['experiment']} "
                                           f"(test: {result['test']}).", label="tab:ltr-findings")


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
