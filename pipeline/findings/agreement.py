"""``typology_agreement``: the annotation figures against the paper's accuracy 0.81 and precision 0.75.

Read from the annotation store's rows (:meth:`pipeline.annotation.store.AnnotationStore.export_rows`,
the rows the CSV export holds) through :func:`pipeline.annotation.validation.report`, per model that
assigned the reasons, the LLM against the union of the annotators. Named as the paper names them,
with the project's definitions beside: the paper's "accuracy" is compared with the project's
``cell_accuracy`` (every query x category cell, untagged categories as true negatives: high whatever
the reasons' quality), its "precision" with ``precision`` (share of assigned reasons judged correct).

A model holds the claim when both figures reach the paper's; a sub-1B model is "not measurable here";
fewer than ``MIN_ASSIGNED`` assigned reasons are too few to read a share from.
"""
from __future__ import annotations

from pathlib import Path

from pipeline.findings.finding import FAILS, HOLDS, UNMEASURABLE, Finding, Part, finding, paper_claims
from pipeline.llm.base import SMALL_MODEL

MIN_ASSIGNED = 10


def annotation_rows(path: str | Path | None = None) -> tuple[list[dict], str]:
    """The store's decision rows and the store's path (no rows when the store does not exist: it is not
    created by reading findings)."""
    from pipeline.annotation.store import AnnotationStore, default_path

    path = Path(path) if path is not None else default_path()
    if not path.is_file():
        return [], str(path)
    return AnnotationStore(path).export_rows(), str(path)


def typology_agreement(rows: list[dict], store_path: str = "") -> Finding:
    from pipeline.annotation.validation import DEFINITIONS, report

    figures_of = paper_claims()["typology_agreement"]["figures"]
    definitions = {name: f"paper's {name} {f['paper']} is compared with the project's {f['project']}: "
                         f"{DEFINITIONS[f['project']]}" for name, f in figures_of.items()}
    if not rows:
        return finding("typology_agreement", [Part("annotations", {}, UNMEASURABLE,
                                                   f"no annotations in the store ({store_path or 'annotation store'})")],
                       definitions=definitions)
    figures = report(rows)
    parts, rests = [], []
    for model, per in figures["by_model"].items():
        overall = per["llm_vs_union"]["overall"]
        measured = {name: overall.get(f["project"]) for name, f in figures_of.items()}
        measured.update(n_decisions=overall["n_decisions"], n_queries=overall["n_queries"],
                        n_assigned=overall["n_assigned"], tp=overall["tp"], fp=overall["fp"], fn=overall["fn"],
                        tn=overall["tn"], recall=overall.get("recall"), exact_agreement=overall.get("exact_agreement"))
        rests.append({"kind": "annotations", "store": store_path, "model": model or "(unknown)", "runs": per["runs"],
                      "annotators": figures["annotators"], "excluded": figures["excluded"]})
        scope = model or "(model not recorded)"
        text = ", ".join(f"{name} {measured[name]:.2f} (paper {f['paper']})" if measured[name] is not None
                         else f"{name} undefined" for name, f in figures_of.items())
        if SMALL_MODEL in (model or ""):
            parts.append(Part(scope, measured, UNMEASURABLE, f"reasons assigned by a {SMALL_MODEL} ({text})"))
        elif overall["n_assigned"] < MIN_ASSIGNED or any(measured[n] is None for n in figures_of):
            parts.append(Part(scope, measured, UNMEASURABLE,
                              f"too few assigned reasons ({overall['n_assigned']}, at least {MIN_ASSIGNED}) ({text})"))
        else:
            below = [n for n, f in figures_of.items() if measured[n] < f["paper"]]
            parts.append(Part(scope, measured, FAILS if below else HOLDS,
                              text + (f"; below the paper: {', '.join(below)}" if below else "")))
    return finding("typology_agreement", parts, rests_on=rests, definitions=definitions)
