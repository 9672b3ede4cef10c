"""The H2G sampling-noise part of a study's export (:mod:`pipeline.study.sampling`): for the newest stored
``h2g-samples`` result of the study's dataset, each query's probability of being hard to generate, the H2G
sets' Jaccard for every pair of samples and against each other generator, and per configuration of the
study that the result also holds (same retriever, judge and setup) the overlap with H2G redrawn per sample:
its distribution table and the Venn diagram of the mean counts labelled with their range. The diagram's
layout (:func:`spread_analysis`, :func:`region_texts`) is also the Failure overlap page's."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from core.export import Export, slug
from pipeline.export.venn import VENN_ORDER, venn_figure
from pipeline.sets.overlap import TASKS, intersection_label, region_label
from pipeline.study import sampling


def spread_analysis(configuration: dict) -> dict:
    """A diagram's analysis from a configuration's samples: each region's and set's mean count (the areas)."""
    d = configuration["distribution"]
    n = configuration["per_sample"][0]["n_queries"] if configuration["per_sample"] else 0
    return {"n_queries": n, "regions": {key: {"count": d["regions"][key]["mean"]} for key in VENN_ORDER},
            "sizes": {task: d["sizes"][task]["mean"] for task in TASKS}}


def region_texts(configuration: dict) -> dict[str, str]:
    """Each region's label: the mean over the samples and, where it moves, the range (min–max) on a second line."""
    out = {}
    for key in VENN_ORDER:
        s = configuration["distribution"]["regions"][key]
        out[key] = f"{s['mean']:.1f}" + ("" if s["min"] == s["max"] else f"\n({s['min']}–{s['max']})")
    return out


def spread_title(result: dict, label: str, sep: str = "; ") -> str:
    """The diagram's title: dataset and configuration, ``sep``, whose samples drew H2G."""
    return (f"{result['dataset'].upper()}: {label}{sep}H2G of each of {len(result['samples'])} samples of "
            f"{result['generator']}")


def result_caption(result: dict) -> str:
    """What every file of the part states: the samples (the file's name: the manifest's inputs give its path and
    sha256), the encoder, the rule and the result's id."""
    return (f"{len(result['samples'])} samples of {sampling.generator_text(result)} "
            f"({Path(result['samples_file']).name}); BERTScore "
            f"{result['bertscore'].get('label', '')}, {result['bertscore'].get('aggregate', '')} over the grade-2/3 "
            f"passages; H2G the bottom {result['quantile']} of each sample's scored queries; universe "
            f"{result['universe']}; h2g-samples result {result['id'][:12]}")


def probability_table(result: dict) -> pd.DataFrame:
    return pd.DataFrame([{"qid": qid, "p_h2g": q["p_hard"], "hard_in": q["n_hard"], "samples": q["n_samples"],
                          "bertscore_mean": q["mean"], "bertscore_sd": q["sd"], "bertscore_min": q["min"],
                          "bertscore_max": q["max"]} for qid, q in result["queries"].items()])


def jaccard_table(result: dict) -> pd.DataFrame:
    rows = [{"first": f"sample {p['first']}", "second": f"sample {p['second']}", "jaccard": p["jaccard"]}
            for p in result["jaccard"]["pairs"]]
    rows += [{"first": f"sample {s}", "second": other, "jaccard": j}
             for other, c in result["compare"].items() for s, j in c["jaccard_with_samples"].items()]
    return pd.DataFrame(rows)


def overlap_table(result: dict, label: str) -> pd.DataFrame:
    configuration = result["configurations"][label]
    d = configuration["distribution"]
    rows = [{"overlap": region_label(k), "mean": d["regions"][k]["mean"], "min": d["regions"][k]["min"],
             "max": d["regions"][k]["max"]} for k in VENN_ORDER]
    rows += [{"overlap": "all three" if k == "all_three" else intersection_label(k), "mean": d[k]["mean"],
              "min": d[k]["min"], "max": d[k]["max"], **{o: row[k] for o, row in configuration["generators"].items()}}
             for k in (*sampling.PAIR_KEYS, "all_three")]
    return pd.DataFrame(rows)


def export_sampling(export: Export, study) -> None:
    """The part (module docstring) for ``study`` (a :class:`pipeline.study.result.StudyResult`), or a line in
    the manifest saying why there is none."""
    result = sampling.stored_spread(study.dataset)
    if result is None:
        export.skip("H2G sampling noise", f"no h2g-samples result of {study.dataset} is stored "
                                          f"(python -m pipeline h2g-samples --dataset {study.dataset} --samples NAME)")
        return
    caption, extra = result_caption(result), {"h2g_samples_id": result["id"]}
    export.input_file("samples", result["samples_file"], name=result["generator"], **extra)
    export.table(probability_table(result), "h2g-samples-queries", "each query's probability of being hard to "
                 "generate across samples, with its BERTScore spread", f"H2G across samples. {caption}.", **extra)
    export.table(jaccard_table(result), "h2g-samples-jaccard", "the H2G sets' Jaccard for every pair of samples and "
                 "against each other generator", f"H2G agreement within and between generators. {caption}.", **extra)
    labels = {f"{c.components.retriever} | {c.components.judge} | {c.components.setup}"
              for c in study.configurations.values()}
    shared = [label for label in result["configurations"] if label in labels]
    if not shared:
        export.skip("H2G sampling overlap", f"h2g-samples result {result['id'][:12]} holds no configuration of "
                                            f"study {study.id} (retriever | judge | setup)")
    for label in shared:
        configuration, stem = result["configurations"][label], slug(label)
        export.figure(venn_figure(spread_analysis(configuration), title=spread_title(result, label),
                                  texts=region_texts(configuration)), f"h2g-samples-venn-{stem}",
                      "Venn diagram with H2G redrawn per sample: mean counts (areas) and their range",
                      f"Overlap of the hard sets with H2G redrawn per sample, {label}. {caption}.",
                      configuration=label, **extra)
        export.table(overlap_table(result, label), f"h2g-samples-overlap-{stem}", "Venn regions and pairwise "
                     "overlaps over the samples: mean, min, max (and each other generator's)",
                     f"Overlap with H2G redrawn per sample, {label}. {caption}.", configuration=label, **extra)
