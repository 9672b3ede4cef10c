"""Predicting real H2G on DL19 (issue 42): every predictor against the BERTScore F1 of each of
text-davinci-003's 8 samples and of gpt-4o-mini's answers, beside the ceiling the sampling leaves
(:mod:`pipeline.predict.ceiling`: the other samples' mean as the predictor of one sample). ``predict`` itself
reports that ceiling for an H2G target when an h2g-samples result of its generator is stored (``h2g_ceiling``);
this note also sets every sample against the predictors, one target each.

Reads a stored ``predict --json`` document (plain script: reads, never computes) whose generators include
the samples as ``NAME-sK=FILE`` (one answers file per sample, split from the data folder's
``answers/samples.text-davinci-003.dl19.jsonl``), e.g.::

    python -m pipeline predict --dataset dl19 --retriever bm25 --retriever tasb --encoder minilm \\
        --generator tdv003-s0=s0.jsonl ... --generator tdv003-s7=s7.jsonl \\
        --generator gpt-4o-mini=$DATA/answers/answers.gpt-4o-mini.dl19.jsonl --json > h2g.json
    python bench/qpp_h2g_dl19.py h2g.json --samples tdv003 --other gpt-4o-mini --out bench/results/qpp_h2g_dl19.md

Per predictor: τ (easier +) against sample 0 with its 95% interval and sMARE, the mean and range of τ and
the mean AUC over the samples, τ against the other generator, and the pool mark. No verdict is printed:
the answers' models are of unpublished size, so an H2G target is gated unless a size is stated
(``--model-size``; the document's own verdicts say which).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _f(value, fmt="+.3f") -> str:
    return "–" if value is None else format(value, fmt)


def render(doc: dict, samples: str, other: str) -> tuple[str, dict]:
    from pipeline.predict.ceiling import sampling_ceiling

    targets = doc["targets"]["dl19"]
    prefix = f"BERTScore F1[{samples}-s"
    names = sorted(n for n in targets if n.startswith(prefix))
    values = {n[len(prefix):-1]: targets[n]["values"] for n in names}
    sets = {n[len(prefix):-1]: targets[n]["hard"] for n in names}
    ceiling = sampling_ceiling(values, sets)
    rows = {}
    for r in doc["evaluation"]:
        if r["dataset"] == "dl19" and r["task"] == "h2g":
            rows.setdefault(r["predictor"], {})[r["target"]] = r
    first, other_name = names[0], f"BERTScore F1[{other}]"
    encoder = targets[first]["provenance"].get("label") or targets[first]["provenance"].get("encoder", "")
    lines = [f"# Predicting real H2G on DL19: {len(names)} samples of {samples}, and {other}", "",
             f"Prediction {doc.get('id')}; BERTScore {encoder}; n = {rows[next(iter(rows))][first]['n']} queries; "
             f"intervals: {doc['provenance']['bootstrap']['n_boot']} bootstrap resamples, seed "
             f"{doc['provenance']['bootstrap']['seed']}. τ is oriented: + = a higher predictor value, a higher "
             f"BERTScore. 'pool': reads the pool-built index (the data folder's passages).", "",
             f"**Ceiling** ({ceiling['note']}): τ {_f(ceiling['kendall_tau']['mean'])} "
             f"({_f(ceiling['kendall_tau']['min'])} to {_f(ceiling['kendall_tau']['max'])}), AUC of the sample's H2G "
             f"{_f(ceiling['auc']['mean'], '.3f')} ({_f(ceiling['auc']['min'], '.3f')} to "
             f"{_f(ceiling['auc']['max'], '.3f')}), sMARE {_f(ceiling['smare']['mean'], '.3f')} over "
             f"{ceiling['kendall_tau']['n']} samples.", "",
             f"| predictor | pool | τ vs sample 0 [95% CI] | sMARE vs sample 0 | τ over the samples: mean (min to max) "
             f"| AUC mean | τ vs {other} |", "|---|---|---|---|---|---|---|"]
    table = []
    for predictor, by_target in rows.items():
        row0 = by_target.get(first, {})
        taus = [by_target[n]["tau_easier"] for n in names if by_target.get(n, {}).get("tau_easier") is not None]
        aucs = [by_target[n]["auc"] for n in names if by_target.get(n, {}).get("auc") is not None]
        ci = (row0.get("intervals") or {}).get("kendall_tau")
        entry = {"predictor": predictor, "pool": bool(row0.get("pool")), "tau_sample0": row0.get("tau_easier"),
                 "tau_sample0_ci": ci, "smare_sample0": row0.get("smare"),
                 "tau_samples": {"mean": statistics.fmean(taus), "min": min(taus), "max": max(taus)} if taus else None,
                 "auc_mean": statistics.fmean(aucs) if aucs else None,
                 "tau_other": by_target.get(other_name, {}).get("tau_easier")}
        table.append(entry)
        spread = entry["tau_samples"] or {}
        lines.append(f"| {predictor} | {'pool' if entry['pool'] else ''} | {_f(entry['tau_sample0'])}"
                     + (f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "") + f" | {_f(entry['smare_sample0'], '.3f')} "
                     f"| {_f(spread.get('mean'))} ({_f(spread.get('min'))} to {_f(spread.get('max'))}) "
                     f"| {_f(entry['auc_mean'], '.3f')} | {_f(entry['tau_other'])} |")
    lines += ["", "Not computed: " + "; ".join(sorted({a['reason'].split(': ', 1)[1] for a in doc.get("absent", [])}))]
    return "\n".join(lines) + "\n", {"prediction": doc.get("id"), "ceiling": ceiling, "table": table}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("result", help="a stored predict --json document")
    parser.add_argument("--samples", required=True, help="the samples' generator name prefix (NAME of NAME-sK)")
    parser.add_argument("--other", required=True, help="the other generator's name")
    parser.add_argument("--out", help="write the note here (Markdown) and its figures beside it (.json)")
    args = parser.parse_args()
    note, record = render(json.loads(Path(args.result).read_text(encoding="utf-8")), args.samples, args.other)
    print(note)
    if args.out:
        out = Path(args.out)
        out.write_text(note, encoding="utf-8")
        out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
