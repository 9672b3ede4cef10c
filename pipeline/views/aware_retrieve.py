"""Data for the "Difficulty-aware retrieval" section of the Difficulty-aware page (no streamlit here).

It reads stored ``aware-retrieve`` results (:mod:`pipeline.aware.retrieve`, :mod:`pipeline.aware.store`):
every query carries its original text, reason sentence, both rewrites with their raw replies, RM3's
expansion terms and nDCG@10 per arm, so nothing is recomputed. Rewrites are LLM output, i.e. untrusted
text: they leave here as plain strings in DataFrame cells (shown as text, never HTML).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from core.fields import ZERO_OR_POSITIVE_INT, Field
from pipeline.aware import paired, retrieve, store
# the section's Start form offers REASON_SOURCES and lists AWARE_RETRIEVE's jobs
from pipeline.aware.retrieve_jobs import AWARE_RETRIEVE, REASON_SOURCES  # noqa: F401
from pipeline.prompting.difficulty import reasons_made_by
from pipeline.views import difficulty_aware_generation, forms

RUN_HELP = ("No difficulty-aware retrieval result yet: start a run above, or run `python -m pipeline aware-retrieve "
            "--dataset dl19 --rewriter SPEC --json` in a shell (`--max-queries N` caps it, `--reasons FILE` uses "
            "hand-assigned reasons); its result appears here.")
# the Start form's fields (python -m pipeline aware-retrieve --rewriter / --max-queries)
REWRITER_FIELD = forms.SpecField("Rewriter (LLM spec)")
QUERIES_FIELD = Field("H2R queries (0 = all)", ZERO_OR_POSITIVE_INT)
ARM_TITLES = {"original": "original", "plain_rewrite": "plain rewrite", "aware_rewrite": "difficulty-aware rewrite",
              "control_rewrite": "control rewrite", "rm3": "RM3"}
STATUS_NOTES = {"failed": "call failed: original query kept", "unusable": "unusable reply: original query kept"}


def available(dataset: str | None = None) -> list[Path]:
    """Stored results, newest first."""
    return store.list_results(retrieve.KIND, dataset)


def load(path: str | Path) -> dict:
    return store.load_result(retrieve.KIND, path, retrieve.RESULT_VERSION)


def result_label(result: dict) -> str:
    return (f"{result['dataset'].upper()} · rewriter {result['rewriter']['label']} · {result['counts']['used']} H2R "
            f"queries · {result['id']}")


def model_line(result: dict) -> str:
    """Which model, data file, convention and configuration produced the figures."""
    index = result["index"]["settings"]
    reasons = result["reasons_report"]
    made_by = reasons_made_by(reasons)
    source = (f"assigned by {result['assigner']['label']} ({result['assigner']['size_text']})" if result["assigner"]
              else f"imported from {reasons['imported']} (made by {made_by[1].model}, {made_by[1].size_text})"
              if "imported" in reasons else "the failure typology store")
    return (f"Rewriter {result['rewriter']['label']} ({result['rewriter']['size_text']}); reasons {source}; "
            f"BM25 k1 {index['k1']:g} b {index['b']:g} over {result['data_source']} "
            f"({result['index']['n_passages']:,} passages); RM3 fb_terms {result['index']['rm3']['fb_terms']}, "
            f"fb_docs {result['index']['rm3']['fb_docs']}, original weight "
            f"{result['index']['rm3']['original_query_weight']:g}; nDCG@10 (ir_measures); H2R: bottom "
            f"{result['h2r']['quantile']:g} of the original queries, boundary {result['h2r']['boundary'] or 0:.4f}.")


def not_a_finding(result: dict) -> str | None:
    """The "not a finding" label when a model's output cannot be one under the rule, else None."""
    return paired.not_a_finding([g for gates in result["gates"].values() for g in gates])


def primary_note(result: dict) -> str:
    """Which comparison to read first, and why (the result's declared primary comparison)."""
    return (f"Primary comparison (declared, first row): {result['primary'].replace('_', ' ')}. "
            f"{result['selection_note']} Holm across the declared family of {len(result['family'])}.")


def verdict_frame(result: dict) -> pd.DataFrame:
    """One row per comparison of the declared family, the primary one first."""
    rows = []
    for name in result["family"]:
        part, c = result["verdicts"][name], result["comparisons"][name]
        rows.append({"comparison": name.replace("_", " "), "role": "primary" if name == result["primary"]
                     else "secondary", "verdict": part["verdict"], "n": c["n"],
                     "mean change": c["mean_change"],
                     "improved / unchanged / worsened": f"{c['improved']} / {c['unchanged']} / {c['worsened']}",
                     "Wilcoxon p": (c["wilcoxon"] or {}).get("p"), "Holm p": result["holm"][name],
                     "headline": part["headline"]})
    return pd.DataFrame(rows)


def leaving_frame(result: dict) -> pd.DataFrame:
    rows = []
    for arm, s in result["leaving"].items():
        low, high = s["interval"] or (None, None)
        rows.append({"arm": ARM_TITLES[arm], "left the bottom quartile": s["left"], "n": s["n"], "share": s["share"],
                     "Wilson low": low, "Wilson high": high})
    return pd.DataFrame(rows)


def leaving_tests_frame(result: dict) -> pd.DataFrame:
    """The aware share leaving the bottom quartile against the control and plain shares, on the same queries."""
    return pd.DataFrame([{"comparison": name.replace("_", " "), "left under the first only": t["first_only"],
                          "left under the second only": t["second_only"], "both": t["both"], "neither": t["neither"],
                          "p": t["p"], "test": t["method"]} for name, t in result["leaving_tests"].items()])


def _rewrite_text(record: dict) -> str:
    if record["status"] == "ok":
        return record["query"]
    return f"[{STATUS_NOTES[record['status']]}]"


def rewrites_frame(result: dict) -> pd.DataFrame:
    """One row per query: original | plain | aware | control | RM3 side by side, with nDCG@10 per arm."""
    rows = []
    for u in result["queries"]:
        row = {"qid": u["qid"], "reason sentence": u["sentence"], "control statement": u["control_sentence"],
               "original": u["query"],
               "plain rewrite": _rewrite_text(u["rewrites"]["plain_rewrite"]),
               "difficulty-aware rewrite": _rewrite_text(u["rewrites"]["aware_rewrite"]),
               "control rewrite": _rewrite_text(u["rewrites"]["control_rewrite"]),
               "RM3 expansion terms": ", ".join(f"{t} {w:.3f}" for t, w in u.get("rm3_terms", {}).items())}
        row |= {f"nDCG@10 {ARM_TITLES[arm]}": u["ndcg@10"][arm] for arm in retrieve.ARMS}
        rows.append(row)
    return pd.DataFrame(rows)


def raw_replies_frame(result: dict) -> pd.DataFrame:
    """The rewriter's raw replies (what was parsed into each rewrite), as text."""
    return pd.DataFrame([{"qid": u["qid"], "arm": ARM_TITLES[arm], "status": u["rewrites"][arm]["status"],
                          "raw reply": u["rewrites"][arm]["raw"] or u["rewrites"][arm].get("error", "")}
                         for u in result["queries"] for arm in retrieve.REWRITES])


# ---------------------------------------------------------------------------- background jobs
def submit(dataset: str, folder: str | Path | None, *, rewriter: str, reasons: str = "assign", max_queries=0) -> int:
    """Queue an aware-retrieve run as a background job (it writes a progress record :func:`jobs_frame` shows). A
    bad field raises :class:`core.fields.FormError` naming it; nothing is queued."""
    forms.check_fields((REWRITER_FIELD, rewriter), (QUERIES_FIELD, max_queries or 0))
    return AWARE_RETRIEVE.submit(dataset=dataset, folder=folder, rewriter=rewriter, reasons=reasons,
                                 max_queries=forms.query_limit(max_queries))


# the same jobs table as the page's other jobs (status, waiting reason, progress line, error)
jobs_frame = difficulty_aware_generation.jobs_frame
