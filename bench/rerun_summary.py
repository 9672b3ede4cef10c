"""Markdown summary of a ``bench/rerun_study.sh`` output folder and of the judge benchmark: the
figures a closing note puts next to the study's findings.

    python bench/rerun_summary.py cache/run/study [--bench cache/run/bench/judge_agreement.json]

Per step: exit status, wall minutes, peak RSS and load average. Per dataset (study-DS.json): for every
configuration, the all-three share, exclusive shares and the largest pair with its p-value. Per
typology step: categories found, rounds and stop reason, unparseable assignments. Per prefer step:
the preference rate with its interval and the judge's position consistency. Steps that did not run
or did not finish are listed as such.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.judging.benchmark import sample_words  # noqa: E402
from pipeline.stats.agreement import kappa_text  # noqa: E402

FIGURES = ("parse_rate", "binary_agreement", "kappa", "graded_exact", "graded_within_1")


def _json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def steps(out: Path) -> list[str]:
    lines = ["| step | rc | wall min | peak RSS MB | load avg (start->end) |", "|---|---|---|---|---|"]
    tsv = out / "steps.tsv"
    for row in (tsv.read_text().splitlines() if tsv.is_file() else []):
        f = row.split("\t")
        if len(f) == 5:
            name, rc, wall, rss, load = f
            wall_min = f"{float(wall) / 60:.1f}" if wall.replace(".", "").isdigit() else wall
            rss_mb = f"{int(rss) / 1024:.0f}" if rss.isdigit() else rss
            lines.append(f"| {name} | {rc} | {wall_min} | {rss_mb} | {load} |")
        else:
            lines.append(f"| {row} | | | | |")
    return lines


def study(out: Path) -> list[str]:
    lines = []
    for path in sorted(out.glob("study-*.json")):
        result = _json(path)
        if not result:
            continue
        lines.append(f"\n### {path.stem}")
        lines.append("| configuration | n | all three | exclusive h2r / h2g / h2j | largest pair (count, p) "
                     "| h2r&h2j (count, expected, p) |")
        lines.append("|---|---|---|---|---|---|")
        for label, c in result.get("configurations", {}).items():
            a = c["analysis"]
            ex = " / ".join(f"{a['exclusive'][t]['share']:.0%}" if a["exclusive"][t]["share"] is not None else "-"
                            for t in ("h2r", "h2g", "h2j"))
            lp = a.get("largest_pairwise") or {}
            rj = a.get("pairwise", {}).get("h2r&h2j") or {}
            # the study's finding is about H2R&H2J: the one pair that needs no generator
            rj_cell = (f"{rj['count']}, {rj['expected_if_independent']:.1f}, p = {rj['p_value']:.3g}" if rj else "-")
            lines.append(f"| {label.replace(' | ', ' / ')} | {a.get('n_queries', '')} | {a['all_three']['count']} "
                         f"({a['all_three']['share']:.1%}) | {ex} | {lp.get('pair')} ({lp.get('count')}, "
                         f"p = {lp.get('p_value', float('nan')):.3g}) | {rj_cell} |")
    return lines


def typology(out: Path) -> list[str]:
    lines = []
    for path in sorted(out.glob("typology-*.out")):
        result = _json(path)
        if not result:
            lines.append(f"- {path.stem}: no result (did not finish or failed; see {path.stem}.err)")
            continue
        cats = "; ".join(f"{c['name']} ({c['n_queries']})" for c in result.get("categories", []))
        lines.append(f"- {path.stem}: {result.get('n_rounds')} rounds, stop {result.get('stop_reason')}; "
                     f"{len(result.get('categories', []))} categories: {cats}; unparseable assignments "
                     f"{result.get('n_unparseable')}, failed {result.get('n_failed')}; model {result['model']['label']}")
    return lines


def prefer(out: Path) -> list[str]:
    lines = []
    for path in sorted(out.glob("prefer-*.out")):
        result = _json(path)
        if not result:
            lines.append(f"- {path.stem}: no result (see {path.stem}.err)")
            continue
        lines.append(f"- {path.stem}: " + json.dumps(result.get("summary", result.get("overall", {})))[:1500])
    return lines


def bench(path: Path) -> list[str]:
    result = _json(path)
    if not result:
        return [f"(no judge benchmark at {path})"]
    s = result["sample"]
    lines = [f"{sample_words(result)}, seed {s['seed']}; {result['judge']}", "",
             "| judge | pairs | parse | binary agree | kappa | exact | within 1 | s/judgment | load avg |",
             "|---|---|---|---|---|---|---|---|---|"]

    def row(name, v):
        if "error" in v:
            return f"| {name} | {v['error'][:80]} | | | | | | | |"
        cells = [v.get(k) for k in FIGURES]
        spj = v.get("stored_seconds_per_judgment") or v.get("seconds_per_judgment")
        load = v.get("load_average")
        return ("| " + " | ".join([name, str(v.get("n_pairs", v.get("n_scored", "-"))),
                                   *(f"{c:.2f}" if isinstance(c, float) else
                                     kappa_text(c) if k == "kappa" and "binary_agreement" in v else "-"
                                     for k, c in zip(FIGURES, cells)),
                                   f"{spj:.1f}" if spj else "-",
                                   f"{load[0]:.1f}->{load[1]:.1f}" if load else "-"]) + " |")

    for name, v in result.get("references", {}).items():
        lines.append(row(f"imported {name}", v))
    for key, v in result.get("models", {}).items():
        lines.append(row(v.get("model", key), v))
        if "logprob" in v:
            lp = v["logprob"]
            lines.append(row(f"{key} log-prob (E>=1.5; AUC {lp.get('auc_binary') or float('nan'):.2f})", lp))
        for ref, fig in v.get("references_on_same_pairs", {}).items():
            lines.append(row(f"  imported {ref}, same pairs as {key}", fig))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--bench", default=None)
    args = parser.parse_args()
    out = Path(args.out)
    print("## Judge benchmark\n")
    print("\n".join(bench(Path(args.bench) if args.bench else out.parent / "bench" / "judge_agreement.json")))
    print("\n## Re-run steps\n")
    print("\n".join(steps(out)))
    print("\n## Overlap per configuration")
    print("\n".join(study(out)) or "(no study step finished)")
    print("\n## Typology\n")
    print("\n".join(typology(out)) or "(no typology step ran)")
    print("\n## Difficulty-aware generation (pairwise)\n")
    print("\n".join(prefer(out)) or "(no prefer step ran)")


if __name__ == "__main__":
    main()
