"""The closing note's table from a stored ``predict --json`` document (plain script, reads, never computes).

    python bench/predict_summary.py bench/results/predict_dl19_dl20.json [--all]

Per scope (each dataset, pooled) and target: every predictor's τ [95% CI] (oriented: + = a higher value
goes with an easier query), Holm p, AUC [95% CI] (> 0.5: higher predicts easier). A predictor "foresees"
a target's failure here when its Holm-corrected τ p < 0.05 *and* its AUC interval excludes 0.5;
``--all`` prints every row, otherwise only those and, for a target without any, says so.
"""
from __future__ import annotations

import argparse
import json


def foresees(row) -> bool:
    auc = (row.get("intervals") or {}).get("auc")
    return (row.get("kendall_p_holm") is not None and row["kendall_p_holm"] < 0.05 and auc is not None
            and (auc[0] > 0.5 or auc[1] < 0.5))


def line(row) -> str:
    ci = row.get("intervals") or {}
    tau, auc = ci.get("kendall_tau"), ci.get("auc")
    sign = 1 if row["higher_is_easier"] else -1
    tau_ci = "" if not tau else f" [{min(sign * tau[0], sign * tau[1]):+.2f}, {max(sign * tau[0], sign * tau[1]):+.2f}]"
    return (f"  {row['predictor']:28} n={row['n']:<3} τ(easier)={row['tau_easier']:+.2f}{tau_ci} "
            f"p_holm={row['kendall_p_holm']:.3g}  AUC={row['auc']:.2f}" + (f" [{auc[0]:.2f}, {auc[1]:.2f}]" if auc else "")
            if row.get("tau_easier") is not None else f"  {row['predictor']:28} n={row['n']} {row.get('note')}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("result")
    parser.add_argument("--all", action="store_true")
    args = parser.parse_args()
    doc = json.load(open(args.result))
    print(f"result {doc.get('id')}: datasets {', '.join(doc['datasets'])}; partial index statistics: {doc['partial']}")
    print(doc["provenance"]["auc"])
    scopes = list(dict.fromkeys(r["dataset"] for r in doc["evaluation"]))
    for scope in scopes:
        for target in dict.fromkeys(r["target"] for r in doc["evaluation"] if r["dataset"] == scope):
            rows = [r for r in doc["evaluation"] if r["dataset"] == scope and r["target"] == target]
            hits = [r for r in rows if foresees(r)]
            print(f"{scope} · {target}: " + (f"{len(hits)} of {len(rows)} predictors foresee it" if hits
                                             else f"no predictor foresees it (of {len(rows)})"))
            for row in sorted(rows if args.all else hits, key=lambda r: -(r.get("tau_easier") or -9)):
                print(line(row))


if __name__ == "__main__":
    main()
