"""Data and charts for the "Difficulty-aware generation" page (no streamlit here; the page only lays out widgets).

The page reads stored preference results (:mod:`pipeline.prompting.preference`): every pair carries its query,
prompts, answers, difficulty sentence, the judge's raw replies in both orders and the passages the
judge saw, so nothing is recomputed and no data folder is needed. Untrusted text (queries, passages,
LLM output) leaves here as plain strings for text widgets, and is HTML-escaped wherever plotly would
render it (hover text).
"""
from __future__ import annotations

import html
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go

from core import jobs
from core.digest import content_digest
from core.jobs import progress as job_progress
from pipeline.views import forms
from pipeline.findings.preference import paper_rates
from pipeline.prompting import pairwise, preference
from pipeline.prompting.jobs import PREFERENCE, REASON_SOURCES  # noqa: F401  (the page's form offers REASON_SOURCES)
from pipeline.prompting.difficulty import prompt_diff
from pipeline.generation.h2g import cut_note
from pipeline.llm.base import Provenance
from pipeline.typology.categories import TASKS

OUTCOME_FILTERS = ("all pairs", "only wins", "only losses", "only inconsistent")
ALL = "all tasks and categories"
SIDE_TITLES = {"baseline": "Baseline (zero-shot prompt)", "aware": "Difficulty-aware (prompt + difficulty sentence)"}
ORDER_TITLES = {"ab": "baseline shown as A, difficulty-aware as B", "ba": "difficulty-aware shown as A, baseline as B"}
WINNER_TITLES = {"aware": "difficulty-aware", "baseline": "baseline", "tie": "tie (said so)", None: "unparseable"}
RUN_HELP = ("Start a run above, or run `python -m pipeline prefer --dataset dl19 --json` in a shell (add "
            "`--reasons FILE` to use hand-assigned reasons, `--max-queries N` to cap the run); its result appears here.")
STUDY_NOTE = "the study's own generators and judge"
RULES_NOTE = ("Preference rate = the pair rule (a win needs both orders; a position-inconsistent pair is a tie; one "
              "unit per query). Verdict rate = the verdict rule (each order's verdict counted on its own, ties in "
              "the denominator; never below the pair rate on fully parsed pairs). The study's rates do not say "
              "which rule they use: compare them with the rule that matches theirs, not with both.")
RULES_IN_FULL = f"Rules in full: {pairwise.RATE_RULE}. {pairwise.VERDICT_RULE}."


# ---------------------------------------------------------------------------- stored results
def available() -> dict[str, list[Path]]:
    """``{dataset: [result files, newest first]}`` for datasets with at least one result."""
    out: dict[str, list[Path]] = {}
    for path in preference.list_results():
        out.setdefault(path.parent.name, []).append(path)
    return {name: out[name] for name in sorted(out)}


def load(path: str | Path) -> dict:
    return preference.load_result(path)


# ---------------------------------------------------------------------------- configurations
def configuration_of(result: dict) -> dict:
    """What makes two results comparable across datasets: judge, generators, settings, typology, templates
    (never the dataset's own inputs: its queries, assignments or timings)."""
    templates = {k: v for k, v in result["templates"].items() if k != "source"}
    return {"judge": result["judge"]["label"],
            "generators": {k: v["label"] for k, v in result["generators"].items()},
            "config": result["config"], "typology": result["typology"].get("name"),
            "templates": content_digest(templates, 8),
            "reasons": sorted({"typology run" if s.startswith("typology run") else s.split(":")[0]
                               for s in result["assignments"].get("sources", [])})}


def configuration_label(result: dict) -> str:
    """``judge J · baseline G · aware G · first reason · max 20 queries · typology T · templates abcd1234``."""
    c = configuration_of(result)
    gens = c["generators"]
    limit = c["config"].get("max_queries")
    parts = [f"judge {c['judge']}", f"baseline {gens['baseline']}", f"aware {gens['aware']}",
             f"{c['config'].get('reason_mode', 'first')} reason(s)", f"max {limit} queries" if limit else "all queries",
             f"typology {c['typology']}", f"templates {c['templates']}"]
    digest = content_digest(c, 6)
    return " · ".join(parts) + f" [{digest}]"


def configurations(results: dict[str, list[tuple[Path, dict]]]) -> dict[str, dict[str, dict]]:
    """``{configuration label: {dataset: newest result of that configuration}}`` from ``{dataset: [(path,
    result), ...] newest first}``; the configuration covering most datasets first (then the newest)."""
    grouped: dict[str, dict[str, tuple[float, dict]]] = {}
    for dataset, items in results.items():
        for path, result in items:  # newest first: keep the first seen per configuration
            grouped.setdefault(configuration_label(result), {}).setdefault(dataset, (path.stat().st_mtime, result))
    order = sorted(grouped, key=lambda k: (-len(grouped[k]), -max(t for t, _ in grouped[k].values())))
    return {label: {d: r for d, (_, r) in sorted(grouped[label].items())} for label in order}


def result_label(path: Path, result: dict) -> str:
    when = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"{result['id']} · judge {result['judge']['label']} · {len(result['pairs'])} pairs · {when}"


def small_model_warning(result: dict) -> str | None:
    """A warning when a small model made the answers or the verdicts (never a finding)."""
    provenances = [(what, Provenance.from_dict(p)) for what, p in (
        ("judge", result["judge"]), *((f"{k} generator", v) for k, v in result["generators"].items()))]
    small = [(what, p) for what, p in provenances if p.small]
    if not small:
        return None
    return (f"These answers and verdicts were made with {small[0][1].not_a_finding} ("
            + "; ".join(f"{what} {p.backend}:{p.model}" for what, p in small) + ").")


# ---------------------------------------------------------------------------- pair selection
def group_options(result: dict) -> list[str]:
    tasks = [t for t in TASKS if t in result["summary"]["by_task"]]
    return [ALL, *(f"task {t.upper()}" for t in tasks), *(f"category {c}" for c in result["summary"]["by_category"])]


def select_pairs(result: dict, group: str = ALL, outcome_filter: str = OUTCOME_FILTERS[0]) -> list[dict]:
    pairs = result["pairs"]
    if group.startswith("task "):
        pairs = [p for p in pairs if p["task"] == group[len("task "):].lower()]
    elif group.startswith("category "):
        pairs = [p for p in pairs if group[len("category "):] in p["categories_used"]]
    keep = {"only wins": lambda p: p["outcome"] == "win", "only losses": lambda p: p["outcome"] == "loss",
            "only inconsistent": lambda p: p["inconsistent"]}.get(outcome_filter, lambda p: True)
    return [p for p in pairs if keep(p)]


def pair_key(pair: dict) -> str:
    return f"{pair['qid']}|{pair['task']}"


def pair_label(pair: dict) -> str:
    query = pair["query"] if len(pair["query"]) <= 70 else pair["query"][:69] + "…"
    flag = ", inconsistent" if pair["inconsistent"] else ""
    return f"{pair['qid']} · {pair['task'].upper()} · {pair['outcome']}{flag} — {query}"


def neighbour(keys: Sequence[str], current: str, step: int) -> str:
    """The key ``step`` places from ``current`` (wrapping), or the first key when current is gone."""
    if current not in keys:
        return keys[0]
    return keys[(keys.index(current) + step) % len(keys)]


# ---------------------------------------------------------------------------- one pair
def prompt_change(pair: dict) -> str:
    return prompt_diff(pair["prompts"]["baseline"], pair["prompts"]["aware"])


def answer_text(pair: dict, side: str) -> str:
    """The answer as plain text; one cut at the token limit ends with "(cut at N tokens)"."""
    text = pair["answers"].get(side)
    if text is None:
        return f"(no answer: {pair.get('generation_errors', {}).get(side, 'missing')})"
    cut_at = (pair.get("cut_at") or {}).get(side)  # absent in results stored before it was recorded
    return f"{text}\n\n({cut_note(cut_at)})" if cut_at else text


def pair_details_frame(pair: dict, result: dict) -> pd.DataFrame:
    return pd.DataFrame([{"qid": pair["qid"], "task": pair["task"].upper(), "reasons": "; ".join(pair["categories"]),
                          "sentence from": "; ".join(pair["categories_used"]),
                          "assigned by": pair["assignment_source"], "judge": result["judge"]["label"]}])


def verdict_frame(pair: dict) -> pd.DataFrame:
    rows = []
    for order in ("ab", "ba"):
        v = pair["verdicts"].get(order)
        if v is None:
            continue
        rows.append({"order": ORDER_TITLES[order], "judge's reply": v["raw"] if v["raw"] is not None else "",
                     "parsed": v["verdict"] or ("call failed: " + v["error"] if v.get("error") else "unparseable"),
                     "prefers": WINNER_TITLES.get(v["winner"], v["winner"])})
    return pd.DataFrame(rows, columns=["order", "judge's reply", "parsed", "prefers"])


def outcome_line(pair: dict) -> str:
    if pair["outcome"] == "tie" and pair["inconsistent"]:
        return "tie: the two orders disagree (the judge followed the position, not the content)"
    return {"win": "win: both orders prefer the difficulty-aware answer",
            "loss": "loss: both orders prefer the baseline answer",
            "tie": "tie: the judge called it a tie in at least one order",
            "unparseable": "unparseable: a verdict has no recognisable answer (excluded, never guessed)",
            "failed": "failed: a generation or judge call failed (excluded; a rerun retries it)"}[pair["outcome"]]


def passages_frame(pair: dict) -> pd.DataFrame:
    return pd.DataFrame(pair["passages"], columns=["pid", "grade", "text"])


# ---------------------------------------------------------------------------- summary
def summary_frame(results: dict[str, dict], by: str = "overall") -> pd.DataFrame:
    """One row per dataset (``by="overall"``) or per dataset and task / category, with the study's rate.

    Figures are recomputed from the stored pairs under the current rules (so an older result, stored
    before the query unit and the verdict rule, reads the same way as a new one)."""
    rows = []
    for dataset, result in results.items():
        summary = preference.summarise(result["pairs"], result["judge"]["label"])
        groups = ({"all": summary["overall"]} if by == "overall" else
                  {f"task {k.upper()}": v for k, v in summary["by_task"].items()} if by == "task" else
                  {f"category {k}": v for k, v in summary["by_category"].items()})
        for group, s in groups.items():
            rows.append({"dataset": dataset.upper(), "group": group, "judge": s["judge"],
                         "generator": result["generators"]["aware"]["label"], "queries": s["queries"],
                         "pairs": s["pairs"], "wins": s["wins"], "ties": s["ties"], "losses": s["losses"],
                         "unparseable": s["unparseable"], "failed": s["failed"], "preference rate": s["rate"],
                         "CI low": s["ci_low"], "CI high": s["ci_high"], "sign test p": s["sign_test_p"],
                         "verdict rate": s["verdict_rule"]["rate"], "verdicts": s["verdict_rule"]["verdicts"],
                         "inconsistent share": s["inconsistent_share"],
                         "study rate": paper_rates().get(dataset) if by == "overall" else None,
                         "result": result["id"]})
    return pd.DataFrame(rows)


def study_frame() -> pd.DataFrame:
    return pd.DataFrame([{"dataset": d.upper(), "study rate": r, "source": STUDY_NOTE}
                         for d, r in paper_rates().items()])


def summary_figure(frame: pd.DataFrame) -> go.Figure:
    """Our preference rates with Wilson 95% intervals per dataset, beside the study's four figures."""
    fig = go.Figure()
    ours = frame[frame["preference rate"].notna()]
    if len(ours):
        hover = [html.escape(f"{r.dataset}: {r.wins} win / {r.ties} tie / {r.losses} loss; judge {r.judge}")
                 for r in ours.itertuples()]
        fig.add_bar(x=ours["dataset"], y=ours["preference rate"], name="this project, pair rule (judge in hover)",
                    error_y={"type": "data", "symmetric": False,
                             "array": ours["CI high"] - ours["preference rate"],
                             "arrayminus": ours["preference rate"] - ours["CI low"]},
                    hovertext=hover, hoverinfo="text+y", marker_color="#1f77b4")
        fig.add_scatter(x=ours["dataset"], y=ours["verdict rate"], mode="markers", name="this project, verdict rule",
                        marker={"symbol": "circle-open", "size": 11, "color": "#1f77b4"})
    study = study_frame()
    fig.add_scatter(x=study["dataset"], y=study["study rate"], mode="markers", name=f"study ({STUDY_NOTE})",
                    marker={"symbol": "diamond", "size": 12, "color": "#d62728"})
    fig.add_hline(y=0.5, line_dash="dot", line_color="#7f7f7f")
    judges = sorted(set(ours["judge"])) if len(ours) else []
    fig.update_layout(title="Difficulty-aware answer preferred over the baseline (Wilson 95% CI)"
                            + (f"<br><sup>judge: {html.escape('; '.join(judges))}</sup>" if judges else ""),
                      yaxis={"title": "preference rate", "range": [0, 1], "tickformat": ".0%"},
                      xaxis={"title": "dataset", "categoryorder": "array",
                             "categoryarray": [d.upper() for d in paper_rates()]},
                      legend={"orientation": "h", "y": -0.2}, height=400)
    return fig


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode("utf-8")


# ---------------------------------------------------------------------------- background runs
def submit_preference(dataset: str, folder: str | Path | None, **options) -> int:
    """Queue a comparison as a background job; it writes a progress record (stage n of m, answers or
    judge calls done) that :func:`jobs_frame` shows. A bad ``max_queries`` (0 or None = all) raises
    :class:`core.fields.FormError` naming the field; nothing is queued."""
    forms.check_fields((forms.PREFERENCE_QUERIES, options.get("max_queries") or 0))
    options["max_queries"] = forms.query_limit(options.get("max_queries"))
    return PREFERENCE.submit(dataset=dataset, folder=folder, **options)


def jobs_frame(job_list: Sequence[jobs.Job]) -> pd.DataFrame:
    """Status, a queued job's reason for waiting, a running job's last progress line, a failed job's error."""
    messages = job_progress.job_messages(job_list)
    rows = [{"job": j.id, "dataset": j.meta.get("dataset", ""), "status": j.status, "progress": messages[j.id]}
            for j in job_list]
    return pd.DataFrame(rows, columns=["job", "dataset", "status", "progress"])
