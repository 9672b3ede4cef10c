"""Data and charts for the dashboard's query-failure pages (no streamlit here; pages only lay out widgets).

The "Hard to retrieve" page shows, for one TREC DL year: how much of the judgments the passage texts
at hand cover, which retriever runs exist and where they came from (an *imported* run file, e.g. the
data folder's full-corpus runs, or a run *computed here* over the data folder's passages, a partial
corpus), and the hard-to-retrieve sets of :func:`pipeline.retrieval.h2r.h2r_report` with their intersection.

The page never retrieves itself: BM25 / dense retrieval runs as a background job
(``python -m pipeline retrieve``, the job kind :data:`pipeline.retrieval.jobs.RETRIEVAL`) and its run appears through
:func:`run_sources` once the job has written it (run file and provenance ``.json``) to the cache.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go

from core import jobs, paths
from core.jobs.progress import job_messages
from pipeline.data import datasets
from pipeline.retrieval import retrievers
from pipeline.data.datasets import TrecDlData
from pipeline.sets.rule import DEFAULT_QUANTILE
from pipeline.retrieval.h2r import h2r_report
from pipeline.retrieval.jobs import RETRIEVAL  # noqa: F401  (the page's job kind: it submits and lists through it)
from pipeline.retrieval.retrievers import COMPUTABLE, RetrieverRun  # noqa: F401  (the page offers views.COMPUTABLE)

DATASET_NAMES: tuple[str, ...] = tuple(datasets.DATASETS)
MEASURE = "nDCG@10"
CONFIG_HELP = ("Configure it in `irdash.toml` at the project root (`[data]` then `trec_dl = \"/path/to/trec_dl\"`) "
               "or with the environment variable `IRDASH_DATA_TREC_DL=/path/to/trec_dl`, then reload. "
               "The folder holds `topics.dlYY*.txt`, `qrels.dlYY-passage.txt`, `passages.msmarco-v*.tsv` and "
               "`runs/run.<retriever>.<dataset>.txt`: see the **Data** section of `README.md`.")
# Retriever i always gets the same colour on every chart of the page.
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
REGION_COLOURS = {"hard under both": "#d62728", "hard only under x": "#ff7f0e",
                  "hard only under y": "#9467bd", "neither": "#7f7f7f"}


# ---------------------------------------------------------------------------- data folder and dataset
def data_folder_status() -> tuple[Path | None, str]:
    """``(folder, "")`` when the TREC DL folder is configured and exists, else ``(None, why)``.

    The page needs a local folder: without one, :func:`pipeline.data.datasets.load_dataset` would fall
    back to ir_datasets, which downloads the corpus, and a dashboard must not start that.
    """
    folder = paths.data_folder("trec_dl")
    if folder is None:
        return None, "No TREC DL data folder is configured."
    if not folder.is_dir():
        return None, f"The configured TREC DL data folder {folder} does not exist."
    return folder, ""


def load(dataset: str, folder: str | Path) -> TrecDlData:
    """One TREC DL year from ``folder`` (never from ir_datasets: the folder is always given)."""
    return datasets.load_dataset(dataset, folder)


def coverage_frame(data: TrecDlData) -> pd.DataFrame:
    """Judged queries and how many judged / relevant (grade >= 2) passages have text."""
    c = data.coverage
    rows = [("judged queries (topics with qrels)", c.n_judged_queries, c.n_topics),
            ("judged passages with text", c.n_judged_passages_with_text, c.n_judged_passages),
            ("relevant passages (grade ≥ 2) with text", c.n_relevant_passages_with_text, c.n_relevant_passages),
            ("judged (query, passage) pairs with text", c.n_judged_pairs_with_text, c.n_judged_pairs)]
    frame = pd.DataFrame(rows, columns=["what", "count", "of"])
    frame["share"] = [count / total if total else None for _, count, total in rows]
    return frame


def coverage_warnings(data: TrecDlData) -> list[str]:
    """What a reader must know before trusting anything computed here from the passage texts."""
    c = data.coverage
    out = []
    if not data.has_qrels:
        out.append(f"No qrels for {data.name}: {data.qrels_note}. Hard-to-retrieve sets need judgments.")
    if c.n_judged_passages and c.n_judged_passages_with_text < c.n_judged_passages:
        out.append(f"Partial passage texts: only {c.n_judged_passages_with_text:,} of {c.n_judged_passages:,} "
                   f"judged passages and {c.n_relevant_passages_with_text:,} of {c.n_relevant_passages:,} relevant "
                   f"ones have text in this folder.")
    out.append(f"Runs computed here search only this folder's {c.n_corpus_passages:,} passages, a partial corpus "
               f"(the {data.spec.corpus} collection has millions): their NDCG@10 is not comparable with "
               f"full-corpus runs.")
    return out


# ---------------------------------------------------------------------------- retrievers
@dataclass(frozen=True)
class RunSource:
    """A run file the page can load: its display name, path, mtime (the cache key) and origin."""
    name: str
    path: str
    mtime_ns: int
    from_data_folder: bool


def computed_run_folder(dataset: str) -> Path:
    return paths.cache_subdir("runs", "trec_dl", dataset)


def run_sources(data: TrecDlData) -> list[RunSource]:
    """The data folder's imported runs, then the runs computed here for this dataset found in the cache.

    A computed run counts once both its run file and its provenance ``.json`` exist (the ``.json`` is
    written last). Computed runs are named ``<retriever>@computed``, numbered (``#2``...) when there
    are several; a bare name is always the data folder's imported full-corpus run.
    """
    out = [RunSource(name, str(path), path.stat().st_mtime_ns, True)
           for name, path in data.imported_runs().items()]
    computed: list[tuple[str, Path]] = []
    for meta_path in sorted(computed_run_folder(data.name).glob("*.json")):
        run_path = meta_path.with_suffix(".txt")
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict) and meta.get("dataset") == data.name and run_path.is_file():
            computed.append((str(meta.get("retriever") or run_path.stem), run_path))
    counts = pd.Series([r for r, _ in computed], dtype=object).value_counts()
    seen: dict[str, int] = {}
    for retriever, path in computed:
        seen[retriever] = seen.get(retriever, 0) + 1
        suffix = f"#{seen[retriever]}" if counts[retriever] > 1 else ""
        out.append(RunSource(f"{retrievers.computed_name(retriever)}{suffix}", str(path), path.stat().st_mtime_ns,
                             False))
    return out


def load_runs(data: TrecDlData, sources: Sequence[RunSource]) -> tuple[list[RetrieverRun], list[str]]:
    """The runs of ``sources`` with their provenance, and one error line per run that could not be read."""
    runs, problems = [], []
    for source in sources:
        try:
            runs.append(retrievers.imported_run(data, source.name, source.path,
                                                from_data_folder=source.from_data_folder))
        except (OSError, ValueError) as exc:  # TrecFormatError is a ValueError naming file and line
            problems.append(f"{source.name}: {' '.join(str(exc).split())}")
    return runs, problems


def default_selection(runs: Sequence[RetrieverRun]) -> list[str]:
    """The runs "hard under all" starts from: the full-corpus (imported) ones; computed, partial-corpus
    runs only when there is no full-corpus run (their NDCG@10 is not comparable with full-corpus runs)."""
    full = [r.name for r in runs if r.kind == "imported"]
    return full or [r.name for r in runs]


def mixed_corpus_warning(runs: Sequence[RetrieverRun]) -> str | None:
    """Said beside the H2R sets when full-corpus and partial-corpus runs are compared, else None."""
    partial = [r.name for r in runs if r.kind == "computed"]
    full = [r.name for r in runs if r.kind != "computed"]
    if not partial or not full:
        return None
    return (f"Comparing across corpora: {', '.join(partial)} searched only this folder's passages (partial corpus), "
            f"{', '.join(full)} the full collection. Each H2R set is relative to its own run's NDCG@10 "
            f"distribution, so the intersection mixes two different retrieval settings.")


def retriever_frame(data: TrecDlData, runs: Sequence[RetrieverRun]) -> pd.DataFrame:
    """One row per retriever: kind, provenance in words, queries covered and the file."""
    judged = set(data.judged_qids)
    rows = []
    for r in runs:
        note = ""
        n_passages = r.details.get("n_passages")
        if r.kind == "computed" and n_passages is not None and n_passages != len(data.passages):
            note = f"computed over {n_passages:,} passages, this folder has {len(data.passages):,}"
        rows.append({"retriever": r.name, "kind": r.kind, "provenance": r.provenance,
                     "judged queries in run": sum(qid in r.run and bool(r.run[qid]) for qid in judged),
                     "file": str(r.path), "note": note})
    return pd.DataFrame(rows, columns=["retriever", "kind", "provenance", "judged queries in run", "file", "note"])


# ---------------------------------------------------------------------------- hard-to-retrieve sets
def h2r(data: TrecDlData, runs: Sequence[RetrieverRun], quantile: float = DEFAULT_QUANTILE) -> dict:
    """:func:`pipeline.retrieval.h2r.h2r_report` of ``runs`` over the judged queries (NDCG@10)."""
    return h2r_report(data, list(runs), quantile=quantile, measure=MEASURE)


def intersection_label(report: dict) -> str:
    n = len(report["retrievers"])
    return "hard under both" if n == 2 else "hard under all" if n > 2 else "hard"


def summary_frame(report: dict) -> pd.DataFrame:
    """Per retriever: mean NDCG@10, the H2R threshold, the H2R set size (of the target, with its share and
    the tie block at the boundary: ``pipeline.sets.rule``'s rule) and its mean NDCG@10."""
    rows = [{"retriever": name, "kind": r["kind"], "queries": r["n_queries"], "mean NDCG@10": r["mean"],
             "threshold": r["threshold"], "H2R queries": r["n_hard"], "target": r["hard_set"]["n_target"],
             "share": r["hard_set"]["share"], "tie block": r["hard_set"]["tie_block"],
             "H2R mean NDCG@10": r["hard_mean"]}
            for name, r in report["retrievers"].items()]
    return pd.DataFrame(rows, columns=["retriever", "kind", "queries", "mean NDCG@10", "threshold", "H2R queries",
                                       "target", "share", "tie block", "H2R mean NDCG@10"])


def tie_warnings(report: dict) -> list[str]:
    """One line per retriever whose H2R membership ties decided."""
    return [f"Ties decide membership. {r['hard_set']['warning']}" for r in report["retrievers"].values()
            if r["hard_set"]["warning"]]


def per_query_frame(data: TrecDlData, report: dict) -> pd.DataFrame:
    """One row per judged query: text, NDCG@10 and the hard flag per retriever, and the intersection
    flag; hardest first under the first retriever."""
    names = list(report["retrievers"])
    qids = list(report["retrievers"][names[0]]["per_query"])
    frame = pd.DataFrame({"qid": qids, "query": [data.topics.get(q, "") for q in qids]})
    for name in names:
        frame[f"NDCG@10 · {name}"] = [report["retrievers"][name]["per_query"][q] for q in qids]
    for name in names:
        frame[f"hard · {name}"] = frame["qid"].isin(report["retrievers"][name]["hard"])
    if len(names) > 1:
        frame[intersection_label(report)] = frame["qid"].isin(report["intersection"])
    return frame.sort_values([f"NDCG@10 · {names[0]}", "qid"], kind="stable").reset_index(drop=True)


def _hover(qids: Sequence[str], topics: dict[str, str]) -> list[str]:
    # plotly renders a few HTML tags in hover text; escaping shows query text verbatim
    return [html.escape(f"{q}: {topics.get(q, '')}") for q in qids]


def sorted_figure(report: dict, topics: dict[str, str]) -> go.Figure:
    """Per retriever, its per-query NDCG@10 sorted ascending, the H2R threshold as a dashed line and
    the hard queries as filled markers."""
    fig = go.Figure()
    for i, (name, r) in enumerate(report["retrievers"].items()):
        colour = COLOURS[i % len(COLOURS)]
        ranked = sorted(r["per_query"].items(), key=lambda kv: (kv[1], kv[0]))
        hard = set(r["hard"])
        qids = [q for q, _ in ranked]
        fig.add_trace(go.Scatter(
            x=list(range(1, len(ranked) + 1)), y=[v for _, v in ranked], mode="lines+markers", name=name,
            line={"color": colour}, hovertext=_hover(qids, topics), hoverinfo="text+y",
            marker={"color": [colour if q in hard else "white" for q in qids], "line": {"color": colour, "width": 1.5},
                    "size": 7}))
        fig.add_hline(y=r["threshold"], line={"color": colour, "dash": "dash", "width": 1},
                      annotation_text=f"{name}: q={report['quantile']:g} → {r['threshold']:.3f}",
                      annotation_position="top left")
    fig.update_layout(title=f"Per-query NDCG@10, sorted ({report['dataset']}; filled = hard to retrieve)",
                      xaxis_title="query rank (hardest first)", yaxis_title="NDCG@10", yaxis_range=[-0.02, 1.02],
                      legend_title="retriever", margin={"t": 60})
    return fig


def scatter_figure(report: dict, topics: dict[str, str], x: str, y: str) -> go.Figure:
    """NDCG@10 under retriever ``x`` against ``y``, one point per query, coloured by H2R region, with
    both thresholds: the bottom-left rectangle holds the queries hard under both."""
    rx, ry = report["retrievers"][x], report["retrievers"][y]
    hard_x, hard_y = set(rx["hard"]), set(ry["hard"])
    qids = list(rx["per_query"])

    def region(q: str) -> str:
        if q in hard_x and q in hard_y:
            return "hard under both"
        return "hard only under x" if q in hard_x else "hard only under y" if q in hard_y else "neither"

    fig = go.Figure()
    for label, colour in REGION_COLOURS.items():
        members = [q for q in qids if region(q) == label]
        shown = label.replace(" x", f" {x}").replace(" y", f" {y}")
        fig.add_trace(go.Scatter(x=[rx["per_query"][q] for q in members], y=[ry["per_query"][q] for q in members],
                                 mode="markers", name=f"{shown} ({len(members)})", marker={"color": colour, "size": 8},
                                 hovertext=_hover(members, topics), hoverinfo="text+x+y"))
    fig.add_vline(x=rx["threshold"], line={"color": "#444", "dash": "dash", "width": 1})
    fig.add_hline(y=ry["threshold"], line={"color": "#444", "dash": "dash", "width": 1})
    fig.update_layout(title=f"NDCG@10 per query: {x} vs {y} ({report['dataset']}, q={report['quantile']:g})",
                      xaxis_title=f"NDCG@10 · {x}", yaxis_title=f"NDCG@10 · {y}",
                      xaxis_range=[-0.02, 1.02], yaxis_range=[-0.02, 1.02], legend_title="H2R region", margin={"t": 60})
    return fig


# ---------------------------------------------------------------------------- background retrieval
def jobs_frame(job_list: Sequence[jobs.Job]) -> pd.DataFrame:
    """The page's retrieval jobs: a failed one's last line, a queued one's waiting reason, a running
    one's last progress line."""
    messages = job_messages(job_list)  # the wording of every failure page's jobs table
    rows = [{"job": j.id, "retriever": j.meta.get("retriever", ""), "status": j.status,
             "message": messages[j.id]} for j in job_list]
    return pd.DataFrame(rows, columns=["job", "retriever", "status", "message"])
