"""The MQ2008 reproduction's table beside the paper's figures, as Markdown, from a stored result of
``bench/learndcg_mq2008_reproduction.py`` (never typed: every figure is read from that file, and the paper's
from ``ltr/paper_claims.json``).

The README carries the table between two markers; :func:`sync_block` rewrites it from the result and
``tests/ltr/test_paper_table.py`` fails when the README's block is not what the stored result gives now.
Figures are NDCG@k x 100 (the paper's unit): the mean over folds x seeds ± the seed-to-seed spread, the
candidate's lead over each baseline and its Holm-corrected p at NDCG@10 (the report's test: a paired t-test over
test queries on per-query NDCG averaged over seeds, Holm across the baselines at each k).
"""
from __future__ import annotations

import json
from pathlib import Path

START = "<!-- mq2008-reproduction:start (generated from {source} by bench/learndcg_mq2008_reproduction.py --readme; do not edit) -->"
END = "<!-- mq2008-reproduction:end -->"
KS = (1, 3, 5, 10)
CLAIMS_FILE = Path(__file__).with_name("paper_claims.json")


def _points(value) -> str:
    return "—" if value is None else f"{100 * value:.2f}"


def _mean_sd(row: dict, k: int) -> str:
    mean, sd = row.get(f"ndcg@{k}"), row.get(f"seed_sd@{k}")
    return _points(mean) + ("" if sd is None else f" ± {100 * sd:.2f}")


def _p(value) -> str:
    if value is None:
        return "—"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _paper_figure(loss: str, paper: dict) -> str:
    base = loss.split("(", 1)[0]
    if base == "learndcg":
        return f"{paper['learndcg']:.2f}"
    figure = paper.get("baselines", {}).get(base)
    return "—" if figure is None else f"{figure:.2f}"


def table_lines(table: dict, paper: dict) -> list[str]:
    """One experiment's significance table (the result's ``report.<part>.tables.<ranker>``) as Markdown rows."""
    rows = table["rows"]
    head = ("| loss | " + " | ".join(f"NDCG@{k}" for k in KS) + " | paper NDCG@10 | lead @10 | Holm p @10 |")
    lines = [head, "|" + "---|" * (len(KS) + 4)]
    for row in sorted(rows, key=lambda r: -(r.get("ndcg@10") or 0)):
        lead = row.get("diff@10")
        marks = "†" if row.get("better@10") else "‡" if row.get("worse@10") else ""
        lines.append(f"| {row['loss']} | " + " | ".join(_mean_sd(row, k) for k in KS)
                     + f" | {_paper_figure(row['loss'], paper)} | {'—' if lead is None else f'{100 * lead:+.2f}'}"
                     + f" | {_p(row.get('p_holm@10'))}{marks} |")
    return lines


def verdict_lines(findings: dict) -> list[str]:
    """Each finding's verdict and, for the claims tested per cut-off, its NDCG@10 parts (the paper's figures are
    NDCG@10; every cut-off's part is in the stored result and on the Findings page)."""
    lines = []
    for name, finding in (findings or {}).get("findings", {}).items():
        parts = finding.get("parts", [])
        shown = [p for p in parts if p.get("scope", "").endswith("NDCG@10")] or parts
        lines.append(f"- `{name}`: **{finding['verdict']}**. "
                     + " ".join(f"{p['scope']}: {p['reason']}." for p in shown))
    return lines


def markdown(result: dict, source: str) -> str:
    """The README block of a stored reproduction result (``source``: its path as the README names it)."""
    paper = json.loads(CLAIMS_FILE.read_text(encoding="utf-8"))["paper_figures"]["datasets"]["mq2008"]
    settings, report = result.get("settings", {}), result.get("report", {})
    commits = sorted({t.get("commit", "")[:10] for t in result.get("timing", {}).values() if t.get("commit")})
    out = [START.format(source=source), ""]
    titles = {"shared": "the study grid's shared hyper-parameters", "tuned": "each loss tuned per fold (Optuna)",
              "rankers": "the other rankers at the shared hyper-parameters"}
    for part, title in titles.items():
        done = report.get(part, {})
        tables = done.get("tables", {})
        if not tables:
            out += [f"*{title.capitalize()}:* {done.get('missing', 'not run')}.", ""]
            continue
        for ranker, table in tables.items():
            if "rows" not in table:
                out += [f"*{title.capitalize()}, {ranker}:* {table.get('error', 'no table')}.", ""]
                continue
            out += [f"**MQ2008, {ranker}, {title}** ({table.get('configuration', '')}; test: "
                    f"{table.get('candidate', 'learndcg')} against each loss, † / ‡ significantly better / worse "
                    "after Holm):", ""]
            out += table_lines(table, paper) + [""]
        out += verdict_lines(done.get("findings")) + [""]
    timing = result.get("timing", {})
    if timing:
        out.append("Cost: " + "; ".join(f"{name} {t['wall_seconds'] / 60:.1f} min wall, {t['cpu_seconds'] / 60:.1f} min "
                                       f"CPU" for name, t in timing.items()) + f" ({settings.get('workers', 1)} worker, "
                   f"{settings.get('torch_threads', '1')} torch thread; commits {', '.join(commits) or '?'}).")
        out.append("")
    out.append(END)
    return "\n".join(out)


def sync_block(text: str, block: str) -> str:
    """``text`` with its marked block replaced by ``block`` (appended when it has none)."""
    head = START.split("{source}")[0]
    start, end = text.find(head), text.find(END)
    if start < 0 or end < 0:
        return text.rstrip("\n") + "\n\n" + block + "\n"
    return text[:start] + block + text[end + len(END):]


def current_block(text: str) -> str | None:
    """The marked block of ``text`` as it stands, None when it has none."""
    head = START.split("{source}")[0]
    start, end = text.find(head), text.find(END)
    return None if start < 0 or end < 0 else text[start:end + len(END)]
