"""The tool's query-performance predictors beside Faggioli et al. (ECIR 2023) on DL19 BM25 (issue 35).

    python bench/qpp_literature_dl19.py [--data DIR] [--n-boot 1000] [--out bench/results/qpp_literature_dl19.json]

For the data folder's BM25 run of DL19 (``runs/run.bm25.dl19.txt``, Anserini's BM25 k1 = 0.9, b = 0.4, 43
judged queries) and every predictor Faggioli et al. report for it (``bench/faggioli_ecir2023_dl19_bm25.json``,
transcribed from the issue), at the three targets nDCG@10, AP(rel=2)@100 and RR(rel=2)@10: the tool's
Kendall τ-b and Pearson r, NQC/WIG/SMV in the canonical (corpus-score) and list-mean variants at every k
the run allows (5 .. 100), each with a seeded per-query percentile bootstrap interval of the tool's
value and of its difference from the published one (the published value has no interval: the difference
interval is the tool's, shifted), and the paired bootstrap interval of canonical minus list-mean.

Then a measurement for each cause of a gap the note names:
- sampling: whether the published value lies inside the tool's 95% interval (43 queries);
- k: τ at each k (the table); the best k is reported as such, chosen on these very queries;
- the normaliser (canonical vs list-mean): the paired differences;
- the relevance level of the binary targets: AP and RR at rel = 1 and rel = 2;
- the run: BM25 runs computed here over the data folder's passages at k1/b = 0.9/0.4 and 1.2/0.75,
  canonical NQC@100 against each run's own nDCG@10;
- the index statistics: the index here is the data folder's passages (a pool-built partial corpus,
  marked pool); a full-corpus index is not available offline, so this cause is recorded as not measured
  here, with the command that measures it (``--index prebuilt:msmarco-v1-passage``).
Everything printed and stored is computed by this script; it writes a JSON record and a Markdown note.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats as scipy_stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PUBLISHED = Path(__file__).resolve().parent / "faggioli_ecir2023_dl19_bm25.json"
TARGETS = {"nDCG@10": "nDCG@10", "AP@100": "AP(rel=2)@100", "RR@10": "RR(rel=2)@10"}  # published -> measured
RELEVANCE_ALTERNATIVES = {"AP@100": "AP(rel=1)@100", "RR@10": "RR(rel=1)@10"}
KS = (5, 10, 20, 50, 100, 500)


def interval(samples: np.ndarray) -> list[float] | None:
    samples = samples[np.isfinite(samples)]
    return None if not len(samples) else [float(np.percentile(samples, 2.5)), float(np.percentile(samples, 97.5))]


def correlate(x_values: dict, target: dict, counts_for) -> dict:
    """τ-b and r of a predictor against a target over their shared queries, with bootstrap samples."""
    from pipeline.predict.evaluation import kendall_tau_b, pearson_r

    qids = [q for q in target if q in x_values]
    x = np.array([x_values[q] for q in qids], float)
    y = np.array([target[q] for q in qids], float)
    counts = counts_for(qids)
    if np.ptp(x) == 0:  # a constant predictor (WIG list-mean at the run's depth) has no correlation
        return {"n": len(qids), "kendall_tau": None, "pearson_r": None, "qids": qids,
                "samples": {"kendall_tau": np.full(1, np.nan), "pearson_r": np.full(1, np.nan)}}
    return {"n": len(qids), "kendall_tau": float(scipy_stats.kendalltau(x, y).statistic),
            "pearson_r": float(scipy_stats.pearsonr(x, y).statistic) if np.ptp(x) > 0 else None, "qids": qids,
            "samples": {"kendall_tau": kendall_tau_b(x, y, counts), "pearson_r": pearson_r(x, y, counts)}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=None, help="TREC DL data folder (default ../shared/data/trec_dl)")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the record as JSON here (and the note beside it as .md)")
    args = parser.parse_args()
    from core import paths
    from pipeline.predict import catalog, corpus_score, evaluation
    from pipeline.predict.index_stats import open_index, resolve_index
    from pipeline.retrieval import evaluation as measures
    from pipeline.retrieval.retrievers import compute_run, get_run
    from pipeline.study.config import load_collection

    started = time.perf_counter()
    data_dir = args.data or str(Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_dl")
    data = load_collection("dl19", data_dir=data_dir)
    queries, qrels = data.queries(), data.require_qrels()
    stats = open_index(data, resolve_index("dl19"))
    terms = stats.term_matrix(queries)
    run = get_run(data, "bm25")
    model = corpus_score.run_model(run)
    scores = corpus_score.corpus_scores(terms, model)
    depth = max(len(r) for r in run.run.values())

    values: dict[str, dict] = {}
    info: dict[str, dict] = {}

    def keep(pv):
        values[pv.predictor] = pv.values
        info[pv.predictor] = {"k": pv.k, "normaliser": pv.normaliser, "pool": pv.pool, "partial": pv.partial,
                              "model": pv.model, "n": len(pv.values)}

    for pv in catalog.pre_retrieval_values(terms, partial_corpus=stats.partial, pool=stats.pool):
        keep(pv)
    ks = [k for k in KS if k <= depth]
    for k in ks:
        for pv in catalog.post_retrieval_values("bm25", run.run, terms.lengths(), k=k, wig_k=k, only=set(queries),
                                                corpus_scores=scores, model=model.describe(),
                                                partial_corpus=stats.partial, pool=stats.pool):
            keep(pv)
    bases = {key: _values_of(values, info, key) for key in ("nqc@100", "wig@5", "smv@100")}
    found, lacked = catalog.relevance_model_values("bm25", run.run, queries, stats, 100, bases)
    for pv in found:
        keep(pv)

    measured = sorted(set(TARGETS.values()) | set(RELEVANCE_ALTERNATIVES.values()))
    target_values = measures.evaluate(qrels, run.run, measured, complete=True)
    judged = sorted(qrels)
    cache: dict[tuple, np.ndarray] = {}

    def counts_for(qids):
        # one resample of the judged queries per bootstrap draw, restricted to the pair's queries: every
        # statistic of a draw sees the same queries, so differences are paired
        key = tuple(qids)
        if key not in cache:
            rng = np.random.default_rng(args.seed)
            draws = rng.integers(0, len(qids), size=(args.n_boot, len(qids)))
            cache[key] = evaluation.resample_counts(draws, len(qids))
        return cache[key]

    published = json.loads(PUBLISHED.read_text())
    names = published["predictor_names"]
    table = []
    for name, x in values.items():
        base = name.split("@")[0].replace("_listmean", "")  # both variants sit beside the published value
        for short, measure in TARGETS.items():
            c = correlate(x, target_values[measure], counts_for)
            row = {"predictor": name, **info[name], "target": measure, "n": c["n"],
                   "kendall_tau": c["kendall_tau"], "tau_ci": interval(c["samples"]["kendall_tau"]),
                   "pearson_r": c["pearson_r"], "r_ci": interval(c["samples"]["pearson_r"])}
            for entry in published["values"]:
                if names[entry["predictor"]] == base and entry["target"] == short:
                    stat = entry["statistic"]
                    if c[stat] is None:
                        continue
                    diff = c["samples"][stat] - entry["value"]
                    row.setdefault("published", {})[stat] = entry["value"]
                    row.setdefault("difference", {})[stat] = c[stat] - entry["value"]
                    row.setdefault("difference_ci", {})[stat] = interval(diff)
                    ci = interval(c["samples"][stat])
                    row.setdefault("published_inside_ci", {})[stat] = bool(ci and ci[0] <= entry["value"] <= ci[1])
            if "_listmean" not in name and base in ("nqc", "wig", "smv") \
                    and name.replace(base, base + "_listmean", 1) in values:
                other = correlate(values[name.replace(base, base + "_listmean", 1)], target_values[measure], counts_for)
                paired = c["samples"]["kendall_tau"] - other["samples"]["kendall_tau"]
                if other["kendall_tau"] is None or c["kendall_tau"] is None:
                    continue
                row["canonical_minus_listmean_tau"] = c["kendall_tau"] - other["kendall_tau"]
                row["canonical_minus_listmean_tau_ci"] = interval(paired)
            table.append(row)

    # cause: the relevance level of the binary targets
    relevance = []
    for short, alternative in RELEVANCE_ALTERNATIVES.items():
        for name in ("nqc@100", "nqc_listmean@100"):
            for measure in (TARGETS[short], alternative):
                c = correlate(values[name], target_values[measure], counts_for)
                relevance.append({"predictor": name, "target": measure, "n": c["n"], "kendall_tau": c["kendall_tau"],
                                  "tau_ci": interval(c["samples"]["kendall_tau"]), "pearson_r": c["pearson_r"]})
    # cause: the run (BM25 parameters), runs computed here over the data folder's passages
    runs = []
    for k1, b in ((0.9, 0.4), (1.2, 0.75)):
        computed = compute_run(data, "bm25", depth=100, k1=k1, b=b, progress=False)
        computed_model = corpus_score.run_model(computed)
        own = measures.evaluate(qrels, computed.run, ["nDCG@10"], complete=True)["nDCG@10"]
        pvs = {pv.predictor: pv for pv in catalog.post_retrieval_values(
            computed.name, computed.run, terms.lengths(), k=100, only=set(queries),
            corpus_scores=corpus_score.corpus_scores(terms, computed_model))}
        for name in ("nqc@100", "nqc_listmean@100"):
            c = correlate(pvs[name].values, own, counts_for)
            runs.append({"run": f"bm25@computed k1={k1:g} b={b:g}", "mean_nDCG@10": float(np.mean(list(own.values()))),
                         "predictor": name, "n": c["n"], "kendall_tau": c["kendall_tau"],
                         "tau_ci": interval(c["samples"]["kendall_tau"]), "pearson_r": c["pearson_r"]})

    # cause: index statistics conditioned on these queries. The data folder's passages hold DL19's judged pool;
    # an index of only the passages judged for DL20 and not DL19 (another year's pool: not conditioned on
    # DL19's queries, though far smaller) shows how far the pool-built statistics move each predictor
    from pipeline.predict.index_stats import IndexChoice
    from pipeline.retrieval import bm25

    other_year = {pid: text for pid, text in _passages_judged_in(data_dir, "dl20").items()}
    other_stats = open_index(None, IndexChoice("local", str(bm25.build_index(other_year)), "bench: DL20-only pool"))
    other_terms = other_stats.term_matrix(queries)
    conditioning = []
    other_values = {pv.predictor: pv.values for pv in catalog.pre_retrieval_values(other_terms, partial_corpus=True)}
    other_values.update({pv.predictor: pv.values for pv in catalog.post_retrieval_values(
        "bm25", run.run, other_terms.lengths(), k=100, only=set(queries),
        corpus_scores=corpus_score.corpus_scores(other_terms, model))})
    for name in ("avg_idf", "max_idf", "avg_scq", "nqc@100", "smv@100", "wig@5"):
        for label, source in (("DL19 pool index (marked pool)", values), ("DL20-only pool index", other_values)):
            c = correlate(source[name], target_values["nDCG@10"], counts_for)
            conditioning.append({"predictor": name, "index": label, "n": c["n"], "kendall_tau": c["kendall_tau"],
                                 "tau_ci": interval(c["samples"]["kendall_tau"]), "pearson_r": c["pearson_r"]})
        a = correlate(values[name], target_values["nDCG@10"], counts_for)
        b = correlate(other_values[name], target_values["nDCG@10"], counts_for)
        if a["qids"] == b["qids"] and a["kendall_tau"] is not None and b["kendall_tau"] is not None:
            conditioning[-1]["pool_minus_other_tau"] = a["kendall_tau"] - b["kendall_tau"]
            conditioning[-1]["pool_minus_other_tau_ci"] = interval(a["samples"]["kendall_tau"] - b["samples"]["kendall_tau"])
    record = {"what": "the tool's QPP on DL19 BM25 beside Faggioli et al. (ECIR 2023)", "published": published,
              "run": run.as_dict(), "retrieval_model": model.as_dict(), "run_depth": depth,
              "mean_nDCG@10": float(np.mean([target_values["nDCG@10"][q] for q in judged])),
              "index": stats.as_dict(), "ks": ks, "n_boot": args.n_boot, "seed": args.seed,
              "bootstrap": "percentile 95%, per-query resampling, the same draws for every statistic of a query set",
              "documents_not_in_index_for_clarity_uef": lacked, "table": table,
              "causes": {"relevance_level": relevance, "run_parameters": runs,
                         "pool_conditioning": {"other_index": f"{len(other_year):,} passages judged for DL20 only, "
                                                              f"{other_stats.n_docs:,} documents, "
                                                              f"{other_stats.n_tokens:,} term occurrences "
                                                              f"(a partial corpus, not conditioned on DL19's topics)",
                                               "rows": conditioning},
                         "index_statistics": {"measured": False, "index_here": stats.describe(),
                                              "why": "no full-corpus MS MARCO index offline (pyserini's prebuilt "
                                                     "index needs a download)",
                                              "command": "python -m pipeline predict --dataset dl19 --retriever bm25 "
                                                         "--target-measure nDCG@10 --target-measure AP(rel=2)@100 "
                                                         "--index prebuilt:msmarco-v1-passage"}},
              "seconds": time.perf_counter() - started, "cores": len(os.sched_getaffinity(0)),
              "load_1min": os.getloadavg()[0], "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    record = portable(record, {data_dir: "<data folder>", str(paths.cache_dir()): "<cache>"})
    note = render_note(record)
    print(note)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(record, indent=1) + "\n")
        out.with_suffix(".md").write_text(note)


def portable(record: dict, places: dict[str, str]) -> dict:
    """``record`` with each machine folder of ``places`` (the data folder, the cache) written as its name,
    so neither the JSON nor the note names a path of the machine that ran it."""
    text = json.dumps(record)
    for folder, name in places.items():
        for form in {folder, str(Path(folder).resolve())}:
            text = text.replace(form.rstrip("/"), name)
    return json.loads(text)


def _passages_judged_in(data_dir: str, year: str) -> dict[str, str]:
    """The MS MARCO v1 passages of the data folder judged for ``year`` only (``judged_in`` column)."""
    out = {}
    with open(Path(data_dir) / "passages.msmarco-v1.dl19-dl20.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            pid, judged, text = line.rstrip("\n").split("\t", 2)
            if judged == year:
                out[pid] = text
    return out


def _values_of(values, info, key):
    from pipeline.predict.catalog import POST, PredictorValues

    return PredictorValues(key, key, POST, "bm25", values[key], [], info[key]["partial"], "", pool=info[key]["pool"],
                           k=info[key]["k"], normaliser=info[key]["normaliser"], model=info[key]["model"])


def _f(value, fmt="+.2f"):
    return "–" if value is None or not np.isfinite(value) else format(value, fmt)


def _ci(pair):
    return "" if not pair else f" [{pair[0]:+.2f}, {pair[1]:+.2f}]"


def render_note(record: dict) -> str:
    """The Markdown note: every figure read from ``record``."""
    lines = [f"# DL19 BM25: the tool's QPP beside Faggioli et al. (ECIR 2023)", "",
             f"Run: {record['run']['provenance']}; model {record['retrieval_model']['name']} "
             f"k1={record['retrieval_model']['k1']:g} b={record['retrieval_model']['b']:g} "
             f"({record['retrieval_model']['source']}); depth {record['run_depth']}; mean nDCG@10 "
             f"{record['mean_nDCG@10']:.4f}.", f"Index statistics: {record['index']['description']}.",
             f"Intervals: {record['bootstrap']}, {record['n_boot']} resamples, seed {record['seed']}.", "",
             "## Beside the published values", "",
             "| predictor | k | normaliser | target | n | τ [95% CI] | published τ | τ − published [95% CI] | r | published r | r − published [95% CI] |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in record["table"]:
        if "published" not in row:
            continue
        pub, diff, dci = row["published"], row["difference"], row["difference_ci"]
        lines.append(f"| {row['predictor']} | {row['k'] or ''} | {row['normaliser'] or ''} | {row['target']} | {row['n']} "
                     f"| {_f(row['kendall_tau'])}{_ci(row['tau_ci'])} | {_f(pub.get('kendall_tau'))} "
                     f"| {_f(diff.get('kendall_tau'))}{_ci(dci.get('kendall_tau'))} | {_f(row['pearson_r'])} "
                     f"| {_f(pub.get('pearson_r'))} | {_f(diff.get('pearson_r'))}{_ci(dci.get('pearson_r'))} |")
    lines += ["", "## Canonical minus list-mean (paired bootstrap)", "",
              "| predictor | target | τ canonical | τ canonical − list-mean [95% CI] |", "|---|---|---|---|"]
    for row in record["table"]:
        if "canonical_minus_listmean_tau" in row:
            lines.append(f"| {row['predictor']} | {row['target']} | {_f(row['kendall_tau'])} "
                         f"| {_f(row['canonical_minus_listmean_tau'])}{_ci(row['canonical_minus_listmean_tau_ci'])} |")
    lines += ["", "## Causes of the gaps, each measured", ""]
    compared = [r for r in record["table"] if "published" in r]
    inside = sum(v for r in compared for v in r["published_inside_ci"].values())
    total = sum(len(r["published_inside_ci"]) for r in compared)
    lines.append(f"- **Sampling (43 queries)**: the published value lies inside the tool's 95% interval in {inside} "
                 f"of {total} comparisons (every k and variant above).")
    for base in ("nqc", "smv", "wig"):
        rows = [r for r in compared if r["predictor"].split("@")[0] == base and r["target"] == "nDCG@10"
                and r["kendall_tau"] is not None]
        if rows:
            best = max(rows, key=lambda r: r["kendall_tau"])
            lines.append(f"- **k ({base}, canonical)**: τ vs nDCG@10 from {min(r['kendall_tau'] for r in rows):+.2f} to "
                         f"{best['kendall_tau']:+.2f} over k = {', '.join(str(r['k']) for r in rows)}; the best k "
                         f"({best['k']}) is chosen on these test queries, so it is optimistic.")
    for r in record["causes"]["relevance_level"]:
        lines.append(f"- **Relevance level**: {r['predictor']} vs {r['target']}: τ {_f(r['kendall_tau'])}{_ci(r['tau_ci'])}, "
                     f"r {_f(r['pearson_r'])} (n {r['n']}).")
    for r in record["causes"]["run_parameters"]:
        lines.append(f"- **The run ({r['run']}, partial corpus, mean nDCG@10 {r['mean_nDCG@10']:.4f})**: {r['predictor']} "
                     f"vs its own nDCG@10: τ {_f(r['kendall_tau'])}{_ci(r['tau_ci'])}.")
    pool = record["causes"]["pool_conditioning"]
    for r in pool["rows"]:
        lines.append(f"- **Index statistics, conditioning on these queries**: {r['predictor']} vs nDCG@10 with the "
                     f"{r['index']}: τ {_f(r['kendall_tau'])}{_ci(r['tau_ci'])}"
                     + (f"; DL19 pool − DL20-only {_f(r['pool_minus_other_tau'])}{_ci(r['pool_minus_other_tau_ci'])} "
                        f"(paired)" if r.get("pool_minus_other_tau_ci")
                        else "") + ".")
    lines.append(f"  (DL20-only index: {pool['other_index']}.)")
    idx = record["causes"]["index_statistics"]
    lines.append(f"- **Index statistics**: not measured here ({idx['why']}); the index used is {idx['index_here']}. "
                 f"Measure with `{idx['command']}`.")
    lines.append("- **Stemming**: not a difference to measure: both runs are Lucene BM25 with Porter stemming "
                 "(the data folder's README: Anserini's defaults; the issue for theirs).")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
