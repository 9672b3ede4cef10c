"""The MQ2008 reproduction's tables beside the paper's figures, as Markdown, from a stored result of
``bench/learndcg_mq2008_reproduction.py`` (never typed: every figure is read from that file, and the paper's
from ``ltr/paper_claims.json``).

Two generated blocks, each between its own markers: the README carries the headline (:data:`README_BLOCK`: the
MLP at the study grid's shared settings), the LearnDCG guide the rest (:data:`GUIDE_BLOCK`: each loss tuned per
fold, the other rankers). :func:`sync_block` rewrites a file's block from the result and
``tests/ltr/test_paper_table.py`` fails when either file's block is not what the stored result gives now.
Figures are NDCG@k x 100 (the paper's unit): the mean over folds x seeds ± the seed-to-seed spread, the
candidate's lead over each baseline and its Holm-corrected p at NDCG@10 (the report's test: a paired t-test over
test queries on per-query NDCG averaged over seeds, Holm across the baselines at each k).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Block:
    """One generated block: its marker name, the bench option that writes it, the result's report parts it shows
    (in order) and the prefixes of the timings its cost line names (``tune`` covers the tuning and its checks)."""
    name: str
    option: str
    parts: tuple[str, ...]
    timings: tuple[str, ...]

    @property
    def start(self) -> str:
        return (f"<!-- {self.name}:start (generated from {{source}} by bench/learndcg_mq2008_reproduction.py "
                f"{self.option}; do not edit) -->")

    @property
    def end(self) -> str:
        return f"<!-- {self.name}:end -->"


# The README's marker names are the ones it has always had, so an older README's block is still found and replaced.
README_BLOCK = Block("mq2008-reproduction", "--readme", ("shared",), ("shared",))
GUIDE_BLOCK = Block("mq2008-reproduction-more", "--guide", ("tuned", "rankers"), ("tune", "rankers", "report"))
START, END = README_BLOCK.start, README_BLOCK.end
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
    from ltr.losses import loss_label

    rows = table["rows"]
    head = ("| loss | " + " | ".join(f"NDCG@{k}" for k in KS) + " | paper NDCG@10 | lead @10 | Holm p @10 |")
    lines = [head, "|" + "---|" * (len(KS) + 4)]
    for row in sorted(rows, key=lambda r: -(r.get("ndcg@10") or 0)):
        lead = row.get("diff@10")
        marks = "†" if row.get("better@10") else "‡" if row.get("worse@10") else ""
        lines.append(f"| {loss_label(row['loss'])} | " + " | ".join(_mean_sd(row, k) for k in KS)
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


TITLES = {"shared": "the study grid's shared hyper-parameters", "tuned": "each loss tuned per fold (Optuna)",
          "rankers": "the other rankers at the shared hyper-parameters"}


def markdown(result: dict, source: str, block: Block = README_BLOCK) -> str:
    """``block`` of a stored reproduction result (``source``: its path as the file holding the block names it)."""
    paper = json.loads(CLAIMS_FILE.read_text(encoding="utf-8"))["paper_figures"]["datasets"]["mq2008"]
    settings, report = result.get("settings", {}), result.get("report", {})
    out = [block.start.format(source=source), ""]
    for part in block.parts:
        title = TITLES[part]
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
    # the cost of what this block shows: its parts' timings (the guide's block also names the report's)
    timing = {name: t for name, t in result.get("timing", {}).items() if name.startswith(block.timings)}
    if timing:
        commits = sorted({t.get("commit", "")[:10] for t in timing.values() if t.get("commit")})
        out.append("Cost: " + "; ".join(f"{name} {t['wall_seconds'] / 60:.1f} min wall, {t['cpu_seconds'] / 60:.1f} min "
                                       f"CPU" for name, t in timing.items()) + f" ({settings.get('workers', 1)} worker, "
                   f"{settings.get('torch_threads', '1')} torch thread; commits {', '.join(commits) or '?'}).")
        out.append("")
    out.append(block.end)
    return "\n".join(out)


def _span(text: str, block: Block) -> tuple[int, int] | None:
    head = block.start.split("{source}")[0]
    start = text.find(head)
    end = text.find(block.end, start)
    return None if start < 0 or end < 0 else (start, end + len(block.end))


def sync_block(text: str, generated: str, block: Block = README_BLOCK) -> str:
    """``text`` with its ``block`` replaced by ``generated`` (appended when it has none)."""
    span = _span(text, block)
    if span is None:
        return text.rstrip("\n") + "\n\n" + generated + "\n"
    return text[:span[0]] + generated + text[span[1]:]


def current_block(text: str, block: Block = README_BLOCK) -> str | None:
    """``block`` of ``text`` as it stands, None when it has none."""
    span = _span(text, block)
    return None if span is None else text[span[0]:span[1]]
