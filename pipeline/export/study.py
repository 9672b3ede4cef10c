"""Everything a paper needs from one stored study (``python -m pipeline export``, the pages' downloads).

Per configuration: the Venn diagram (SVG/PDF/PNG, its title naming dataset, retriever, generator,
judge and setup), the overlap table (Venn regions) and the pairwise table (CSV + booktabs LaTeX whose
caption names the configuration), and one per-query CSV per hard set (``hard-h2r-<configuration>.csv``:
exactly the set's queries with the three tasks' values). Per study: the stability table (every
configuration's pairwise overlaps, as stored), the structure-stability measurements and the findings
table (:mod:`pipeline.findings` on this study), the validation figures and preference rates the
findings read (when the stores hold any; otherwise the manifest says why not). ``manifest.json``: what
each file is, the study id, the models with digests, the commit and the date.
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from core.export import Export, slug
from core.findings import LATEX_REASON_CHARS
from pipeline.export.sampling import export_sampling
from pipeline.export.venn import VENN_ORDER, venn_figure
from pipeline.findings.finding import Finding, pair_name
from pipeline.findings.scope import study_record
from pipeline.sets.overlap import all_pairwise, further_note, intersection_label, region_label
from pipeline.study.result import StudyResult

TASK_VALUES = {"h2r": "ndcg@10", "h2g": "bertscore_f1", "h2j": "disagreement"}
TASK_WORDS = {"h2r": "hard to retrieve", "h2g": "hard to generate", "h2j": "hard to judge"}


def query_cap(study: StudyResult) -> str:
    """The study's query cap in words: a capped study's "10 of 10 judged queries" is not all of DL19."""
    cap = (study.configuration or {}).get("max_queries")
    if cap:
        return (f"query cap: the first {cap} judged queries of {study.dataset.upper()} in topic order "
                f"(the study's {len(study.queries)} queries)")
    return f"no query cap: all {len(study.queries)} judged queries of {study.dataset.upper()}"


def configuration_caption(study: StudyResult, label: str) -> str:
    """The configuration (components, quantile), its universe (which queries the overlap is over) and the
    study's query cap: what every table and figure of the configuration states."""
    c = study.configurations[label].components
    return (f"{study.dataset.upper()}, study {study.id}: retriever {c.retriever}, generator {c.generator}, "
            f"judge {c.judge}, setup {c.setup}; quantile {study.quantile}; {study.universe_summary(label).line()}; "
            f"{query_cap(study)}")


def study_caption(study: StudyResult) -> str:
    """The settings shared by every configuration: dataset, study, quantile, universe rule and query cap."""
    return (f"{study.dataset.upper()}, study {study.id}: every configuration; quantile {study.quantile}; "
            f"universe {study.universe_rule}; {query_cap(study)}")


def venn_title(study: StudyResult, label: str) -> str:
    """The figure's one-line title: dataset and configuration (the caption says the rest)."""
    return f"{study.dataset.upper()}: {label}"


def venn_caption(study: StudyResult, label: str) -> str:
    analysis = study.configurations[label].analysis
    return (f"Overlap of the hard sets (area-proportional Venn diagram, matplotlib-venn) over "
            f"{analysis['n_queries']} queries. {configuration_caption(study, label)}.")


_IMPORTED_FROM = re.compile(r"imported from (\S+)$")


def study_inputs(export: Export, study: StudyResult) -> None:
    """Record every input file of the study with its sha256: the data folder's topics, qrels and passages,
    the imported runs, answers and judgments (their paths as the study stored them)."""
    from pipeline.data.datasets import DATASETS

    spec = DATASETS.get(study.dataset)
    if study.data_folder and spec is not None:
        for role, name in (("topics", spec.topics_file), ("qrels", spec.qrels_file),
                           ("passages", spec.passages_file)):
            if (Path(study.data_folder) / name).exists():
                export.input_file(role, Path(study.data_folder) / name)
    for role, path in collection_files(study.source).items():  # a custom collection (--qrels FILE ...)
        export.input_file(role, path)
    for name, retriever in study.retrievers.items():
        if retriever.info.get("path"):
            export.input_file("run", retriever.info["path"], name=name)
    for name, generator in study.generators.items():
        match = _IMPORTED_FROM.search(str(generator.source or ""))
        if match:
            export.input_file("answers", match.group(1), name=name)
    for name, per_setup in study.judges.items():
        for setup, judge in per_setup.items():
            match = _IMPORTED_FROM.search(str(judge.info.get("source") or ""))
            if match:
                export.input_file("judgments", match.group(1), name=name, setup=setup)


# how a study records a custom collection's files (pipeline.study.config.load_collection's source)
_COLLECTION_FILE = re.compile(r"(qrels|topics|passages)=(.+?)(?=, (?:topics|passages)=|$)")


def collection_files(source: str) -> dict[str, str]:
    """``{"qrels": path, "topics": path, "passages": path}`` of a custom collection's study (its source
    ``files qrels=A, topics=B, passages=C``); empty for a registry dataset."""
    if not str(source or "").startswith("files "):
        return {}
    return {m.group(1): m.group(2) for m in _COLLECTION_FILE.finditer(source[len("files "):])}


def finding_inputs(export: Export, found) -> None:
    """Record the stores and result files the findings read (the annotation store behind the validation
    table, the preference results behind the preference table, ...) with their sha256; a preference result
    with its models' sizes (:func:`size_record`)."""
    import json

    for finding in found:
        for rest in finding.rests_on:
            path = rest.get("path") or rest.get("store")
            if not path or not Path(path).is_file():
                continue
            extra = {"finding": finding.name}
            if rest.get("kind") == "preference":
                result = json.loads(Path(path).read_text(encoding="utf-8"))
                made = [("judge", result.get("judge") or {}),
                        *((f"{side} generator", p or {}) for side, p in (result.get("generators") or {}).items())]
                extra["models"] = [{"role": role, "label": p.get("label"), "backend": p.get("backend"),
                                    "model": p.get("model"), "digest": p.get("digest") or "", **size_record(p)}
                                   for role, p in made]
            export.input_file(rest.get("kind") or "finding input", path, **extra)


def size_record(provenance: dict) -> dict:
    """A model's size in billions of parameters and where it comes from (what reported it, or the user's
    statement: :mod:`pipeline.llm.sizes`); an unknown size says so."""
    size = provenance.get("parameters_b")
    return {"parameters_b": size, "size_source": provenance.get("size_source") or (
        "unknown: nothing reported it and no --model-size was stated" if size is None else "not recorded")}


def sized_models(study: StudyResult) -> list[dict]:
    """The study's models (:func:`pipeline.findings.scope.model_record`) with their sizes (:func:`size_record`)."""
    from pipeline.findings.scope import model_record

    made = [("generator", name, g.provenance) for name, g in study.generators.items()]
    made += [(f"judge ({setup})", name, j.provenance) for name, per in study.judges.items() for setup, j in per.items()]
    return [{**model_record(role, name, provenance), **size_record(provenance)} for role, name, provenance in made]


def regions_table(analysis: dict) -> pd.DataFrame:
    n = analysis["n_queries"]
    rows = [{"region": region_label(name),
             "queries": analysis["regions"][name]["count"],
             "share_of_universe": analysis["regions"][name]["count"] / n if n else None} for name in VENN_ORDER]
    rows.append({"region": "hard in all three", "queries": analysis["all_three"]["count"],
                 "share_of_universe": analysis["all_three"]["share"]})
    rows += [{"region": f"{task.upper()} exclusive (share of the set)", "queries": ex["count"],
              "share_of_universe": ex["share"]} for task, ex in analysis["exclusive"].items()]
    return pd.DataFrame(rows)


def pairwise_table(analysis: dict) -> pd.DataFrame:
    largest = analysis["largest_pairwise"]
    return pd.DataFrame([{"pair": intersection_label(key), "overlap": f["count"], "expected_if_independent":
                          f["expected_if_independent"], "jaccard": f["jaccard"], "share_of_first": f["share_of_first"],
                          "share_of_second": f["share_of_second"], "p_hypergeometric": f["p_value"],
                          "largest": key == largest["pair"] or key in largest["tied_with"]}
                         for key, f in all_pairwise(analysis).items()])


def hard_set_table(study: StudyResult, label: str, task: str) -> pd.DataFrame:
    """The configuration's ``task`` set, hardest first, with each query's three values."""
    config = study.configurations[label]
    values = {"h2r": study.retriever(label).per_query, "h2g": study.generator(label).per_query,
              "h2j": study.judge(label).per_query}
    rows = []
    for rank, qid in enumerate(config.hard_in_universe[task], start=1):
        row = {"rank": rank, "qid": qid, "query": study.queries.get(qid, "")}
        row.update({TASK_VALUES[t]: values[t].get(qid) for t in TASK_VALUES})
        row.update({f"in_{t}": qid in config.hard_in_universe[t] for t in TASK_VALUES if t != task})
        rows.append(row)
    return pd.DataFrame(rows, columns=["rank", "qid", "query", *TASK_VALUES.values(),
                                       *(f"in_{t}" for t in TASK_VALUES if t != task)])


def findings_table(found: list[Finding], reason_chars: int | None = None) -> pd.DataFrame:
    from core.findings import summary_rows

    return pd.DataFrame(summary_rows(found, reason_chars))


def stability_measurements(found: dict[str, Finding]) -> pd.DataFrame:
    rows = []
    for part in found["structure_stable"].parts:
        m = part.measured
        if not m:
            continue
        row = {"differs_in": m["differs_in"], "first": m["first"], "second": m["second"]}
        row.update({f"change {intersection_label(k)}": s["change"] for k, s in m["pair_shares"].items()})
        row.update(all_three_change=m["all_three_change"], same_largest=m["same_largest"],
                   kendall_tau=m["rank_agreement"]["kendall_tau"], rbo=m["rank_agreement"]["rbo"],
                   queries=m["rank_agreement"]["n"], verdict=part.verdict)
        rows.append(row)
    return pd.DataFrame(rows)


def _measured_parts(finding: Finding, keys: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame([{"scope": p.scope, **{k: p.measured.get(k) for k in keys}, "verdict": p.verdict}
                         for p in finding.parts if p.measured and any(p.measured.get(k) is not None for k in keys[1:])])


def _predictor_heatmap(export: Export, dataset: str, settings: str) -> None:
    """The newest stored prediction of ``dataset``: its heatmap and table (or why there is none)."""
    from pipeline.export import predictors

    prediction = predictors.newest_prediction(dataset)
    if prediction is None:
        export.skip("predictor heatmap", f"no stored prediction covers {dataset} (python -m pipeline predict)")
        return
    table = predictors.evaluation_table(prediction, dataset)
    if table.empty:
        export.skip("predictor heatmap", f"prediction {prediction.get('id')} has no rows for {dataset}")
        return
    caption = predictors.caption(prediction, dataset)
    terms = predictors.definitions(prediction, dataset)
    extra = {"prediction_id": prediction.get("id"), "definitions": terms}
    export.figure(predictors.heatmap_figure(table, predictors.title(prediction, dataset)), "predictor-heatmap",
                  "predictors x targets: Kendall tau oriented easier-positive, * Holm p < 0.05",
                  f"Query-performance predictors against failure. {caption}.", **extra)
    export.table(table, "predictors", "each predictor against each target: tau, r and AUC with bootstrap "
                 "intervals, Holm p, Pearson p", f"Query-performance predictors against failure. {caption}. "
                 f"The hard sets: the study's settings ({settings}).", latex_frame=predictors.latex_frame(table),
                 keys=2, **extra)  # a row is a predictor against a target
    export.text("predictor-definitions.csv", "the terms of the predictor heatmap and table, defined",
                pd.DataFrame(list(terms.items()), columns=["term", "definition"]).to_csv(index=False),
                format="csv", prediction_id=prediction.get("id"))
    for runs in (prediction.get("provenance") or {}).get("runs", {}).values():
        for run in runs:
            export.input_file("run", run.get("path"), name=run.get("name"), prediction_id=prediction.get("id"))


def export_study(dataset: str, study_id: str | None, out: str | Path, *, data_folder=None) -> Export:
    """Write every file of the module docstring for ``study_id`` of ``dataset`` (None or ``latest``: the
    newest) into ``out``; returns the :class:`core.export.Export` (its manifest written)."""
    from pipeline.findings.registry import check_findings
    from pipeline.findings.scope import newest_study

    entry = newest_study(dataset, data_folder, None if study_id in (None, "latest") else study_id)
    if entry.study is None:
        raise ValueError(f"{dataset}: {entry.why_none} (see python -m pipeline studies --dataset {dataset})")
    study = entry.study
    record = study_record(study)
    export = Export(out, {"what": "failure study export", "dataset": study.dataset, "study_id": study.id,
                          "study_time": study.time, "data_folder": study.data_folder,
                          "configurations": record["configurations"], "retrievers": record["retrievers"],
                          "models": sized_models(study), "quantile": study.quantile,
                          "query_cap": (study.configuration or {}).get("max_queries"),
                          "n_queries": len(study.queries), "query_cap_text": query_cap(study),
                          "universe_rule": study.universe_rule,
                          "universes": {label: study.universe_summary(label).to_dict()
                                        for label in study.configurations}})
    study_inputs(export, study)
    for label, config in study.configurations.items():
        stem, caption = slug(label), configuration_caption(study, label)
        extra = {"configuration": label}
        export.figure(venn_figure(config.analysis, study.universe_summary(label), title=venn_title(study, label)),
                      f"venn-{stem}", "Venn diagram of the three hard sets (area-proportional, matplotlib-venn)",
                      venn_caption(study, label), **extra)
        export.table(regions_table(config.analysis), f"overlap-{stem}", "Venn regions, all-three and exclusive shares",
                     f"Overlap of the hard sets. {caption}.", **extra)
        export.table(pairwise_table(config.analysis), f"pairwise-{stem}",
                     "pairwise overlaps: count, expected if independent, Jaccard, one-sided hypergeometric p",
                     f"Pairwise overlap of the hard sets (p: one-sided hypergeometric, no correction). {caption}."
                     + "".join(f" {n}" for n in [further_note(config.analysis)] if n), **extra)
        for task in TASK_VALUES:
            export.text(f"hard-{task}-{stem}.csv", f"the {task.upper()} set ({TASK_WORDS[task]}) with every query's "
                        f"values", hard_set_table(study, label, task).to_csv(index=False), format="csv", **extra)
    settings = study_caption(study)
    stability_rows = [{**row, "pair": intersection_label(row["pair"])} for row in study.stability]
    export.table(pd.DataFrame(stability_rows), "stability", "every configuration's pairwise overlaps (as stored)",
                 f"Overlap structure across configurations. {settings}.")
    found = {f.name: f for f in check_findings(study.dataset, study_id=study.id)}
    finding_inputs(export, found.values())
    export.table(findings_table(list(found.values())), "findings", "the paper's claims checked on this study",
                 f"The failure paper's claims against this study. {settings}.",
                 latex_frame=findings_table(list(found.values()), LATEX_REASON_CHARS),
                 notes=["Each verdict's parts, measured figures and full reasons: findings.csv and "
                        "python -m pipeline findings --json."])
    stability = stability_measurements(found)
    if stability.empty:
        export.skip("structure-stability table", found["structure_stable"].reason)
    else:
        export.table(stability, "structure-stability", "configurations differing in one component: share changes, "
                     "Kendall tau, RBO", f"Stability across systems (Kendall tau-b, RBO p = 0.9). {settings}.",
                     keys=3)  # a row is the pair of configurations: what differs, the first and the second
    validation = _measured_parts(found["typology_agreement"], ("n_decisions", "accuracy", "precision", "recall",
                                                                "exact_agreement"))
    if validation.empty:
        export.skip("validation figures", found["typology_agreement"].reason)
    else:
        export.table(validation, "validation", "annotation validation figures per model (accuracy = cell_accuracy)",
                     f"Validation of the LLM-assigned failure reasons against the annotators (union). {settings}.")
    rates = _measured_parts(found["difficulty_aware_preferred"], ("paper_rate", "rate", "ci_low", "ci_high", "decided"))
    if rates.empty:
        export.skip("preference rates", found["difficulty_aware_preferred"].reason)
    else:
        export.table(rates, "preference", "difficulty-aware preference rates with 95% Wilson intervals",
                     f"Preference for the difficulty-aware answer (pair rule, Wilson 95% interval) beside the paper's. "
                     f"{settings}.")
    _predictor_heatmap(export, study.dataset, settings)
    export_sampling(export, study)
    export.write_manifest()
    return export
