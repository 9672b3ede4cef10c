"""H2G's sampling noise on the pages (no streamlit here): the Failure overlap page's section (the Venn of a
configuration with H2G redrawn per sample: each region's mean and range across the samples, the pair counts
and the between-generator comparison) and the Query page's line (this query's probability of being hard to
generate). Everything is read from the stored ``h2g-samples`` results (:mod:`pipeline.study.sampling`)."""
from __future__ import annotations

import pandas as pd

from pipeline.export.sampling import region_texts, spread_analysis, spread_title
from pipeline.sets.overlap import intersection_label, region_label
from pipeline.study import sampling
from pipeline.views.venn import VENN_ORDER, venn_plotly

COMMAND = "python -m pipeline h2g-samples --dataset {dataset} --samples NAME --encoder minilm"


def missing_line(dataset: str) -> str:
    """What the section says when no result is stored, with the command that makes one."""
    return (f"No H2G sampling result of {dataset.upper()} is stored: it needs several samples per query of one "
            f"generator (the data folder's answers/samples.NAME.{dataset}.jsonl); run `"
            + COMMAND.format(dataset=dataset) + "`.")


def results(dataset: str) -> list[dict]:
    return sampling.stored_spreads(dataset)


def result_for(dataset: str, retriever: str, judge: str, setup: str) -> tuple[dict | None, str | None]:
    """``(the newest stored result with this configuration, its label)``, or ``(None, None)``."""
    label = f"{retriever} | {judge} | {setup}"
    for result in results(dataset):
        if label in result["configurations"]:
            return result, label
    return None, None


def spread_venn(result: dict, label: str):
    """The configuration's Venn with H2G redrawn per sample: areas by the mean counts, labels with the range."""
    configuration = result["configurations"][label]
    return venn_plotly(spread_analysis(configuration), texts=region_texts(configuration),
                       title=spread_title(result, label, "\n") + " · mean (min–max)")


def regions_frame(result: dict, label: str, study_analysis: dict | None = None) -> pd.DataFrame:
    """Per region: the mean, min and max count over the samples, and the study's own count when given."""
    d = result["configurations"][label]["distribution"]["regions"]
    rows = [{"region": region_label(k), "mean": d[k]["mean"], "min": d[k]["min"], "max": d[k]["max"],
             **({"this study": study_analysis["regions"][k]["count"]} if study_analysis else {})} for k in VENN_ORDER]
    return pd.DataFrame(rows)


def pairs_frame(result: dict, label: str) -> pd.DataFrame:
    """Per pair (and all three): its count's mean, min and max over the samples, and each other generator's."""
    configuration = result["configurations"][label]
    d = configuration["distribution"]
    rows = []
    for key in (*sampling.PAIR_KEYS, "all_three"):
        name = "all three" if key == "all_three" else intersection_label(key)
        rows.append({"overlap": name, "mean over samples": d[key]["mean"], "min": d[key]["min"], "max": d[key]["max"],
                     **{other: row[key] for other, row in configuration["generators"].items()}})
    return pd.DataFrame(rows)


def summary_lines(result: dict) -> list[str]:
    """The section's figures in words: hard in every / some / no sample, the sets' Jaccard, other generators."""
    hard, within = result["hard"], result["jaccard"]
    lines = [f"{len(result['samples'])} samples of {sampling.generator_text(result)} ({result['samples_file']}); "
             f"BERTScore {result['bertscore'].get('label', '')}; H2G the bottom {result['quantile']} of each sample's "
             f"queries.",
             f"Hard to generate in every sample: {hard['n_all']} of {hard['n_queries']} queries; in some: "
             f"{hard['n_some']}; in none: {hard['n_none']}.",
             f"H2G Jaccard between two samples: mean {sampling.range_text(within)} over {within['n']} pairs."]
    return lines + [sampling.between_line(other, c, within) + "." for other, c in result["compare"].items()]


def probability_frame(result: dict) -> pd.DataFrame:
    """Per query: P(H2G), hard in how many samples, BERTScore mean, sd, min and max; most often hard first."""
    rows = [{"qid": qid, "P(H2G)": q["p_hard"], "hard in": f"{q['n_hard']} of {q['n_samples']}",
             "BERTScore mean": q["mean"], "sd": q["sd"], "min": q["min"], "max": q["max"]}
            for qid, q in result["queries"].items()]
    frame = pd.DataFrame(rows)
    return frame.sort_values(["P(H2G)", "BERTScore mean"], ascending=[False, True]) if not frame.empty else frame


def query_frame(dataset: str, qid: str) -> pd.DataFrame:
    """The Query page's rows: this query's probability of being hard to generate in each stored result."""
    rows = []
    for result in results(dataset):
        q = sampling.query_probability(result, qid)
        if q is None:
            continue
        rows.append({"generator": result["generator"], "samples": q["n_samples"], "P(H2G)": q["p_hard"],
                     "hard in": f"{q['n_hard']} of {q['n_samples']}", "BERTScore mean": q["mean"], "sd": q["sd"],
                     "min": q["min"], "max": q["max"], "encoder": result["bertscore"].get("label", ""),
                     "result": result["id"][:12]})
    return pd.DataFrame(rows)
