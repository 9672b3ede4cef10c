"""``typology_agreement``: the annotation figures against the paper's accuracy 0.81 and precision 0.75.

Read from the annotation store's rows (:meth:`pipeline.annotation.store.AnnotationStore.export_rows`,
the rows the CSV export holds: complete queries and partial queries' answered cells) through
:func:`pipeline.annotation.validation.report`, per model that assigned the reasons, the LLM against the
union of the annotators. Named as the paper names them, with the project's definitions beside: the
paper's "accuracy" is compared with the project's ``cell_accuracy`` (every query x category cell,
untagged categories as true negatives: high whatever the reasons' quality), its "precision" with
``precision`` (share of assigned reasons judged correct). Unreadable assignments are left out of both
and counted (``excluded``).

The rule is data, the claims file's ``rule`` beside the claim (shown with the verdict), a bound the
inference core decides (:mod:`core.inference`): each figure's share (n = cells for accuracy, LLM-assigned
reasons for precision) above its ``threshold``, the paper's figure less 0.05, by its one-sided Wilson bounds
and score test. A figure holds when its lower bound lies above the threshold (the agreement is at most 0.05
under the paper's), does not hold when its upper bound lies under it, and is inconclusive when the bounds
straddle it or n is under ``min_n``, with the MDE and the n that would decide. The margin makes a
replication possible: without it a measured 0.81 would straddle 0.81 at every n. A model's part holds when
both figures hold (an intersection-union test: no correction for "both"), does not hold when either does
not (Holm across every figure of every model), else is inconclusive. Each part's headline names per figure
its n, interval and verdict.

Before any figure, a part is inconclusive when its evidence cannot carry a verdict: a typology run of
the model produced by a sub-1B or unknown-size model (``Provenance.evidence_gate``; a run the typology
store does not hold has an unknown model), or a degenerate assignment (:mod:`pipeline.typology.degenerate`:
every category for every readable query, or none for any, in the run or in the annotated rows).
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping

from dataclasses import replace

from core.inference.claims import Proportion, bound, joint
from pipeline.findings.evidence import Unit, graded_parts
from pipeline.findings.finding import UNMEASURABLE, Finding, Part, claim_rule, finding, paper_claims
from pipeline.llm.base import SMALL_MODEL, Provenance
from pipeline.typology.degenerate import degenerate_reason, run_degenerate_reason

# the n each figure's share is taken over, and the counts of its numerator
FIGURE_COUNTS = {"cell_accuracy": ("n_decisions", lambda o: o["tp"] + o["tn"], "cells"),
                 "precision": ("n_assigned", lambda o: o["tp"], "assigned reasons")}


def annotation_rows(path: str | Path | None = None) -> tuple[list[dict], str]:
    """The store's decision rows and the store's path (no rows when the store does not exist: it is not
    created by reading findings)."""
    from pipeline.annotation.store import AnnotationStore, default_path

    path = Path(path) if path is not None else default_path()
    if not path.is_file():
        return [], str(path)
    return AnnotationStore(path).export_rows(), str(path)


def typology_runs(run_ids: Iterable[str], path: str | Path | None = None) -> dict[str, dict]:
    """``{run_id: {"provenance", "degenerate", "n_unparseable"}}`` for those of ``run_ids`` the typology
    store holds (none when the store does not exist: reading findings never creates it)."""
    from pipeline.typology.store import TypologyStore, default_path

    path = Path(path) if path is not None else default_path()
    if not path.is_file():
        return {}
    out = {}
    with TypologyStore(path) as store:
        for run_id in sorted({r for r in run_ids if r}):
            run = store.get_run(run_id)
            if run is not None:
                queries = store.queries(run_id)
                out[run_id] = {"provenance": run["provenance"],
                               "degenerate": run_degenerate_reason(queries, run["categories"]),
                               "n_unparseable": sum(q["status"] == "unparseable" for q in queries)}
    return out


def rows_degenerate(rows: list[dict]) -> str:
    """:func:`degenerate_reason` of the annotated rows of one run (readable answers only)."""
    assigned: dict[tuple, set] = defaultdict(set)
    categories = set()
    for row in rows:
        if (row.get("llm_answer") or "readable") != "readable":
            continue
        categories.add(row["category"])
        query = assigned[(row["dataset"], row["task"], row["qid"])]
        if int(row["llm_assigned"]):
            query.add(row["category"])
    return degenerate_reason(assigned.values(), categories)


def model_gate(model: str, run_ids: list[str], runs: Mapping[str, dict]) -> tuple[str, list[str]]:
    """Why the reasons of ``model`` (from typology runs ``run_ids``) cannot carry a verdict ("" when they
    can), and the model as every headline names it (``label (size)``)."""
    reasons, names = [], []
    for run_id in run_ids:
        run = runs.get(run_id)
        if run is None:
            reasons.append(f"typology run {run_id or '(not recorded)'} is not in the typology store, so the size of "
                           f"its model is unknown")
            names.append(f"assigner: {model or '(model not recorded)'} (unknown size)")
            continue
        provenance = Provenance.from_dict(run["provenance"])
        names.append(f"assigner: {provenance.label} ({provenance.size_text})")
        if provenance.evidence_gate:
            reasons.append(f"reasons assigned by {provenance.evidence_gate}")
    if SMALL_MODEL in (model or "") and not any(SMALL_MODEL in r for r in reasons):
        reasons.append(f"reasons assigned by a {SMALL_MODEL}")
    return "; ".join(dict.fromkeys(reasons)), list(dict.fromkeys(names))


def typology_agreement(rows: list[dict], store_path: str = "", runs: Mapping[str, dict] | None = None) -> Finding:
    """The finding over the annotation ``rows``; ``runs``: the typology runs they judge
    (:func:`typology_runs`, read from the typology store when not given)."""
    from pipeline.annotation.validation import DEFINITIONS, report

    claim = paper_claims()["typology_agreement"]
    figures_of, rule = claim["figures"], claim["rule"]
    definitions = {name: f"paper's {name} {f['paper']} is compared with the project's {f['project']}: "
                         f"{DEFINITIONS[f['project']]}" for name, f in figures_of.items()}
    definitions["rule"] = rule["reading"]
    if not rows:
        return finding("typology_agreement", [Part("annotations", {}, UNMEASURABLE,
                                                   f"no annotations in the store ({store_path or 'annotation store'})")],
                       definitions=definitions)
    runs = typology_runs(r.get("run_id") for r in rows) if runs is None else runs
    figures = report(rows)
    excluded = {a: n["queries"] for a, n in figures["excluded"].items() if n["queries"]}
    excluded_text = (" · excluded: " + ", ".join(f"{n} {a} queries" for a, n in excluded.items())) if excluded else ""
    decided_by = claim_rule("typology_agreement")
    entries, rests = [], []
    for model, per in figures["by_model"].items():
        overall = per["llm_vs_union"]["overall"]
        scope = model or "(model not recorded)"
        measured = {name: overall.get(f["project"]) for name, f in figures_of.items()}
        measured.update(n_decisions=overall["n_decisions"], n_queries=overall["n_queries"],
                        n_assigned=overall["n_assigned"], tp=overall["tp"], fp=overall["fp"], fn=overall["fn"],
                        tn=overall["tn"], recall=overall.get("recall"), exact_agreement=overall.get("exact_agreement"))
        each = {}
        for name, f in figures_of.items():
            n_key, successes, unit = FIGURE_COUNTS[f["project"]]
            figure = replace(decided_by.at(name), counts=unit)
            each[name] = bound(Proportion(successes(overall), overall[n_key], unit), figure)
            measured[f"{name}_interval"] = list(each[name].interval) if overall[n_key] else None
        runs_of = [r or "" for r in per["runs"]]
        gate, models = model_gate(model, runs_of, runs)
        degenerate = [runs[r]["degenerate"] for r in runs_of if runs.get(r, {}).get("degenerate")]
        # per run: each run is one task's typology, and "every category" means every category of that typology
        degenerate += [d for d in (rows_degenerate([row for row in rows if (row.get("model") or "") == model
                                                    and (row.get("run_id") or "") == r]) for r in runs_of) if d]
        degenerate = list(dict.fromkeys(degenerate))
        decision = joint(each, decided_by).gated([gate, *degenerate[:1]])
        extra = {"paper": {name: f["paper"] for name, f in figures_of.items()},
                 "threshold": {name: decided_by.at(name).threshold for name in figures_of},
                 "excluded": excluded, "degenerate": degenerate}
        entries.append(Unit(scope, measured, decision, models, context=excluded_text.removeprefix(" · "),
                            extra=extra))
        rests.append({"kind": "annotations", "store": store_path, "model": model or "(unknown)", "runs": per["runs"],
                      "annotators": figures["annotators"], "excluded": figures["excluded"],
                      "typology_runs": {r: {k: runs[r][k] for k in ("degenerate", "n_unparseable")}
                                        for r in runs_of if r in runs}})
    parts = graded_parts(entries)
    if not parts:  # every answered query was excluded
        parts.append(Part("annotations", {}, UNMEASURABLE, "no readable assignment among the answered queries"
                          + excluded_text, {"excluded": excluded}))
    return finding("typology_agreement", parts, rests_on=rests, definitions=definitions)
