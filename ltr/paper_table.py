"""The MQ2008 reproduction's tables beside the paper's figures, as Markdown, from a stored result of
``bench/learndcg_mq2008_reproduction.py`` (never typed: every figure is read from that file, and the paper's
from ``ltr/paper_claims.json``).

Two generated blocks, each between its own markers: the README carries the headline (:data:`README_BLOCK`: the
MLP at the study grid's shared settings), the LearnDCG guide the rest (:data:`GUIDE_BLOCK`: each loss tuned per
fold, the other rankers). :func:`sync_block` rewrites a file's block from the result and
``tests/ltr/test_paper_table.py`` fails when either file's block is not what the stored result gives now.
Figures are NDCG@k x 100 (the paper's unit): the mean over folds x seeds ± the seed-to-seed spread, the
candidate's lead over each baseline and three tests of it at NDCG@10: the report's paired t-test over test queries
on per-query NDCG averaged over seeds (Holm across the baselines), the fold-level test and, where the result has
the per-query archive, the hierarchical bootstrap over queries and seeds (:mod:`ltr.report.seeds`); the top group
(tied, no order within it); the queries without a relevant document beside the paper's figure (counted from the
data files, ``data.queries``); the LTR comparisons' verdicts decided afresh on the stored table by the claims file's
rules (:data:`REDECIDED`); and b_d's non-identifiability with θ_d's climb vs step count r of the stored runs.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from statistics import median
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
DATA = "mq2008"
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


def _seed_tests(table: dict, runs: list[dict], ranker: str) -> tuple[dict, str]:
    """``({loss: seed-aware test row}, what they are)``: the table's stored tests with the seeds as a random effect
    (``seed_tests``: fold-level test and hierarchical bootstrap), else the fold-level test recomputed from the
    result's per-run means (a result stored before the per-query archive has nothing more)."""
    from ltr.report.seeds import FOLD_TEST

    if table.get("seed_tests") is not None:
        tests = {r["loss"]: r for r in table["seed_tests"]}
        tests.update({alias: {**tests[twin], "loss": alias} for alias, twin in _aliases(table, _variants(tests)).items()
                      if twin in tests})
        return tests, "stored"
    runs_frame = _run_frame(table, runs, ranker)
    candidate = table.get("candidate")
    if runs_frame.empty or candidate not in set(runs_frame["variant"]):
        return {}, ""
    from ltr.report.seeds import seed_tests

    tests = {r["loss"]: r for r in seed_tests(runs_frame, candidate, (10,), runs=runs_frame).to_dict("records")}
    tests.update({alias: {**tests[twin], "loss": alias} for alias, twin in _aliases(table, runs_frame).items()
                  if twin in tests})
    return tests, FOLD_TEST


def _run_frame(table: dict, runs: list[dict], ranker: str):
    """The result's per-run test NDCG@10 of the table's rows (``variant, fold, seed, ndcg@10``): a row's runs are
    the ranker's runs of its loss (a tree baseline's: its own model's). A loss reported under a second name
    (``learndcg_fixed`` = ``approxndcg`` at defaults: no runs of its own) is left out, so it counts once in a
    family (:func:`_aliases` gives it its twin's figures)."""
    import pandas as pd

    from ltr.report.runs import variant_loss

    frame = pd.DataFrame(runs or [])
    if frame.empty:
        return pd.DataFrame(columns=["variant", "fold", "seed", "ndcg@10"])
    parts = []
    for row in table["rows"]:
        loss = variant_loss(row["loss"])
        mine = frame[(frame["loss"] == loss) & (frame["model"].isin([ranker, loss]))]
        parts.append(mine.assign(variant=row["loss"])[["variant", "fold", "seed", "test_ndcg10"]])
    return pd.concat(parts, ignore_index=True).rename(columns={"test_ndcg10": "ndcg@10"})


def _variants(names):
    """A frame of ``variant`` names, what :func:`_aliases` reads."""
    import pandas as pd

    return pd.DataFrame({"variant": [n for n in names if n is not None]})


def _aliases(table: dict, frame) -> dict[str, str]:
    """``{row without runs: the row with the same figures at every k}`` (a loss reported under a second name)."""
    have = set(frame["variant"])
    out = {}
    for row in table["rows"]:
        if row["loss"] in have:
            continue
        figures = [row.get(f"ndcg@{k}") for k in KS]
        twins = [o["loss"] for o in table["rows"] if o["loss"] in have
                 and [o.get(f"ndcg@{k}") for k in KS] == figures]
        if twins:
            out[row["loss"]] = twins[0]
    return out


def top_group_of(table: dict, runs: list[dict], ranker: str) -> dict:
    """The table's top group at NDCG@10 (:func:`ltr.report.seeds.top_group`): stored with the table (the bootstrap
    over queries and seeds), else from the fold-level test on the result's per-run means."""
    if table.get("top_group"):
        group = table["top_group"]
        known = _variants([group.get("best"), *group.get("p_holm", {})])
        twins = _aliases(table, known)
        return {**group, "members": [*group["members"], *(a for a, twin in twins.items() if twin in group["members"])]}
    if not table.get("rows"):
        return {}
    from ltr.report.seeds import FOLD_TEST, fold_level_test, table_mean, top_group

    frame = _run_frame(table, runs, ranker)
    if frame.empty:
        return {}
    means = {v: table_mean(frame, v, 10) for v in dict.fromkeys(frame["variant"]) if (frame["variant"] == v).any()}
    group = top_group(means, lambda best, other: fold_level_test(frame, best, other, 10)["p"])
    group["members"] += [alias for alias, twin in _aliases(table, frame).items() if twin in group["members"]]
    return {**group, "k": 10, "test": FOLD_TEST, "correction": "Holm across the best's comparisons",
            "reach": fold_test_reach(frame, group)}


def fold_test_reach(frame, group: dict) -> dict:
    """What the fold-level test could see: per comparison with the best, the minimum detectable difference at
    its n folds (:func:`core.inference.power.mde` on the sd of the per-fold differences, two-sided at the
    group's alpha before Holm, power 0.8; a normal approximation, so at 5 folds a lower bound of what a t test
    with 4 degrees of freedom needs). ``{"folds": n, "mde": {loss: NDCG@10 difference}}``."""
    from core.inference.power import mde

    means = frame.groupby(["variant", "fold"])["ndcg@10"].mean().unstack("variant")
    reach, folds = {}, set()
    for other in group.get("p_holm", {}):
        pair = means[[group["best"], other]].dropna()
        if len(pair) >= 2:
            folds.add(len(pair))
            reach[other] = mde(float((pair[group["best"]] - pair[other]).std(ddof=1)), len(pair),
                               1 - group["alpha"] / 2)
    return {"folds": max(folds) if folds else 0, "mde": reach} if reach else {}


def table_lines(table: dict, paper: dict, runs: list[dict] | None = None, ranker: str = "") -> list[str]:
    """One experiment's significance table (the result's ``report.<part>.tables.<ranker>``) as Markdown rows: the
    seed-averaged t-test's Holm p, the fold-level test's and (where stored) the bootstrap's interval and Holm p, and
    the top group's members marked."""
    from ltr.losses import loss_label

    rows = table["rows"]
    seeded, _ = _seed_tests(table, runs or [], ranker)
    boot = any(r.get("boot_p_holm@10") is not None for r in seeded.values())
    group = set(top_group_of(table, runs or [], ranker).get("members", []))
    head = ("| loss | " + " | ".join(f"NDCG@{k}" for k in KS) + " | paper NDCG@10 | lead @10 | t-test Holm p "
            "| fold-level Holm p" + (" | bootstrap 95% CI, Holm p" if boot else "") + " | top group |")
    lines = [head, "|" + "---|" * (len(KS) + 6 + boot)]
    for row in sorted(rows, key=lambda r: -(r.get("ndcg@10") or 0)):
        lead = row.get("diff@10")
        marks = "†" if row.get("better@10") else "‡" if row.get("worse@10") else ""
        seed_row = seeded.get(row["loss"], {})
        cells = [_p(seed_row.get("fold_p_holm@10"))]
        if boot:
            low, high = seed_row.get("boot_low@10"), seed_row.get("boot_high@10")
            cells.append("—" if low is None else f"[{100 * low:+.2f}, {100 * high:+.2f}], {_p(seed_row.get('boot_p_holm@10'))}")
        lines.append(f"| {loss_label(row['loss'])} | " + " | ".join(_mean_sd(row, k) for k in KS)
                     + f" | {_paper_figure(row['loss'], paper)} | {'—' if lead is None else f'{100 * lead:+.2f}'}"
                     + f" | {_p(row.get('p_holm@10'))}{marks} | " + " | ".join(cells)
                     + f" | {'●' if row['loss'] in group else ''} |")
    return lines


def top_group_line(table: dict, runs: list[dict], ranker: str) -> str:
    group = top_group_of(table, runs, ranker)
    if not group.get("members"):
        return ""
    n = len(group.get("p_holm", {}))
    line = (f"● Top group at NDCG@10: the losses not significantly below the highest mean ({group['best']}) by the "
            f"{group['test']}, Holm across its {n} comparisons, alpha = {group['alpha']}: "
            f"{', '.join(sorted(group['members']))}. They are tied: the group implies no order within it.")
    reach = group.get("reach") or {}
    if reach.get("mde"):  # tied is not equal: what the test could have seen, and what the queries do see
        sizes = sorted(100 * v for v in reach["mde"].values())
        spread = [r["ndcg@10"] for r in table["rows"] if r["loss"] in group["members"] and r.get("ndcg@10") is not None]
        separated = [f"{r['loss']} (Holm p {_p(r.get('p_holm@10'))})" for r in table["rows"]
                     if r["loss"] in group["members"] and (r.get("better@10") or r.get("worse@10"))]
        line += (f" Tied is not equal: at n = {reach['folds']} folds this test detects (power 80%, two-sided "
                 f"{group['alpha']} before Holm) only differences of at least {sizes[0]:.2f} to {sizes[-1]:.2f} "
                 f"NDCG@10 points, by comparison (median {median(sizes):.2f}; a normal approximation, "
                 f"core.inference.power, which a t test on {reach['folds'] - 1} degrees of freedom only raises), "
                 f"against a spread of {100 * (max(spread) - min(spread)):.2f} points within the group")
        line += (f"; over the queries, the t-test separates {table.get('candidate', 'the candidate')} from "
                 f"{', '.join(separated)} in it." if separated else ".")
    return line


def seed_tests_line(table: dict, runs: list[dict], ranker: str) -> str:
    if table.get("seed_tests") is not None:
        definitions = table.get("seed_tests_definitions", {})
        return (f"Seeds as a random effect: fold-level Holm p = the {definitions.get('fold', '')}; bootstrap = the "
                f"{definitions.get('bootstrap', '')}; both Holm across the baselines. The t-test treats the seeds "
                "as fixed (each query's NDCG averaged over them).")
    _, recomputed = _seed_tests(table, runs, ranker)
    if recomputed:
        return (f"Seeds as a random effect: fold-level Holm p = the {recomputed}, recomputed from this result's per-run "
                "means; the hierarchical bootstrap over queries and seeds needs the per-query archive, which this "
                "result predates (rerun its report part).")
    return ""


def no_relevant_line(result: dict) -> str:
    """The queries that score 1 under every loss, counted from the data files (``data.queries``)."""
    counts = (result.get("data") or {}).get("queries")
    if not counts:
        return ""
    share = counts["no_relevant"] / counts["test_queries"]
    return (f"Beside the paper's {{paper}}: {counts['no_relevant']} of the {counts['test_queries']} test queries have no "
            f"relevant document (counted from the LETOR test files the result names) and score 1 under every loss "
            f"(norel=1), so {100 * share:.2f} points of every mean above are theirs and every lead comes from the "
            f"other {counts['test_queries'] - counts['no_relevant']}; ltr/paper_claims.json records no such "
            f"convention for the paper's figure.")


def identifiability_lines(findings: dict | None) -> list[str]:
    """Why LearnDCG's b_d cannot be identified (``ltr/losses/learndcg.py``'s algebra) and what the runs show: the
    climb of θ_d (last step less start) against the step count over the θ_d finding's runs (Pearson r, scipy), read
    from the stored finding."""
    from scipy import stats

    finding = ((findings or {}).get("findings") or {}).get("theta_d_fold_specific") or {}
    runs = [r for part in finding.get("parts", []) for fold in (part.get("measured", {}).get("per_fold") or {}).values()
            for r in fold["seeds"].values()]
    lines = ["**LearnDCG's b_d is not identifiable.** With d(r) = ln(1 + r) / ln b_d the DCG is ln b_d × S, S free of "
             "b_d. Under the paper's formula with standard normalisation (the ideal DCG with log2) b_d only rescales "
             "the loss, by ln b_d, a factor Adam's normalised steps largely ignore, and dL/dθ_d = L σ(θ_d) / (b_d ln b_d) "
             "is never positive (L ≤ 0): θ_d can only climb, by about the loss-parameter learning rate per step. With "
             "learned normalisation ln b_d cancels exactly and θ_d never moves. Started at b_d = 2 (ApproxNDCG's log2) "
             "b_d never goes below 2, so the paper's 1.80 is unreachable from the default start."]
    if len(runs) > 2:
        lines.append("")
        steps = [r["steps"] for r in runs]
        theta = [r["theta_d_final"] - r["theta_0"] for r in runs]  # the climb: runs may start apart (tuned)
        tested = [r.get("b_d_tested") for r in runs]
        r_value = stats.pearsonr(steps, theta).statistic
        where = ("at the checkpoint that was tested" if all(v is not None for v in tested) else
                 "at the last logged step, up to the early-stopping patience after the checkpoint that was tested "
                 "(this result predates recording them at the tested checkpoint)")
        lines.append(f"Measured: θ_d's climb over the whole run (last step less start) against the run's step count, "
                     f"Pearson r = {r_value:.4f} over {len(runs)} runs ({min(steps)} to {max(steps)} steps); the "
                     f"folds' b_d are compared {where}. So the θ_d verdict answers two questions apart: fold-specific "
                     "(do the folds differ more than the seeds?) and identifiable (is the value set by the data, not "
                     "by the step count?); the second fails first.")
    return lines


# The comparisons the inference core decides from a table's figures (diff, sd of the differences, pairs): re-read
# from the stored table, so a result stored before the core shows the verdicts its rules give now.
REDECIDED = ("learndcg_highest", "neuralloss_vs_learndcg")


def redecided(table: dict, ranker: str) -> dict[str, list]:
    """The parts of :data:`REDECIDED` decided on a stored table's rows (:func:`ltr.findings.highest_parts`,
    :func:`ltr.findings.neuralloss_parts`: the claims file's rules, ``core.inference.claims``)."""
    import re

    import pandas as pd

    from ltr.findings import highest_parts, neuralloss_parts
    from ltr.losses import IDENTICAL_AT_DEFAULTS

    frame = pd.DataFrame(table["rows"])
    losses = set(frame["loss"])
    seeds = re.search(r"seeds=([\d,]+)", table.get("configuration") or "")
    frame.attrs.update(candidate=table.get("candidate"), configuration=table.get("configuration"),
                       seeds=[int(s) for s in seeds.group(1).split(",")] if seeds else None,
                       identical={a: note for a, (twin, note) in IDENTICAL_AT_DEFAULTS.items()
                                  if a in losses and twin in losses})
    scope = f"{DATA} / {ranker}"
    return {"learndcg_highest": highest_parts(frame, scope), "neuralloss_vs_learndcg": neuralloss_parts(frame, scope)}


def tuning_line(result: dict) -> str:
    """The tuning as it ran, read from the result's ``parts.tune`` (each study's trials, states and sampler): the
    studies, trials per study, the sampler's random start-up, the trials' states and how many distinct settings they
    tried (a sampler seeded by trial number alone tried the same few settings in every study), and the settings
    LambdaMART took per fold. Empty for a result without the tuning's record."""
    tune = (result.get("parts") or {}).get("tune") or {}
    folds = {name: fold for name, fold in tune.items() if name.startswith("fold") and fold.get("studies")}
    studies = [s for fold in folds.values() for s in fold["studies"]]
    if not studies:
        return ""
    trials = [t for s in studies for t in s.get("trials", [])]
    states = {state: sum(s["states"].get(state, 0) for s in studies) for state in ("COMPLETE", "PRUNED", "FAIL")}
    distinct = len({json.dumps(t["params"], sort_keys=True) for t in trials})
    per_study = sorted({s["n_trials"] for s in studies})
    startups = sorted({s["sampler"]["n_startup_trials"] for s in studies})
    samplers = sorted({s["sampler"]["name"] for s in studies})
    pruners = sorted({(s.get("pruner") or {}).get("name", "no pruner") for s in studies})
    losses = sorted({s["loss"] for s in studies})

    def spread(values):
        return "–".join(dict.fromkeys(str(v) for v in (min(values), max(values))))

    line = (f"Tuning as it ran (the result's `parts.tune`): {len(studies)} studies ({len(losses)} losses incl. "
            f"LambdaMART × {len(folds)} tuned fold{'s' * (len(folds) != 1)}, on validation NDCG@10), "
            f"{spread(per_study)} trials each ({', '.join(samplers)}, its first {spread(startups)} random; "
            f"{', '.join(pruners)}): "
            f"{len(trials)} trials, "
            f"{states['COMPLETE']} complete, {states['PRUNED']} pruned, {states['FAIL']} failed, "
            f"{distinct} distinct settings.")
    chosen = {name: fold.get("grid", {}).get("model_params", {}).get("lambdamart") for name, fold in folds.items()}
    fixed = next((s["space"].get("fixed", {}) for s in studies if s["loss"] == "lambdamart"), {})
    if all(chosen.values()):
        limits = (f"; up to {fixed['most_trees']:,} trees, patience {fixed['early_stopping_rounds']}"
                  if {"most_trees", "early_stopping_rounds"} <= set(fixed) else "")
        each = "; ".join(f"{name.replace('fold', 'Fold')} {c['num_leaves']}, {c['learning_rate']:.3f}, "
                         f"{c['min_data_in_leaf']}" for name, c in sorted(chosen.items()))
        line += f" LambdaMART took per fold (num_leaves, learning_rate, min_data_in_leaf{limits}): {each}."
    return line


def shown_parts(parts: list, verdict: str, scope, verdict_of) -> list:
    """The parts a verdict line prints: the NDCG@10 ones and, where none of them reaches the combined ``verdict``
    (another cut-off decided it, e.g. one ranker's NDCG@1), the parts that do, so the line shows what decided it."""
    shown = [p for p in parts if scope(p).endswith("NDCG@10")] or list(parts)
    if all(verdict_of(p) != verdict for p in shown):
        shown += [p for p in parts if verdict_of(p) == verdict and p not in shown]
    return shown


def verdict_lines(findings: dict, tables: dict | None = None) -> list[str]:
    """Each finding's verdict and, for the claims tested per cut-off, its NDCG@10 parts (the paper's figures are
    NDCG@10; every cut-off's part is in the stored result and on the Findings page), with the parts of another
    cut-off where they decided the verdict (:func:`shown_parts`). The claims of :data:`REDECIDED` are decided
    afresh on the stored ``tables``."""
    from core.findings import combine

    fresh = {name: [] for name in REDECIDED}
    for ranker, table in (tables or {}).items():
        # a table stored with the paired test's figures at every k (older results kept only the p-values)
        tested = [(r, k) for r in table.get("rows", []) for k in KS if r.get(f"p@{k}") is not None]
        if tested and all(f"sd_diff@{k}" in r and f"pairs@{k}" in r for r, k in tested):
            for name, parts in redecided(table, ranker).items():
                fresh[name] += parts
    lines = []
    for name, finding in (findings or {}).get("findings", {}).items():
        if fresh.get(name):
            verdict, _ = combine(fresh[name])
            shown = shown_parts(fresh[name], verdict, lambda p: p.scope, lambda p: p.verdict)
            lines.append(f"- `{name}`: **{verdict}** (decided on the stored table by the claims file's "
                         f"{paper_claims_rule(name)['type']} rule). " + " ".join(f"{p.scope}: {p.reason}." for p in shown))
            continue
        parts = finding.get("parts", [])
        shown = shown_parts(parts, finding["verdict"], lambda p: p.get("scope", ""), lambda p: p.get("verdict"))
        lines.append(f"- `{name}`: **{finding['verdict']}**. "
                     + " ".join(f"{p['scope']}: {p['reason']}." for p in shown))
    return lines


def paper_claims_rule(name: str) -> dict:
    return json.loads(CLAIMS_FILE.read_text(encoding="utf-8"))["claims"][name]["rule"]


TITLES = {"shared": "the study grid's shared hyper-parameters", "tuned": "each loss tuned per fold (Optuna)",
          "rankers": "the other rankers at the shared hyper-parameters"}


def part_title(part: str, settings: dict) -> str:
    """A part's caption; the tuned part's names the fold whose settings a fold took where it was not tuned on its own
    validation set (``settings.tuned_on``, ``--tune-folds``)."""
    borrowed = {fold: source for fold, source in (settings.get("tuned_on") or {}).items() if fold != source}
    if part != "tuned" or not borrowed:
        return TITLES[part]
    lenders = sorted(set(borrowed.values()))
    return (f"each loss tuned (Optuna) on {' and '.join(f.capitalize() for f in lenders)}'s validation set, its settings "
            f"applied to {', '.join(f.capitalize() for f in sorted(borrowed))}")


def markdown(result: dict, source: str, block: Block = README_BLOCK) -> str:
    """``block`` of a stored reproduction result (``source``: its path as the file holding the block names it)."""
    paper = json.loads(CLAIMS_FILE.read_text(encoding="utf-8"))["paper_figures"]["datasets"]["mq2008"]
    settings, report = result.get("settings", {}), result.get("report", {})
    out = [block.start.format(source=source), ""]
    for part in block.parts:
        title = part_title(part, settings)
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
            runs = done.get("runs", [])
            out += table_lines(table, paper, runs, ranker) + [""]
            for line in (top_group_line(table, runs, ranker), seed_tests_line(table, runs, ranker),
                         no_relevant_line(result).format(paper=_paper_figure("learndcg", paper)) if part == "shared"
                         else ""):
                out += [line, ""] if line else []  # each its own paragraph
        if part == "tuned" and tuning_line(result):
            out += [tuning_line(result), ""]
        out += verdict_lines(done.get("findings"), tables) + [""]
        if part == "shared":
            out += identifiability_lines(done.get("findings")) + [""]
    # the cost of what this block shows: its parts' timings (the guide's block also names the report's)
    timing = {name: t for name, t in result.get("timing", {}).items() if name.startswith(block.timings)}
    workers = settings.get("workers", 1)
    if timing:
        commits = sorted({t.get("commit", "")[:10] for t in timing.values() if t.get("commit")})
        out.append("Cost: " + "; ".join(f"{name} {t['wall_seconds'] / 60:.1f} min wall, {t['cpu_seconds'] / 60:.1f} min "
                                       f"CPU" for name, t in timing.items()) + f" ({workers} worker{'s' * (workers != 1)}, "
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
