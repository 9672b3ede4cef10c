"""Difficulty-aware judging (issue 36 §1): does telling the judge why a query is hard to judge bring its labels
closer to NIST's on the hard-to-judge (H2J) queries, and is it the sentence's content or any extra sentence?

Design, in the order :func:`run_aware_judge` runs it:

1. **Universe.** The dataset's judged queries that have a judged pair with passage text (the first
   ``max_queries`` of them in topic order when capped, recorded). At most ``cap`` pairs per query are
   judged (:func:`pipeline.judging.judgments.sample_pairs`, the study judge's sample).
2. **Baseline.** The judge with UMBRELA's prompt and decoding options
   (:func:`~pipeline.judging.judgments.umbrela_messages`, :func:`~pipeline.judging.judgments.umbrela_options`),
   exactly the ``h2j`` step's requests, so the study's cached replies are hits. One graded reply gives both
   setups (binary = the grade cut at 2, as the study did). Per setup: each query's disagreement with NIST
   (:func:`pipeline.judging.h2j.disagreement`) and the H2J set by the one hard-set rule
   (:func:`pipeline.sets.rule.hard_set`, the top ``quantile``).
3. **Reasons.** The H2J queries (union over setups) get their failure reasons: from the typology store
   (task h2j), from a file, or assigned here by an LLM (:func:`pipeline.typology.assignment.assign_reasons`
   with the typology's H2J categories). A hard query without an assigned reason is excluded, and counted.
   Its *difficulty sentence* comes from the sentence templates of difficulty-aware generation (first reason).
4. **Controls.** Per setup, as many queries as that setup's hard set, drawn with a seeded RNG (seed
   recorded) from the universe's queries that are hard in neither setup (so a query has one sentence). Each
   borrows a hard query's sentence (round-robin in topic order, recorded per query): the same sentences on
   queries that are not hard separate "the sentence helps hard queries" from "the sentence moves any query".
5. **Control sentence.** A grammatical, neutral statement with the same number of words as the query's
   difficulty sentence, naming no difficulty (:class:`pipeline.prompting.difficulty.NeutralStatements`, the
   statements stored with the result). It separates "this sentence helps" from "any extra sentence changes
   the judge".
6. **Arms.** ``aware`` (UMBRELA's prompt with the difficulty sentence on its own line after the query line,
   :func:`pipeline.prompting.difficulty.with_difficulty`) and ``control_sentence`` (the control sentence in
   the same place) re-judge every sampled pair of the hard and control queries, with the same options.
7. **Comparisons.** Per setup, on per-query disagreement as exact fractions (disagreeing pairs out of labelled
   pairs; lower is better, :func:`pipeline.aware.paired.paired_comparison`). The PRIMARY comparison, declared
   and shown first: hard queries aware vs control sentence (:data:`PRIMARY`). The reason (:data:`SELECTION_NOTE`):
   H2J queries are chosen for extreme baseline disagreement and the baseline arm reuses the very replies that
   chose them, so any re-prompt moves them toward the mean; aware vs baseline on hard queries is biased toward
   an improvement. Then hard aware vs baseline, hard control sentence vs baseline, control queries aware vs
   baseline and control sentence vs baseline. Holm across the five, a family declared in advance
   (:data:`FAMILY`: a comparison without a p-value still counts). Beside them the hard x arm interaction
   (:data:`INTERACTION`): is aware minus control sentence lower on hard queries than on control queries? An
   exact permutation test on the per-query differences of the two groups
   (:func:`core.inference.paired.two_groups`), outside the Holm family. Beside each, the change in Cohen's κ against NIST over the pairs both
   arms labelled, pooled over the group's queries (:data:`KAPPA_SCALES`), with a seeded bootstrap
   percentile interval over queries (queries resampled, both κ recomputed). Verdicts are
   :func:`pipeline.aware.paired.comparison_verdict` under :data:`pipeline.aware.paired.RULE`, gated by the
   models (:func:`~pipeline.aware.paired.model_gates`): a model under the rule's size is not a finding. The
   models are the judge and the reasons' maker (the assigner, or the typology store runs' model:
   :func:`pipeline.prompting.difficulty.reasons_made_by`; a reasons FILE names none).

Every call goes through the caller's :class:`~pipeline.llm.base.ChatClient` (the response cache), so a rerun
makes no call. The result (:func:`run_aware_judge`) is stored with :mod:`pipeline.aware.store`.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from core.digest import content_digest
from core.jobs.progress import ProgressWriter
from pipeline.aware import paired
from pipeline.data.datasets import RELEVANT_GRADE
from pipeline.judging.h2j import disagreement
from pipeline.judging.judgments import (DEFAULT_CAP, SETUPS, Judgments, PairReply, read_replies, sample_pairs,
                                        sort_replies, umbrela_messages, umbrela_options)
from pipeline.llm.base import ChatClient, Message
from pipeline.prompting.difficulty import (REASON_MODES, NeutralStatements, SentenceTemplates, load_statements,
                                          prompt_diff, reasons_made_by, with_difficulty)
from pipeline.sets.rule import DEFAULT_QUANTILE, RULE as SET_RULE, SetSummary, hard_set
from pipeline.stats.agreement import cohen_kappa, cohen_kappa_counts
from pipeline.typology.categories import Assignment, Typology

KIND = "aware-judge"
RESULT_VERSION = 2  # 2: the primary comparison, its declared family, the interaction, neutral statements
TASK = "h2j"
ARMS = ("baseline", "aware", "control_sentence")
ARM_TITLES = {"baseline": "baseline (UMBRELA's prompt)", "aware": "difficulty-aware (+ difficulty sentence)",
              "control_sentence": "control sentence (+ a neutral sentence of the same length)"}
GROUPS = ("hard", "control")
# (group, before, after): "after improves on before" is what each verdict grades
# (group, before, after): "after improves on before" is what each verdict grades; the primary one first
COMPARISONS = (("hard", "control_sentence", "aware"), ("hard", "baseline", "aware"),
               ("hard", "baseline", "control_sentence"), ("control", "baseline", "aware"),
               ("control", "baseline", "control_sentence"))
SELECTION_NOTE = ("H2J queries are chosen for their extreme baseline disagreement, and the baseline arm reuses the "
                  "very replies that chose them: selection on extreme baseline values regresses toward the mean, so "
                  "any re-prompt moves them toward it and aware vs baseline is biased toward an improvement. The "
                  "primary comparison is aware vs the control sentence on the same hard queries; the hard x arm "
                  "interaction asks whether the sentence helps hard queries more than control queries.")
def comparison_name(group: str, before: str, after: str) -> str:
    """``hard: aware vs baseline``: the comparison's name in a result (``after`` graded against ``before``)."""
    return f"{group}: {after} vs {before}"


# the Holm family, declared in advance (every comparison counts, with a p or without); the primary one first
FAMILY = tuple(comparison_name(*c) for c in COMPARISONS)
PRIMARY = FAMILY[0]
INTERACTION = "hard x arm interaction: aware vs control_sentence, hard vs control queries"
KAPPA_SCALES = {"binary": "Cohen's κ on the relevant (grade >= 2) / not relevant cut",
                "graded": "Cohen's κ on the grades 0-3, unweighted"}
PLACEMENT = "UMBRELA's prompt with the sentence on its own line right after its 'Query:' line"
STAGES = 3  # baseline judging, aware arm, control-sentence arm (+1 when reasons are assigned here)


class AwareJudgeError(ValueError):
    """The study cannot run on these inputs (no query, no hard query with a reason); names what is missing."""


class AwareJudgeFailure(RuntimeError):
    """The judge labelled no pair of the baseline (every call failed or was unparseable): nothing is stored."""


@dataclass(frozen=True)
class AwareJudgeConfig:
    """What defines an aware-judge result besides its inputs (recorded with it)."""
    cap: int | None = DEFAULT_CAP  # judged pairs per query at most (sample_pairs; None: every pair)
    quantile: float = DEFAULT_QUANTILE  # H2J: the top q of the queries by disagreement
    max_queries: int | None = None  # the first N universe queries in topic order; None: all
    control_seed: int = 0  # the control queries' draw
    reason_mode: str = "first"  # the difficulty sentence from the first reason, or one per reason
    sample_seed: int = 0  # sample_pairs' seed: the study judge's (0), so its cached replies are hits

    def __post_init__(self):
        if self.cap is not None and self.cap < 1:
            raise ValueError("cap must be at least 1 (or None: every pair)")
        if not 0.0 < self.quantile <= 1.0:
            raise ValueError(f"quantile must be in (0, 1], got {self.quantile}")
        if self.max_queries is not None and self.max_queries < 1:
            raise ValueError("max_queries must be at least 1")
        if self.reason_mode not in REASON_MODES:
            raise ValueError(f"reason mode must be one of {REASON_MODES}, got {self.reason_mode!r}")

    def as_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------- sentences and prompts
def arm_messages(query: str, passage: str, sentence: str | None = None) -> list[Message]:
    """UMBRELA's prompt for one pair, with ``sentence`` on its own line after the ``Query:`` line."""
    base = umbrela_messages(query, passage)
    return base if sentence is None else with_difficulty(base, sentence, f"Query: {query.strip()}")


def _judge(client: ChatClient, data, pairs: Sequence[tuple[str, str]], sentence_of: Mapping[str, str] | None,
           label: str, on_progress: Callable[[int], None]) -> dict[tuple[str, str], PairReply]:
    """Each pair judged with UMBRELA's prompt (plus the query's sentence in ``sentence_of``), its graded
    reply read as ``h2j``'s judgments read it (:func:`pipeline.judging.judgments.read_replies`)."""
    queries = data.queries()
    requests = [arm_messages(queries[q], data.passages[p], sentence_of[q] if sentence_of is not None else None)
                for q, p in pairs]
    replies = client.chat_many(requests, umbrela_options(client), progress=label,
                               on_progress=on_progress) if requests else []
    return read_replies(pairs, replies, "graded", "umbrela")


def _as_judgments(judged: Mapping[tuple[str, str], PairReply], setup: str, client: ChatClient, cap) -> Judgments:
    labels, expected, unparseable, failed = sort_replies(judged)
    return Judgments(judge=client.provenance.label, setup=setup, provenance=client.provenance.as_dict(),
                     labels=labels, labels_binary=False, cap=cap, unparseable=unparseable, failed=failed,
                     prompt="umbrela", expected=expected)


def _counts(judged: Mapping[tuple[str, str], PairReply]) -> dict:
    return {"pairs": len(judged),
            "unparseable": sum(r.label is None and r.error is None for r in judged.values()),
            "failed": sum(r.error is not None for r in judged.values())}


# ---------------------------------------------------------------------------- kappa
def scale(grade: int, setup: str) -> int:
    """A grade on the setup's κ scale (:data:`KAPPA_SCALES`)."""
    return int(grade >= RELEVANT_GRADE) if setup == "binary" else int(grade)


def kappa_change(items: Mapping[str, Sequence[tuple[int, int, int]]], setup: str,
                 rule: Mapping = paired.RULE) -> dict:
    """The change in κ against NIST from ``before`` to ``after``: ``items[qid]`` holds ``(nist, before,
    after)`` grades of the pairs both arms labelled. κ pooled over the queries' pairs (the project's one κ,
    :func:`pipeline.stats.agreement.cohen_kappa`), with a bootstrap percentile interval over queries (rule's
    resamples, seed and level; a resample where either κ is undefined is left out and counted)."""
    qids = [q for q, rows in items.items() if rows]
    labels = (0, 1) if setup == "binary" else (0, 1, 2, 3)
    scaled = {q: [tuple(scale(g, setup) for g in row) for row in items[q]] for q in qids}
    rows = [row for q in qids for row in scaled[q]]
    before = cohen_kappa([r[0] for r in rows], [r[1] for r in rows])
    after = cohen_kappa([r[0] for r in rows], [r[2] for r in rows])
    out = {"scale": KAPPA_SCALES[setup], "n_queries": len(qids), "n_pairs": len(rows), "kappa_before": before,
           "kappa_after": after, "change": None if before is None or after is None else after - before,
           "interval": None, "level": rule["level"], "resamples": rule["resamples"], "seed": rule["seed"],
           "undefined_resamples": None}
    if out["change"] is None:
        return out
    # per query confusion counts (NIST x arm), so a resample's κ is a sum of its queries' counts
    k = len(labels)
    confusion = np.zeros((2, len(qids), k, k))
    for i, q in enumerate(qids):
        for nist, b, a in scaled[q]:
            confusion[0, i, nist, b] += 1
            confusion[1, i, nist, a] += 1
    rng = np.random.default_rng(rule["seed"])
    draws = rng.integers(0, len(qids), size=(rule["resamples"], len(qids)))
    weights = np.stack([np.bincount(row, minlength=len(qids)) for row in draws])  # resample x query multiplicity
    summed = np.einsum("rq,aqij->arij", weights, confusion)
    kb, ka = cohen_kappa_counts(summed[0]), cohen_kappa_counts(summed[1])
    change = (ka - kb)[~(np.isnan(ka) | np.isnan(kb))]
    out["undefined_resamples"] = int(rule["resamples"] - change.size)
    if change.size:
        tail = (1.0 - rule["level"]) / 2 * 100
        out["interval"] = [float(np.percentile(change, tail)), float(np.percentile(change, 100 - tail))]
    return out


# ---------------------------------------------------------------------------- the interaction
def interaction(values: Mapping[str, Mapping[str, object]], groups: Mapping[str, Sequence[str]],
                rule: Mapping = paired.RULE) -> dict:
    """The hard x arm interaction of one setup: each query's exact change aware - control sentence, hard
    queries against control queries (:func:`pipeline.aware.paired.group_difference`: lower is better, so a
    negative difference is a larger improvement on hard queries)."""
    change = {g: [values["aware"][q] - values["control_sentence"][q] for q in groups[g]
                  if q in values["aware"] and q in values["control_sentence"]] for g in GROUPS}
    return paired.group_difference(change["hard"], change["control"], better="lower", rule=rule) | {
        "of": "per-query disagreement, aware minus control_sentence", "first": "hard", "second": "control"}


# ---------------------------------------------------------------------------- the study
def universe(data, config: AwareJudgeConfig) -> tuple[list[str], dict[str, list[str]], dict[str, list[str]]]:
    """``(qids in topic order, {qid: sampled pids}, excluded {why: qids})``: the judged queries with a
    judged pair that has passage text, at most ``cap`` pairs each, the first ``max_queries``."""
    qrels = data.require_qrels()
    queries = data.queries()
    sample = sample_pairs({q: qrels[q] for q in queries}, config.cap, seed=config.sample_seed,
                          eligible=data.passages.__contains__)
    qids = [q for q in queries if sample.get(q)]
    excluded = {"no judged pair with passage text": [q for q in queries if not sample.get(q)], "over max_queries": []}
    if config.max_queries is not None:
        excluded["over max_queries"] = qids[config.max_queries:]
        qids = qids[:config.max_queries]
    return qids, {q: sample[q] for q in qids}, excluded


def draw_controls(candidates: Sequence[str], sizes: Mapping[str, int], seed: int) -> dict[str, list[str]]:
    """Per setup, ``sizes[setup]`` of ``candidates`` (all when fewer), drawn in setup order from one RNG
    seeded with ``seed``; each set in the candidates' order."""
    rng = np.random.default_rng(seed)
    out = {}
    for setup in SETUPS:
        k = min(int(sizes.get(setup, 0)), len(candidates))
        chosen = set(rng.choice(len(candidates), size=k, replace=False).tolist()) if k else set()
        out[setup] = [q for i, q in enumerate(candidates) if i in chosen]
    return out


def reasons_by_query(assignments: Sequence[Assignment]) -> dict[str, Assignment]:
    """The H2J assignments that name a reason, by qid (the first one of a qid)."""
    out: dict[str, Assignment] = {}
    for a in assignments:
        if a.task == TASK and a.reasons:
            out.setdefault(a.qid, a)
    return out


def run_aware_judge(data, judge: ChatClient, typology: Typology, templates: SentenceTemplates,
                    config: AwareJudgeConfig = AwareJudgeConfig(), *, assignments: Sequence[Assignment] | None = None,
                    reasons_report: Mapping | None = None, assigner: ChatClient | None = None,
                    statements: NeutralStatements | None = None, progress: ProgressWriter | None = None) -> dict:
    """The study (module docstring). ``assignments``: reasons made elsewhere (store, file), with
    ``reasons_report`` saying how; None: ``assigner`` assigns the typology's H2J categories here.
    ``statements``: the control statements (default: the shipped ones)."""
    statements = statements or load_statements()
    if assignments is None and assigner is None:
        raise ValueError("run_aware_judge needs assignments or an assigner")
    tracker = progress or ProgressWriter(None)
    started = time.time()
    qrels = data.require_qrels()
    queries = data.queries()
    order = {q: i for i, q in enumerate(queries)}
    qids, sample, excluded = universe(data, config)
    if not qids:
        raise AwareJudgeError(f"{data.name}: no judged query has a judged pair with passage text")

    # 1. baseline: the study judge's requests over the universe
    pairs = [(q, p) for q in qids for p in sample[q]]
    tracker.stage("baseline judgments (UMBRELA's prompt)", len(pairs), "pair")
    judged = {"baseline": _judge(judge, data, pairs, None, f"{data.name} aware-judge baseline", tracker.advance)}
    if not any(r.label is not None for r in judged["baseline"].values()):
        last = next((r.error or r.text for r in reversed(judged["baseline"].values())), "")
        raise AwareJudgeFailure(f"{data.name}: judge {judge.provenance.label} labelled none of {len(pairs)} baseline "
                                f"pairs; last reply or error: {' '.join(str(last).split())[:200]}")
    baseline = {s: disagreement(_as_judgments(judged["baseline"], s, judge, config.cap), qrels, qids)[0]
                for s in SETUPS}
    hard = {s: hard_set(baseline[s], config.quantile, f"H2J {s}", top=True) for s in SETUPS}
    all_hard = sorted({q for s in SETUPS for q in hard[s].qids}, key=order.get)

    # 2. reasons for the hard queries
    how = dict(reasons_report or {})
    assigned_here = assignments is None
    if assigned_here:
        from pipeline.typology.assignment import assign_reasons

        tracker.stage("assigning reasons to the H2J queries", len(all_hard), "query")
        assignments, report = assign_reasons(assigner, typology, data.topics, {TASK: all_hard},
                                             on_progress=tracker.advance)
        how = {"assigned_by": assigner.provenance.as_dict(), "asked": all_hard, "report": report}
    by_qid = reasons_by_query(assignments)
    sentence = {q: templates.difficulty_text([c for c, _ in by_qid[q].reasons], config.reason_mode)
                for q in all_hard if q in by_qid}
    excluded["hard, no assigned reason"] = [q for q in all_hard if q not in sentence]
    hard_used = {s: sorted((q for q in hard[s].qids if q in sentence), key=order.get) for s in SETUPS}
    if not all_hard:
        raise AwareJudgeFailure(f"{data.name}: both H2J sets are empty, nothing to compare: "
                                + "; ".join(hard[s].warning() or f"{s}: no query" for s in SETUPS))
    if not any(hard_used.values()):
        # reasons given (a file, the store) that name none of these queries are bad input; a model that
        # assigned none here is a failure of the run
        error = AwareJudgeFailure if assigned_here else AwareJudgeError
        source = (f"assigned by {assigner.provenance.label}" if assigned_here
                  else how.get("imported", "reasons as given"))
        raise error(f"{data.name}: none of the {len(all_hard)} H2J queries ({' '.join(all_hard)}) has an assigned "
                    f"H2J reason ({source}); nothing to compare")

    # 3. controls: not hard in either setup, borrowing the hard queries' sentences round-robin
    candidates = [q for q in qids if q not in set(all_hard) and all(q in baseline[s] for s in SETUPS)]
    controls = draw_controls(candidates, {s: len(hard_used[s]) for s in SETUPS}, config.control_seed)
    donors = sorted({q for s in SETUPS for q in hard_used[s]}, key=order.get)
    borrowed = {q: donors[i % len(donors)] for i, q in enumerate(sorted({q for s in SETUPS for q in controls[s]},
                                                                       key=order.get))}
    rejudged = sorted(set(donors) | set(borrowed), key=order.get)
    sentence_of = {q: sentence[borrowed.get(q, q)] for q in rejudged}
    control_of = {q: statements.matching(sentence_of[q]) for q in rejudged}

    # 4. the two arms over every sampled pair of the re-judged queries
    arm_pairs = [(q, p) for q in rejudged for p in sample[q]]
    for arm, texts in (("aware", sentence_of), ("control_sentence", control_of)):
        tracker.stage(f"{ARM_TITLES[arm]} judgments", len(arm_pairs), "pair")
        judged[arm] = _judge(judge, data, arm_pairs, texts, f"{data.name} aware-judge {arm}", tracker.advance)
    # exact fractions (disagreeing pairs out of labelled ones): equal changes tie exactly in the tests
    exact = {s: {arm: disagreement(_as_judgments({k: v for k, v in judged[arm].items() if k[0] in rejudged},
                                                 s, judge, config.cap), qrels, rejudged, exact=True)[0]
                 for arm in ARMS} for s in SETUPS}
    values = {s: {arm: {q: float(v) for q, v in exact[s][arm].items()} for arm in ARMS} for s in SETUPS}

    # 5. comparisons, Holm per setup, κ changes, verdicts
    # the reasons' model gates too: assigned here, or read from the typology store (a FILE names none)
    made_by = reasons_made_by(how)
    models = {"judge": judge.provenance} | (dict([made_by]) if made_by else {})
    gates = paired.model_gates(models)
    labels = [f"{role}: {p.label} ({p.size_text})" for role, p in models.items()]
    groups = {s: {"hard": hard_used[s], "control": controls[s]} for s in SETUPS}
    comparisons, interactions, verdicts = {}, {}, []
    for s in SETUPS:
        family = {}
        for group, before, after in COMPARISONS:
            name = comparison_name(group, before, after)
            members = groups[s][group]
            family[name] = paired.paired_comparison(
                {q: exact[s][before][q] for q in members if q in exact[s][before]},
                {q: exact[s][after][q] for q in members if q in exact[s][after]}, better="lower")
            items = {q: [(qrels[q][p], judged[before][(q, p)].label, judged[after][(q, p)].label)
                         for p in sample[q] if judged[before][(q, p)].label is not None
                         and judged[after][(q, p)].label is not None] for q in members}
            family[name]["kappa"] = kappa_change(items, s)
            family[name].update(group=group, before=before, after=after, setup=s)
        adjusted = paired.holm(FAMILY, family)
        for name, comparison in family.items():
            comparison["p_holm"] = adjusted[name]
            verdicts.append(paired.comparison_verdict(
                f"{s} · {name}", comparison, adjusted[name], gates, models=labels,
                beyond="the control sentence" if name == PRIMARY else None).to_dict())
            if name == PRIMARY:  # the interaction right after the primary comparison
                interactions[s] = interaction(exact[s], groups[s])
                verdicts.append(paired.interaction_verdict(f"{s} · {INTERACTION}", interactions[s], gates,
                                                           models=labels).to_dict())
        comparisons[s] = family

    per_query = []
    for q in rejudged:
        per_query.append({
            "qid": q, "query": queries[q],
            "group": {s: next((g for g in GROUPS if q in groups[s][g]), None) for s in SETUPS},
            "reasons": list(by_qid[q].categories) if q in by_qid and q in sentence else [],
            "sentence": sentence_of[q], "sentence_from": borrowed.get(q, q), "control_sentence": control_of[q],
            "pairs": [{"pid": p, "nist": qrels[q][p], "labels": {a: judged[a][(q, p)].label for a in ARMS},
                       "raw": {a: judged[a][(q, p)].text for a in ARMS},
                       "errors": {a: judged[a][(q, p)].error for a in ARMS if judged[a][(q, p)].error}}
                      for p in sample[q]],
            "disagreement": {s: {a: values[s][a].get(q) for a in ARMS} for s in SETUPS}})

    example = per_query[0]
    ex_passage = data.passages[example["pairs"][0]["pid"]]
    prompts = {"baseline": arm_messages(example["query"], ex_passage),
               "aware": arm_messages(example["query"], ex_passage, example["sentence"]),
               "control_sentence": arm_messages(example["query"], ex_passage, example["control_sentence"])}
    result = {
        "kind": KIND, "version": RESULT_VERSION, "dataset": data.name, "data_source": data.source,
        "coverage": data.coverage.summary(), "judge": judge.provenance.as_dict(),
        "assigner": assigner.provenance.as_dict() if assigner is not None else None,
        "config": config.as_dict(), "templates": templates.as_dict(), "typology": typology.as_dict(),
        "neutral_statements": statements.as_dict(), "placement": PLACEMENT, "kappa_scales": KAPPA_SCALES,
        "primary": PRIMARY, "family": list(FAMILY), "selection_note": SELECTION_NOTE,
        "rule": paired.RULE, "set_rule": SET_RULE.format(measure="disagreement with NIST"),
        "reasons": {"how": how,
                    "digest": content_digest(sorted((q, list(a.categories)) for q, a in by_qid.items()), 12)},
        "universe": qids, "excluded": excluded,
        "sets": {s: {"hard": list(hard[s].qids), "summary": SetSummary.of(hard[s]).to_dict(),
                     "hard_used": hard_used[s], "control": controls[s], "baseline_disagreement": baseline[s]}
                 for s in SETUPS},
        "controls": {"seed": config.control_seed, "candidates": candidates, "borrowed": borrowed,
                     "short": {s: len(hard_used[s]) - len(controls[s]) for s in SETUPS}},  # too few candidates
        "queries": per_query,
        "example": {"qid": example["qid"], "pid": example["pairs"][0]["pid"], "prompts": prompts},
        "comparisons": comparisons, "interaction": interactions, "verdicts": verdicts, "gates": gates,
        "counts": {arm: _counts(judged[arm]) for arm in ARMS},
        "seconds": round(time.time() - started, 3),
    }
    result["id"] = result_id(result)
    return result


def example_diff(result: Mapping, arm: str = "aware") -> str:
    """The stored example's prompt change from the baseline to ``arm`` (:func:`prompt_diff`, plain text)."""
    prompts = result["example"]["prompts"]
    return prompt_diff(prompts["baseline"], prompts[arm])


def result_id(result: Mapping) -> str:
    """``<dataset>-<sha256[:12]>`` over what defines the result (models, configuration, inputs; never timings)."""
    key = {k: result[k] for k in ("dataset", "config", "placement", "universe")}
    key["neutral_statements"] = result["neutral_statements"]["series"]
    key["judge"] = {k: result["judge"].get(k) for k in ("backend", "model", "endpoint", "digest")}
    key["assigner"] = None if result["assigner"] is None else {
        k: result["assigner"].get(k) for k in ("backend", "model", "endpoint", "digest")}
    key["templates"] = {k: v for k, v in result["templates"].items() if k != "source"}
    key["typology"] = result["typology"]
    key["reasons"] = result["reasons"]["digest"]
    return f"{result['dataset']}-{content_digest(key, 12)}"
