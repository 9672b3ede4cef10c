"""The closing note's table from a stored ``predict --json`` document (plain script, reads, never computes).

    python bench/predict_summary.py bench/results/predict_dl19_dl20.json [--all]
    python bench/predict_summary.py RESULT.json --store bench/results/predict_dl19_dl20.json --data DIR

``--store OUT`` keeps a copy of a ``predict --json`` document as a bench result: the data folder (``--data``)
and the cache written as ``<data folder>`` and ``<cache>`` (:func:`qpp_literature_dl19.portable`), and the
stored result's own path left out, so no committed file names a machine's folder.

Per scope (each dataset, pooled) and target: every predictor's τ [95% CI] (oriented: + = a higher value
goes with an easier query), Holm p, AUC [95% CI] (> 0.5: higher predicts easier), sMARE, its pool mark
and its verdict. The verdict is the library's own (:meth:`pipeline.predict.evaluation.Row.verdict_reason`:
Holm-corrected τ with its interval, the claims' minimum n, the model gate, pool-built statistics left
out unless the stored run counted them), recomputed from the stored row so an older document reads by
today's rule; ``--all`` prints every row, otherwise those that foresee and, for a target without any, says so.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.predict.evaluation import Row  # noqa: E402  (after the path line)

ROW_FIELDS = {f.name for f in fields(Row)}


def verdict(row: dict, include_pool: bool) -> tuple[str, str]:
    """The library's verdict and its reason for a stored evaluation row."""
    return Row(**{k: v for k, v in row.items() if k in ROW_FIELDS}).verdict_reason(include_pool)


def line(row: dict, include_pool: bool) -> str:
    ci = row.get("intervals") or {}
    tau, auc = ci.get("kendall_tau"), ci.get("auc")
    sign = 1 if row["higher_is_easier"] else -1
    name = f"{row['predictor']}{' (pool)' if row.get('pool') else ''}"
    if row.get("tau_easier") is None:
        return f"  {name:34} n={row['n']} {row.get('note')}"
    tau_ci = "" if not tau else f" [{min(sign * tau[0], sign * tau[1]):+.2f}, {max(sign * tau[0], sign * tau[1]):+.2f}]"
    smare = "" if row.get("smare") is None else f"  sMARE={row['smare']:.3f}"
    found, why = verdict(row, include_pool)
    return (f"  {name:34} n={row['n']:<3} τ(easier)={row['tau_easier']:+.2f}{tau_ci} p_holm={row['kendall_p_holm']:.3g}"
            f"  AUC={row['auc']:.2f}" + (f" [{auc[0]:.2f}, {auc[1]:.2f}]" if auc else "") + smare
            + f"  {found} ({why})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("result")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--store", metavar="OUT", help="write the document here without machine folders")
    parser.add_argument("--data", help="the TREC DL data folder the result read (with --store)")
    args = parser.parse_args()
    doc = json.load(open(args.result))
    if args.store:
        from core import paths
        from qpp_literature_dl19 import portable

        places = {str(paths.cache_dir()): "<cache>", **({args.data: "<data folder>"} if args.data else {})}
        doc = portable({k: v for k, v in doc.items() if k != "path"}, places)
        Path(args.store).write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    include_pool = bool((doc.get("settings") or {}).get("pool_in_verdicts"))
    print(f"result {doc.get('id')}: datasets {', '.join(doc['datasets'])}; partial index statistics: {doc['partial']}; "
          f"pool-built index: {doc.get('pool')}")
    print(doc["provenance"]["auc"])
    scopes = list(dict.fromkeys(r["dataset"] for r in doc["evaluation"]))
    for scope in scopes:
        for target in dict.fromkeys(r["target"] for r in doc["evaluation"] if r["dataset"] == scope):
            rows = [r for r in doc["evaluation"] if r["dataset"] == scope and r["target"] == target]
            hits = [r for r in rows if verdict(r, include_pool)[0] == "foresees"]
            print(f"{scope} · {target}: " + (f"{len(hits)} of {len(rows)} predictors foresee it" if hits
                                             else f"no predictor foresees it (of {len(rows)})"))
            for row in sorted(rows if args.all else hits, key=lambda r: -(r.get("tau_easier") or -9)):
                print(line(row, include_pool))


if __name__ == "__main__":
    main()
