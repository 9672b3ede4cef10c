"""Data for the "Difficulty-aware judging" section of the Difficulty-aware page (no streamlit here).

It reads stored aware-judge results (:mod:`pipeline.aware.judge`, :mod:`pipeline.aware.store`): every
re-judged query carries its sentence, control sentence, each arm's label per passage beside NIST's and its
disagreement per setup, so nothing is recomputed. Untrusted text (queries, LLM replies, prompts) leaves here
as plain strings and data frames for text widgets, never as HTML.
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from core.fields import ZERO_OR_POSITIVE_INT, Field
from pipeline.aware import judge as study, paired, store
# the section's Start form offers REASON_SOURCES and lists AWARE_JUDGE's jobs
from pipeline.aware.judge_jobs import AWARE_JUDGE, REASON_SOURCES  # noqa: F401
from pipeline.views import difficulty_aware_generation, forms
from pipeline.judging.h2j import disagrees
from pipeline.judging.judgments import SETUPS
from pipeline.prompting.difficulty import reasons_made_by

RUN_HELP = ("Start a run above, or run `python -m pipeline aware-judge --dataset dl19 --judge ollama:MODEL --json` "
            "in a shell (add "
            "`--reasons FILE` for hand-assigned H2J reasons, `--max-queries N` to cap the run); its result "
            "appears here.")
# the Start form's fields (python -m pipeline aware-judge --judge / --max-queries / --cap)
JUDGE_FIELD = forms.SpecField("Judge (LLM spec)")
QUERIES_FIELD = Field("Judged queries (0 = all)", ZERO_OR_POSITIVE_INT)
ARM_COLUMNS = {"baseline": "baseline", "aware": "aware", "control_sentence": "control sentence"}


def available() -> dict[str, list[Path]]:
    """``{dataset: [result files, newest first]}`` for datasets with at least one aware-judge result."""
    out: dict[str, list[Path]] = {}
    for path in store.list_results(study.KIND):
        out.setdefault(path.parent.name, []).append(path)
    return {name: out[name] for name in sorted(out)}


def load(path: str | Path) -> dict:
    return store.load_result(study.KIND, path, study.RESULT_VERSION)


def result_label(path: Path, result: dict) -> str:
    when = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"{result['id']} · judge {result['judge']['label']} · {len(result['queries'])} queries · {when}"


def provenance_line(result: dict) -> str:
    """Which model, data, convention and configuration produced the figures."""
    c = result["config"]
    assigner = (result.get("assigner") or {}).get("label")
    reasons = result["reasons"]["how"]
    made_by = reasons_made_by(reasons)
    source = ("the typology store" if "typology_store" in reasons else f"file {reasons['imported']} (made by "
              f"{made_by[1].model}, {made_by[1].size_text})" if "imported" in reasons else f"assigned by {assigner}")
    return (f"{result['dataset']} ({result['data_source']}) · judge {result['judge']['label']} with UMBRELA's prompt "
            f"(binary = grade >= 2) · reasons: {source} · cap {c['cap'] or 'none'} pairs per query · H2J top "
            f"{c['quantile']:g} · {len(result['universe'])} queries"
            + (f" (first {c['max_queries']})" if c.get("max_queries") else "")
            + f" · control seed {c['control_seed']}")


def not_a_finding(result: dict) -> str | None:
    """Why the result is not a finding (the models' gates), or None."""
    return paired.not_a_finding(result["gates"])


def primary_note(result: dict) -> str:
    """Which comparison to read first, and why (the result's declared primary comparison)."""
    return (f"Primary comparison (declared, first rows): {result['primary'].replace('_', ' ')}, with the hard x arm "
            f"interaction. {result['selection_note']} Holm across the declared family of {len(result['family'])} per "
            "setup; the interaction is tested on its own.")


def _role(part: dict, result: dict) -> str:
    name = part["scope"].split(" · ", 1)[-1]
    return "primary" if name == result["primary"] else "interaction" if name == study.INTERACTION else "secondary"


def verdict_frame(result: dict) -> pd.DataFrame:
    """One row per comparison: verdict, n, the mean change of disagreement with its interval, the tests, Holm's
    p, and the κ change against NIST with its interval; the primary comparison and the interaction first."""
    order = {"primary": 0, "interaction": 1, "secondary": 2}
    rows = []
    for part in sorted(result["verdicts"], key=lambda p: order[_role(p, result)]):  # stable: setups in order
        m, role = part["measured"], _role(part, result)
        w, k, test = m.get("wilcoxon") or {}, m.get("kappa") or {}, m.get("test") or {}
        because = part["evidence"].get("inconclusive_because") or []
        shown = "improved / unchanged / worsened"
        rows.append({
            "setup": part["scope"].split(" · ", 1)[0], "role": role,
            "comparison": study.INTERACTION if role == "interaction"
            else study.comparison_name(m["group"], m["before"], m["after"]),
            "verdict": part["verdict"] + (f" ({because[0]})" if part["verdict"] == "inconclusive" and because else ""),
            "n": m["n"], "mean change": m["mean_change"],
            "interval": _interval(m["change_interval"]),
            shown: f"{m['improved']} / {m['unchanged']} / {m['worsened']}" if role != "interaction"
            else f"{m['n_first']} hard vs {m['n_second']} control queries",
            "Wilcoxon W": w.get("statistic"), "Wilcoxon p": w.get("p"), "permutation p": test.get("p"),
            "Holm p": m.get("p_holm"), "sign test p": m.get("sign_test_p"), "κ change": k.get("change"),
            "κ interval": _interval(k.get("interval")), "κ pairs": k.get("n_pairs")})
    return pd.DataFrame(rows)


def _interval(pair) -> str:
    return "" if not pair else f"[{pair[0]:+.3f}, {pair[1]:+.3f}]"


def query_options(result: dict) -> list[str]:
    return [r["qid"] for r in result["queries"]]


def query_label(result: dict, qid: str) -> str:
    record = _record(result, qid)
    groups = ", ".join(f"{s} {g}" for s, g in record["group"].items() if g) or "no group"
    query = record["query"] if len(record["query"]) <= 70 else record["query"][:69] + "…"
    return f"{qid} · {groups} — {query}"


def _record(result: dict, qid: str) -> dict:
    return next(r for r in result["queries"] if r["qid"] == qid)


def sentences(result: dict, qid: str) -> dict[str, str]:
    """The query's difficulty sentence (and whose it is) and its control sentence, as plain text."""
    record = _record(result, qid)
    own = record["sentence_from"] == qid
    return {"difficulty": record["sentence"], "control": record["control_sentence"],
            "from": "its own H2J reason (" + ", ".join(record["reasons"]) + ")" if own
            else f"borrowed from hard query {record['sentence_from']} (a control query)"}


def labels_frame(result: dict, qid: str) -> pd.DataFrame:
    """Per judged passage: NIST's grade, each arm's label, and which labels disagree with NIST per setup."""
    rows = []
    for pair in _record(result, qid)["pairs"]:
        row = {"passage": pair["pid"], "NIST": pair["nist"]}
        for arm, title in ARM_COLUMNS.items():
            label = pair["labels"][arm]
            row[title] = "unparseable" if label is None and arm not in pair.get("errors", {}) else (
                "failed" if label is None else str(label))
        for setup in SETUPS:
            row[f"disagrees ({setup})"] = ", ".join(
                ARM_COLUMNS[a] for a in ARM_COLUMNS if pair["labels"][a] is not None
                and disagrees(pair["labels"][a], pair["nist"], setup, llm_is_binary=False)) or "none"
        rows.append(row)
    return pd.DataFrame(rows)


def disagreement_frame(result: dict, qid: str) -> pd.DataFrame:
    """The query's disagreement with NIST per setup and arm, with its group in each setup."""
    record = _record(result, qid)
    return pd.DataFrame([{"setup": s, "group": record["group"][s] or "-",
                          **{ARM_COLUMNS[a]: record["disagreement"][s][a] for a in ARM_COLUMNS}} for s in SETUPS])


def prompt_change(result: dict, arm: str = "aware") -> str:
    """The stored example's prompt diff from the baseline to ``arm`` (plain text for a code block)."""
    return study.example_diff(result, arm)


# ---------------------------------------------------------------------------- background jobs
def submit(dataset: str, folder: str | Path | None, *, judge: str, reasons: str = "assign", max_queries=0,
           cap=study.DEFAULT_CAP) -> int:
    """Queue an aware-judge run as a background job (it writes a progress record :func:`jobs_frame` shows). A
    bad field raises :class:`core.fields.FormError` naming it; nothing is queued."""
    forms.check_fields((JUDGE_FIELD, judge), (QUERIES_FIELD, max_queries or 0), (forms.PAIRS_PER_QUERY, cap))
    return AWARE_JUDGE.submit(dataset=dataset, folder=folder, judge=judge, reasons=reasons,
                              max_queries=forms.query_limit(max_queries), cap=int(cap))


# the same jobs table as the page's preference jobs (status, waiting reason, progress line, error)
jobs_frame = difficulty_aware_generation.jobs_frame
