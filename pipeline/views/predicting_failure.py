"""The Predicting failure page (``pages/predicting-failure.py``) without its widgets: stored predictions
(:mod:`pipeline.predict.store`), the predictors × targets heatmap of τ (significance marked), the per-query
scatter of one cell with the hard-set queries marked, the table as CSV and LaTeX, the provenance line.

The heatmap's colour is ``tau_easier``: Kendall's τ-b signed so that positive means "a higher predictor
value goes with an easier query" for every target (for disagreement, whose higher value is harder, it
is -τ), the same orientation as the AUC. Each cell carries a transparent scatter point whose
``customdata`` names it, so a click selects it (as the Venn diagram's regions do).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from core.jobs.progress import job_messages
from pipeline.predict import store
from pipeline.predict.catalog import GENERATION, JUDGING, POST, PRE
from pipeline.predict.ceiling import MEANING as CEILING_MEANING
from pipeline.generation.bertscore import ENCODERS  # noqa: F401  (the form's encoder choices)
from pipeline.predict.jobs import PREDICTION, SETUPS  # noqa: F401  (the page's job kind and its choices)
from pipeline.predict.evaluation import AUC_NOTE, K_SWEEP_NOTE, POOL_NOTE, POOLED

FAMILY_ORDER = (PRE, POST, GENERATION, JUDGING)  # the heatmap's rows: pre-retrieval first
ALPHA = 0.05
SIGNIFICANT = "*"  # Holm-corrected p of τ below ALPHA
HEATMAP_NOTE = ("colour: Kendall τ-b signed so that positive = a higher predictor value goes with an easier query "
                "(for disagreement, −τ); * Holm-corrected p < 0.05 across the whole table")
TABLE_COLUMNS = ("dataset", "predictor", "family", "target", "task", "n", "n_hard", "kendall_tau", "tau_ci",
                 "kendall_p", "kendall_p_holm", "pearson_r", "r_ci", "pearson_p", "pearson_p_holm", "auc", "auc_ci",
                 "smare", "smare_ci", "partial", "pool", "verdict", "verdict_reason", "note")


def results() -> list[dict]:
    return store.list_results()


def result_label(entry: dict) -> str:
    settings = entry.get("settings") or {}
    parts = [", ".join(d.upper() for d in entry.get("datasets") or []),
             "runs " + ", ".join(settings.get("retrievers") or []) if settings.get("retrievers") else "",
             "judges " + ", ".join(settings.get("judges") or []) if settings.get("judges") else "",
             "generators " + ", ".join(settings.get("generators") or []) if settings.get("generators") else "",
             "partial index" if entry.get("partial") else "full-corpus index", entry.get("id", "")]
    return " · ".join(p for p in parts if p)


def load(result_id: str) -> dict:
    return store.load(result_id)


def scopes(result: dict) -> list[str]:
    """The datasets of a result, then ``pooled`` when it has pooled rows."""
    have = {row["dataset"] for row in result["evaluation"]}
    return [d for d in result["datasets"] if d in have] + ([POOLED] if POOLED in have else [])


def _interval_text(interval) -> str:
    return "" if not interval else f"[{interval[0]:.2f}, {interval[1]:.2f}]"


def table_frame(result: dict, scope: str | None = None) -> pd.DataFrame:
    """The evaluation rows of ``scope`` (all scopes when None) as the page's and the downloads' table."""
    rows = []
    for row in result["evaluation"]:
        if scope is not None and row["dataset"] != scope:
            continue
        ci = row.get("intervals") or {}
        rows.append({**{k: row.get(k) for k in TABLE_COLUMNS if k in row}, "tau_ci": _interval_text(ci.get("kendall_tau")),
                     "r_ci": _interval_text(ci.get("pearson_r")), "auc_ci": _interval_text(ci.get("auc")),
                     "smare_ci": _interval_text(ci.get("smare"))})
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def table_csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False)


def _fmt(value, digits=3) -> str:
    return "--" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def table_latex(frame: pd.DataFrame, caption: str = "") -> str:
    """A booktabs table (:func:`core.export.booktabs`: one escaping, A4 width): scope, predictor, target, n,
    τ (* Holm p < 0.05) and its interval, Holm p, r and its interval, Pearson p, AUC and its interval."""
    from core.export import booktabs, format_number

    def number(value, digits=3):
        return format_number(None if value is None or pd.isna(value) else value, digits)

    rows = []
    for row in frame.itertuples(index=False):
        mark = "*" if row.kendall_p_holm is not None and not pd.isna(row.kendall_p_holm) \
            and row.kendall_p_holm < ALPHA else ""
        rows.append({"scope": row.dataset, "predictor": row.predictor, "target": row.target, "n": row.n,
                     "τ": f"{number(row.kendall_tau)}{mark}", "τ 95% CI": row.tau_ci or "--",
                     "p Holm": row.kendall_p_holm, "r": row.pearson_r, "r 95% CI": row.r_ci or "--",
                     "p (r)": row.pearson_p, "AUC": row.auc, "AUC 95% CI": row.auc_ci or "--"})
    notes = [f"* Holm-corrected p < {ALPHA} across the table. {AUC_NOTE}."]
    if "pool" in frame and frame["pool"].fillna(False).astype(bool).any():
        pooled = sorted(set(frame.predictor[frame["pool"].fillna(False).astype(bool)]))
        notes.append(f"{POOL_NOTE}; rows: {', '.join(pooled)}.")
    return booktabs(pd.DataFrame(rows), caption, notes=notes)


def heatmap(result: dict, scope: str):
    """Predictors × targets of τ (oriented, module docstring), ``*`` where Holm's p < 0.05; a transparent
    point per cell carries ``[predictor, target]`` for the click."""
    import plotly.graph_objects as go

    rows = [r for r in result["evaluation"] if r["dataset"] == scope]
    family = {r["predictor"]: r["family"] for r in rows}
    predictors = sorted(dict.fromkeys(r["predictor"] for r in rows),
                        key=lambda p: FAMILY_ORDER.index(family[p]) if family[p] in FAMILY_ORDER else len(FAMILY_ORDER))
    target_names = list(dict.fromkeys(r["target"] for r in rows))
    cell = {(r["predictor"], r["target"]): r for r in rows}
    z, text, hover = [], [], []
    for p in predictors:
        z.append([]), text.append([]), hover.append([])
        for t in target_names:
            r = cell.get((p, t), {})
            value = r.get("tau_easier")
            z[-1].append(value)
            significant = r.get("kendall_p_holm") is not None and r["kendall_p_holm"] < ALPHA
            text[-1].append("" if value is None else f"{value:.2f}{SIGNIFICANT if significant else ''}")
            ci = r.get("intervals") or {}
            hover[-1].append(f"{p} vs {t}<br>n={r.get('n')} · τ={_fmt(r.get('kendall_tau'))} "
                             f"{_interval_text(ci.get('kendall_tau'))} · p_holm={_fmt(r.get('kendall_p_holm'))}"
                             f"<br>AUC={_fmt(r.get('auc'))} {_interval_text(ci.get('auc'))} (>0.5: higher predicts "
                             f"easier){'<br>pool: reads a pool-built index' if r.get('pool') else ''}"
                             f"{'<br>' + r['note'] if r.get('note') else ''}")
    # the heatmap only colours: plotly gives a click on a heatmap no selection, so each cell's hover and
    # click belong to a transparent point over it (a point with hoverinfo "skip" emits no click either:
    # that is why a click did nothing in Chromium, issue 33)
    fig = go.Figure(go.Heatmap(z=z, x=target_names, y=predictors, text=text, texttemplate="%{text}",
                               hoverinfo="skip", zmin=-1, zmax=1, colorscale="RdBu",
                               colorbar={"title": "τ (easier +)"}))
    xs = [t for _ in predictors for t in target_names]
    ys = [p for p in predictors for _ in target_names]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", marker={"size": 28, "opacity": 0.0, "symbol": "square"},
                             customdata=[[p, t] for p, t in zip(ys, xs)], hovertext=[h for row in hover for h in row],
                             hoverinfo="text", showlegend=False, name="cells"))
    # the target labels under the cells, rotated: above them they ran into the title
    fig.update_layout(height=max(360, 26 * len(predictors) + 220), margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      title={"text": f"{scope.upper()}: τ of predictor vs target", "font": {"size": 14}},
                      xaxis={"side": "bottom", "tickangle": -30, "automargin": True},
                      yaxis={"autorange": "reversed", "automargin": True}, clickmode="event+select",
                      dragmode=False)
    return fig


def cell_from_selection(selection) -> tuple[str, str] | None:
    """``(predictor, target)`` of the heatmap cell a click selected, or None."""
    points = (selection or {}).get("points", []) if isinstance(selection, dict) else getattr(selection, "points", [])
    for point in points or []:
        data = point.get("customdata")
        if isinstance(data, (list, tuple)) and len(data) == 2:
            return str(data[0]), str(data[1])
    return None


def cell_frame(result: dict, scope: str, predictor: str, target: str) -> pd.DataFrame:
    """Per query of the cell: dataset, qid, predictor value, target value, in the hard set."""
    datasets = result["datasets"] if scope == POOLED else [scope]
    values = result["predictors"].get(predictor, {})
    rows = []
    for dataset in datasets:
        t = result["targets"].get(dataset, {}).get(target)
        if t is None:
            continue
        hard = set(t["hard"])
        rows += [{"dataset": dataset, "qid": q, "predictor": values[q], "target": v, "hard": q in hard}
                 for q, v in t["values"].items() if q in values]
    return pd.DataFrame(rows, columns=["dataset", "qid", "predictor", "target", "hard"])


def cell_scatter(frame: pd.DataFrame, predictor: str, target: str):
    """The predictor against the target per query, hard-set queries marked (red crosses)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for hard, name, marker in ((False, "not in the hard set", {"color": "#4C78A8", "symbol": "circle", "size": 8}),
                               (True, "in the task's hard set", {"color": "#E45756", "symbol": "x", "size": 10})):
        part = frame[frame["hard"] == hard]
        fig.add_trace(go.Scatter(x=part["predictor"], y=part["target"], mode="markers", name=name, marker=marker,
                                 text=part["dataset"].str.upper() + " " + part["qid"].astype(str),
                                 hovertemplate="%{text}<br>predictor %{x:.4g}<br>target %{y:.4g}<extra></extra>"))
    fig.update_layout(xaxis_title=predictor, yaxis_title=target, height=420,
                      margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend={"orientation": "h"})
    return fig


def provenance_line(result: dict) -> str:
    """Index statistics (partial or not), runs, models, bootstrap: one line under the page's title."""
    prov = result["provenance"]
    index = "; ".join(f"{d.upper()}: {i['description']}" for d, i in prov.get("index", {}).items())
    runs = "; ".join(f"{d.upper()}: " + ", ".join(f"{r['name']} ({r['provenance']})" for r in rs)
                     for d, rs in prov.get("runs", {}).items())
    corpus = "; ".join(f"{r['name']}: {r['corpus_score']}" for rs in prov.get("runs", {}).values() for r in rs
                       if r.get("corpus_score"))
    measured = "; ".join(f"{name} ({t['relevance']})" for ts in result.get("targets", {}).values()
                         for name, t in ts.items() if t.get("relevance"))
    boot = prov.get("bootstrap", {})
    parts = [f"Index statistics — {index}" if index else "", f"Runs — {runs}" if runs else "",
             f"Corpus score of NQC/WIG/SMV — {corpus}" if corpus else "",
             f"Retrieval targets — {measured}" if measured else "",
             "Models — " + ", ".join(prov.get("models") or []) if prov.get("models") else "",
             f"Bootstrap — {boot.get('n_boot')} resamples, seed {boot.get('seed')}, "
             f"{int(100 * boot.get('confidence', 0.95))}% percentile intervals" if boot else "",
             f"result {result.get('id', '')}"]
    return " · ".join(p for p in parts if p)


def partial_warning(result: dict) -> str | None:
    if not result.get("partial"):
        return None
    marked = sorted({name for name, info in (result.get("predictor_info") or {}).items() if info.get("partial")})
    return ("Every predictor that reads the index here (pre-retrieval statistics, the corpus score of NQC/WIG/SMV, "
            "Clarity and UEF) is partial: the index is the data folder's passages (a partial corpus), not the full "
            "collection. Configure a full-corpus index ([qpp_index] in irdash.toml, or --index) for the "
            "collection's statistics." + (f" Marked: {', '.join(marked)}." if marked else "")
            + (" Also marked " + POOL_NOTE + "." if result.get("pool") else ""))


def beside_lines(result: dict) -> list[str]:
    """Each pool-marked NQC@k beside the index-free σ@k (:func:`pipeline.predict.evaluation.beside_lines`)."""
    from pipeline.predict.evaluation import beside_lines as lines

    return lines(result)


CEILING_CAPTION = (f"Sampling ceiling of an H2G target: {CEILING_MEANING}. Leave one sample out: the other samples' "
                   "mean BERTScore per query predicting one sample's BERTScore (τ, sMARE) and H2G set (AUC), mean and "
                   "range over the samples of a stored h2g-samples result scored as the target is; beside it the "
                   "predictor of this table with the highest τ on the same target.")


def ceiling_frame(result: dict, scope: str) -> pd.DataFrame:
    """Per H2G target of ``scope`` with a sampling ceiling (:func:`pipeline.predict.ceiling.stored_ceiling`):
    the ceiling's τ, AUC and sMARE (mean, range over the samples), and the best predictor's (by τ, oriented)
    beside it; empty when the result has none (stored before, no h2g-samples result, or the pooled scope)."""
    rows = []
    for target, found in ((result.get("h2g_ceiling") or {}).get(scope) or {}).items():
        if not found.get("available"):
            continue
        rows.append({"target": target, "what": f"sampling ceiling ({found['n_samples']} samples, h2g-samples "
                                               f"{found['result'][:12]})",
                     **{key: found[key]["mean"] for key in ("kendall_tau", "auc", "smare")},
                     **{f"{key} range": _interval_text([found[key]["min"], found[key]["max"]]) if found[key]["n"] else ""
                        for key in ("kendall_tau", "auc", "smare")}})
        measured = [r for r in result["evaluation"] if r["dataset"] == scope and r["target"] == target
                    and r.get("tau_easier") is not None]
        if measured:
            best = max(measured, key=lambda r: r["tau_easier"])
            rows.append({"target": target, "what": f"best predictor: {best['predictor']}"
                                                   f"{' (pool)' if best.get('pool') else ''}",
                         "kendall_tau": best["tau_easier"], "auc": best.get("auc"), "smare": best.get("smare"),
                         **{f"{key} range": _interval_text((best.get("intervals") or {}).get(key))
                            for key in ("kendall_tau", "auc", "smare")}})
    return pd.DataFrame(rows)


def ceiling_lines(result: dict, scope: str) -> list[str]:
    """Why an H2G target of ``scope`` has no ceiling although h2g-samples results of its generator exist."""
    from pipeline.predict.ceiling import ceiling_text

    return [ceiling_text(target, found) for target, found in ((result.get("h2g_ceiling") or {}).get(scope) or {}).items()
            if not found.get("available")]


def k_sweep_frame(result: dict, scope: str | None = None) -> pd.DataFrame:
    """τ-b per predictor (rows) and cut-off k (columns) for each target (exploratory: ``K_SWEEP_NOTE``);
    empty for a result stored before the sweep existed."""
    rows = [r for r in (result.get("k_sweep") or {}).get("rows", []) if scope in (None, r["dataset"])]
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows)
    pool = frame["pool"].fillna(False).astype(bool) if "pool" in frame else False
    frame["predictor"] = frame["predictor"] + "[" + frame["component"] + "]" + np.where(pool, " (pool)", "")
    table = frame.pivot_table(index=["dataset", "target", "predictor"], columns="k", values="kendall_tau",
                              aggfunc="first", dropna=False)
    table.columns = [f"τ at k={k}" for k in table.columns]
    if "tau_interval" in frame:  # results stored before the sweep had intervals lack them
        intervals = frame.assign(text=frame["tau_interval"].map(_interval_text)).pivot_table(
            index=["dataset", "target", "predictor"], columns="k", values="text", aggfunc="first")
        intervals.columns = [f"95% CI at k={k}" for k in intervals.columns]
        table = table.join(intervals)[[c for k in sorted(set(frame["k"])) for c in (f"τ at k={k}", f"95% CI at k={k}")
                                       if c in table.columns or c in intervals.columns]]
    return table.reset_index()


def small_model_warning(result: dict) -> str | None:
    """One line when a generator or judge behind a target or predictor is a sub-1B model."""
    prov = result["provenance"]
    small = sorted({g["generator"].get("label", "") for d in prov.get("generators", {}).values() for g in d
                    if g.get("generator", {}).get("small")}
                   | {j["provenance"].get("label", j["judge"]) for d in prov.get("judges", {}).values() for j in d
                      if j.get("provenance", {}).get("small")})
    if not small:
        return None
    return (f"{', '.join(small)}: a sub-1B model. Its targets and log-probability predictor exercise the pipeline; "
            "they are not the study's finding.")


def absent_lines(result: dict) -> list[str]:
    seen, out = set(), []
    for a in result.get("absent", []):
        if a["reason"] not in seen:
            seen.add(a["reason"])
            out.append(f"{a['name']}: {a['reason']}")
    return out


def data_folder():
    """The configured TREC DL folder (None without one): where the page's jobs find runs and judgments."""
    from pipeline.data.datasets import resolve_data_folder

    try:
        return resolve_data_folder()
    except ValueError:
        return None


def folder_components(folder) -> dict[str, dict[str, list[str]]]:
    """``{dataset: {"runs": [...], "judges": [...], "answers": [...]}}`` from the folder's ``runs/``,
    ``judgments/`` and ``answers/answers.NAME.<dataset>.jsonl`` file names (nothing is read), for the page's form."""
    from pathlib import Path

    from pipeline.data.datasets import DATASETS

    out = {}
    if folder is None:
        return out
    for dataset in DATASETS:
        runs = sorted(p.name[len("run."):-len(f".{dataset}.txt")]
                      for p in (Path(folder) / "runs").glob(f"run.*.{dataset}.txt"))
        judges = sorted(p.name[len("judgments."):-len(f".{dataset}.txt")]
                        for p in (Path(folder) / "judgments").glob(f"judgments.*.{dataset}.txt"))
        answers = sorted(p.name[len("answers."):-len(f".{dataset}.jsonl")]
                         for p in (Path(folder) / "answers").glob(f"answers.*.{dataset}.jsonl"))
        if runs or judges:
            out[dataset] = {"runs": runs, "judges": judges, "answers": answers}
    return out


def shared_components(components: dict, datasets) -> tuple[list[str], list[str]]:
    """The runs and judges every one of ``datasets`` has (a name missing from one would be computed or refused)."""
    if not datasets:
        return [], []
    runs = set.intersection(*(set(components[d]["runs"]) for d in datasets))
    judges = set.intersection(*(set(components[d]["judges"]) for d in datasets))
    return sorted(runs), sorted(judges)


def shared_answers(components: dict, datasets) -> list[str]:
    """The imported answers every one of ``datasets`` has: generators whose real H2G the form can predict."""
    if not datasets:
        return []
    return sorted(set.intersection(*(set(components[d].get("answers", [])) for d in datasets)))


def ceiling_encoder(datasets, generators) -> str:
    """The BERTScore encoder the form proposes: that of the newest stored h2g-samples result of a chosen
    generator on a chosen dataset (so its H2G target gets that result's sampling ceiling), else ``auto``."""
    from pipeline.study.sampling import stored_spreads

    for dataset in datasets:
        for result in stored_spreads(dataset):
            encoder = (result.get("bertscore") or {}).get("encoder")
            if result["generator"] in generators and encoder:
                return encoder
    return "auto"


def jobs_frame(job_list) -> pd.DataFrame:
    """The page's prediction jobs: what each computes, its status and its progress or error line."""
    messages = job_messages(job_list)
    rows = [{"job": j.id, "what": j.label, "status": j.status, "message": messages[j.id]} for j in job_list]
    return pd.DataFrame(rows, columns=["job", "what", "status", "message"])


AUC_CAPTION = AUC_NOTE
EXAMPLE_COMMAND = ("python -m pipeline predict --dataset dl19 --dataset dl20 --retriever bm25 --retriever tasb "
                   "--judge llama-3.3-70b --judge flan-t5-large --setup binary")
