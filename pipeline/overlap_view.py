"""Data and charts for the "Failure overlap" page (no streamlit here; the page only lays out widgets).

The page reads the studies that ``python -m pipeline run`` wrote (``cache/failure/<dataset>/study.json``)
and starts new runs as background jobs (:func:`submit_study`), like training jobs. Everything it
shows names its configuration (retriever | generator | judge | setup), and a configuration with a
135M model carries a note saying that its figures exercise the pipeline and are not findings.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")  # the page renders figures to images; never open a window
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from core import jobs, paths  # noqa: E402
from pipeline.failure import folder_judgments, reference_note  # noqa: E402
from pipeline.h2r import set_line  # noqa: E402
from pipeline.judging import DEFAULT_CAP  # noqa: E402
from pipeline.overlap import TASKS  # noqa: E402

JOB_KIND = "pipeline.failure-study"
TASK_LABELS = {"h2r": "Hard to retrieve", "h2g": "Hard to generate", "h2j": "Hard to judge"}
# matplotlib-venn's subset order for venn3: (Abc, aBc, ABc, abC, AbC, aBC, ABC) with A, B, C = h2r, h2g, h2j
VENN_ORDER = ("h2r", "h2g", "h2r&h2g", "h2j", "h2r&h2j", "h2g&h2j", "h2r&h2g&h2j")


def study_datasets() -> list[str]:
    """Datasets with a finished study, sorted."""
    root = paths.cache_dir() / "failure"
    return sorted(p.parent.name for p in root.glob("*/study.json")) if root.is_dir() else []


def study_path(dataset: str) -> Path:
    return paths.cache_dir() / "failure" / dataset / "study.json"


def load_study(dataset: str, mtime: float | None = None) -> dict:
    """The study JSON (``mtime`` only keys the page's cache so that a new run is picked up)."""
    return json.loads(study_path(dataset).read_text(encoding="utf-8"))


def configuration_labels(study: dict) -> list[str]:
    return list(study["configurations"])


def components(study: dict) -> dict[str, list[str]]:
    """The choices per selector: retriever, generator, judge, setup."""
    configs = [c["configuration"] for c in study["configurations"].values()]
    return {key: list(dict.fromkeys(c[key] for c in configs)) for key in ("retriever", "generator", "judge", "setup")}


def find_configuration(study: dict, retriever: str, generator: str, judge: str, setup: str) -> str | None:
    for label, c in study["configurations"].items():
        if c["configuration"] == {"retriever": retriever, "generator": generator, "judge": judge, "setup": setup}:
            return label
    return None


def venn_figure(analysis: dict):
    """The area-proportional three-way Venn diagram (matplotlib-venn) of one configuration."""
    from matplotlib_venn import venn3

    counts = tuple(analysis["regions"][name]["count"] for name in VENN_ORDER)
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    if sum(counts) == 0:
        ax.text(0.5, 0.5, "no hard queries", ha="center", va="center")
        ax.set_axis_off()
        return fig
    sizes = analysis["sizes"]
    venn3(subsets=counts, set_labels=[f"{TASK_LABELS[t]} ({sizes[t]})" for t in TASKS], ax=ax)
    ax.set_title(f"{analysis['n_queries']} queries scored by all three tasks", fontsize=10)
    fig.tight_layout()
    return fig


def regions_frame(analysis: dict) -> pd.DataFrame:
    n = analysis["n_queries"]
    rows = [{"region": region_label(name), "key": name, "queries": analysis["regions"][name]["count"],
             "share of all": analysis["regions"][name]["count"] / n if n else None}
            for name in VENN_ORDER]
    return pd.DataFrame(rows)


def region_label(name: str) -> str:
    members = name.split("&")
    if len(members) == 1:
        return f"{members[0].upper()} only"
    if len(members) == 3:
        return "all three"
    return " ∩ ".join(m.upper() for m in members) + " only"


def summary_frame(analysis: dict) -> pd.DataFrame:
    rows = [{"figure": "hard in all three", "value": analysis["all_three"]["share"],
             "queries": analysis["all_three"]["count"]}]
    for task, ex in analysis["exclusive"].items():
        rows.append({"figure": f"{task.upper()} exclusive share", "value": ex["share"], "queries": ex["count"]})
    return pd.DataFrame(rows)


def pairwise_frame(analysis: dict) -> pd.DataFrame:
    largest = {analysis["largest_pairwise"]["pair"], *analysis["largest_pairwise"]["tied_with"]}
    rows = [{"pair": " ∩ ".join(p.upper() for p in key.split("&")), "overlap": f["count"],
             "expected if independent": f["expected_if_independent"], "Jaccard": f["jaccard"],
             "share of first": f["share_of_first"], "share of second": f["share_of_second"],
             "p (hypergeometric, ≥)": f["p_value"], "largest (ties marked)": key in largest}
            for key, f in analysis["pairwise"].items()]
    return pd.DataFrame(rows)


def stability_frame(study: dict) -> pd.DataFrame:
    """Pairwise overlaps across every configuration of the study (one row per configuration)."""
    rows = []
    for label, c in study["configurations"].items():
        a = c["analysis"]
        row = {"configuration": label, "queries": a["n_queries"], "all three": a["all_three"]["share"]}
        for key, f in a["pairwise"].items():
            name = key.replace("&", "∩").upper()
            row[f"{name}"] = f["count"]
            row[f"{name} p"] = f["p_value"]
        row["largest pair"] = (a["largest_pairwise"]["pair"] or "").replace("&", "∩").upper()
        row["135M model"] = ", ".join(c.get("small_model", [])) or ""
        rows.append(row)
    return pd.DataFrame(rows)


def region_queries(study: dict, label: str, region: str) -> pd.DataFrame:
    """The queries of one Venn region with their three values (nDCG@10, BERTScore F1, disagreement)."""
    c = study["configurations"][label]
    config = c["configuration"]
    qids = c["analysis"]["regions"][region]["qids"]
    ndcg = study["retrievers"][config["retriever"]]["per_query"]
    f1 = study["generators"][config["generator"]]["per_query"]
    dis = study["judges"][config["judge"]][config["setup"]]["per_query"]
    rows = [{"qid": q, "query": study["queries"].get(q, ""), "nDCG@10": ndcg.get(q), "BERTScore F1": f1.get(q),
             "disagreement": dis.get(q)} for q in qids]
    return pd.DataFrame(rows, columns=["qid", "query", "nDCG@10", "BERTScore F1", "disagreement"])


def query_detail(study: dict, label: str, qid: str) -> dict:
    """The query, its generated answer and its relevant passages (plain text for ``st.text``)."""
    config = study["configurations"][label]["configuration"]
    generator = study["generators"][config["generator"]]
    passages = study.get("relevant_passages", {}).get(qid, {})
    return {"query": study["queries"].get(qid, ""), "answer": generator["answers"].get(qid),
            "answer_by": generator["provenance"].get("label", config["generator"]),
            "small": bool(generator["provenance"].get("small")), "passages": passages}


def provenance_lines(study: dict, label: str) -> list[str]:
    c = study["configurations"][label]
    config = c["configuration"]
    gen = study["generators"][config["generator"]]
    judge = study["judges"][config["judge"]][config["setup"]]["info"]
    bs = gen["bertscore"]
    return [f"Retriever {config['retriever']}: {study['retrievers'][config['retriever']]['info'].get('provenance', '')}",
            f"Generator {config['generator']}: {gen['provenance'].get('label', '')}; BERTScore encoder "
            f"{bs['encoder']} ({bs['description']}), {bs['aggregate']} over grade-2/3 passages; "
            f"{reference_note(bs)}",
            f"Judge {config['judge']} ({config['setup']}): {judge['provenance'].get('label', '')}; "
            f"{judge['n_pairs_compared']} pairs compared, cap {judge['cap']} per query, "
            f"{judge['n_unparseable']} unparseable answers excluded"]


def set_lines(study: dict, label: str) -> list[str]:
    """Per task: |set| of N, |set|/N, the quantile threshold, the target size and the tie block."""
    info = study["configurations"][label].get("set_info")
    if not info:
        return ["Set sizes: this study predates the tie rule (rerun it for thresholds and tie blocks)."]
    return [f"{TASK_LABELS[task]}: {set_line(info[task])}" for task in TASKS]


def tie_warnings(study: dict, label: str) -> list[str]:
    """One warning per task whose membership ties decided (pipeline.h2r's rule)."""
    info = study["configurations"][label].get("set_info") or {}
    return [f"{TASK_LABELS[t]}: ties decide membership. {info[t]['warning']}" for t in TASKS
            if t in info and info[t]["warning"]]


# ---------------------------------------------------------------------------- background runs
def study_command(dataset: str, folder: str | Path | None, *, generator: str = "auto", judge_llm: str = "auto",
                  cap: int = DEFAULT_CAP, partial_references: str = "exclude") -> list[str]:
    """The CLI the background job runs: every step for ``dataset`` with the data folder's runs and
    judgments, plus the given LLM generator and judge."""
    command = [sys.executable, "-m", "pipeline", "run", "--dataset", dataset, "--generator", generator,
               "--cap", str(int(cap)), "--partial-references", partial_references]
    if folder is not None:
        command += ["--data", str(folder)]
        for judge in folder_judgments(folder, dataset):
            command += ["--judge", judge]
    command += ["--judge", judge_llm]
    return command


def submit_study(dataset: str, folder: str | Path | None, **options) -> int:
    return jobs.submit(study_command(dataset, folder, **options), label=f"failure study on {dataset}",
                       meta={"kind": JOB_KIND, "dataset": dataset})


def study_jobs(limit: int = 10) -> list[jobs.Job]:
    return [j for j in jobs.list_jobs(limit=200) if j.meta.get("kind") == JOB_KIND][:limit]


def jobs_frame(job_list: Sequence[jobs.Job]) -> pd.DataFrame:
    rows = [{"job": j.id, "dataset": j.meta.get("dataset", ""), "status": j.status,
             "progress": _last_line(jobs.read_log_tail(j.log_path, 400)) if j.active else
             (_last_line(j.log_tail or "") if j.status == "failed" else "")} for j in job_list]
    return pd.DataFrame(rows, columns=["job", "dataset", "status", "progress"])


def _last_line(text: str) -> str:
    """The last progress line of a log (tqdm writes carriage returns)."""
    parts = [p.strip() for p in text.replace("\r", "\n").splitlines() if p.strip()]
    return parts[-1][:160] if parts else ""
