"""Difficulty-aware generation judged pairwise against the baseline: the experiment and its stored results.

For one TREC DL year and a set of (query, task) reason assignments
(:class:`pipeline.typology.categories.Assignment`, read by :mod:`pipeline.prompting.difficulty`):

1. **Units.** One pair per assignment: the query, its task, its categories and the difficulty
   sentence written from them (the first reason by default, one sentence per reason with
   ``reason_mode="all"``). Queries without a highly relevant passage that has text cannot be judged
   and are excluded and counted; ``max_queries`` keeps the first N remaining queries in topic order.
2. **Generations.** The baseline is the zero-shot prompt of :mod:`pipeline.generation.answers` on the raw
   query; the difficulty-aware prompt is the same with the sentence appended. Each side comes from
   a generator model (a :class:`~pipeline.llm.base.ChatClient`) or from an imported JSONL file of
   ``{"qid", "text"}``; the baseline is generated once per query.
3. **Judging.** :mod:`pipeline.prompting.pairwise`: both orders, raw replies stored, outcome per pair.
4. **Summary.** Per dataset, per task and per category: counts, preference rate, Wilson 95% interval,
   sign-test p, inconsistent share, each labelled with the judge that produced it. The unit is a
   query (a query hard in two tasks is one unit, :func:`pipeline.prompting.pairwise.query_outcome`); the pair
   counts and the verdict rule's rate are reported beside (``pipeline.prompting.pairwise`` docstring).

Every LLM call goes through the caller's ChatClient, i.e. the response cache: a rerun of the same
configuration makes no call, and a killed run resumes where it stopped (the calls it had finished are
cache hits). The result is one JSON file under ``cache/preference/<dataset>/<result id>.json``,
written atomically, holding the configuration (templates, typology, caps, options, provenance) next
to every pair, so the page and any later reader see exactly what produced a number.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from core import result_files
from core.digest import content_digest
from core.jobs.progress import ProgressWriter
from pipeline.prompting import pairwise
from pipeline.data.datasets import RELEVANT_GRADE, TrecDlData
from pipeline.prompting.difficulty import REASON_MODES, SentenceTemplates, assignments_digest, with_difficulty
from pipeline.generation.answers import GENERATION_OPTIONS, prompt_description, zero_shot_messages
from pipeline.llm.base import LENGTH_FINISH, ChatClient, GenerationOptions, LLMError, Provenance
from pipeline.typology.categories import TASKS, Assignment, Typology

KIND = "preference"  # its folder under the cache (core.result_files)
RESULT_VERSION = 1
DIFFICULTY_PLACEMENT = "the baseline prompt with the difficulty text on its own line after the question line"
# The study's preference rates for the difficulty-aware answer are data in the failure paper's claims file
# (pipeline/findings/paper_claims.json; pipeline.findings.preference.paper_rates), their one source.
STAGES = 3  # run_preference's stages in a job's progress record: baseline answers, aware answers, judging


@dataclass(frozen=True)
class PreferenceConfig:
    """What defines a preference result besides its inputs (all recorded with it)."""
    reason_mode: str = "first"  # "first" reason's sentence, or "all" reasons one sentence each
    max_queries: int | None = None  # first N judgeable queries in topic order; None = all
    max_passages: int = 3  # highly relevant passages shown to the judge, highest grade first
    passage_chars: int = 600  # each passage truncated to this many characters (at a word boundary)
    generation: GenerationOptions = GENERATION_OPTIONS  # the zero-shot generation step's, so answers are shared
    # a letter, or a short sentence naming one (exactly "A" or "B" where the backend obeys the schema)
    judge: GenerationOptions = GenerationOptions(max_tokens=24, json_schema=pairwise.VERDICT_SCHEMA)

    def __post_init__(self):
        if self.reason_mode not in REASON_MODES:
            raise ValueError(f"reason mode must be one of {REASON_MODES}, got {self.reason_mode!r}")
        if self.max_queries is not None and self.max_queries < 1:
            raise ValueError("max_queries must be at least 1")
        if self.max_passages < 1 or self.passage_chars < 50:
            raise ValueError("max_passages must be >= 1 and passage_chars >= 50")

    def as_dict(self) -> dict:
        return {**asdict(self), "generation": self.generation.as_dict(), "judge": self.judge.as_dict()}


@dataclass(frozen=True)
class AnswerSide:
    """Where one side's answers come from: a generator model, or answers imported from a file."""
    client: ChatClient | None = None
    imported: Mapping[str, str] | None = None  # qid -> text
    imported_from: str = ""  # file name, recorded with the result
    # {model: billions} the user stated (--model-size): imported answers report no size, so it is
    # unknown unless stated under their file name (pipeline.llm.sizes)
    stated_sizes: Mapping[str, float] | None = None

    def __post_init__(self):
        if (self.client is None) == (self.imported is None):
            raise ValueError("an answer side is either a generator client or imported answers")

    @property
    def provenance(self) -> dict:
        if self.client is not None:
            return self.client.provenance.as_dict()
        digest = content_digest(sorted(self.imported.items()), 12)
        from pipeline.llm.sizes import stated_record

        record = Provenance("imported", self.imported_from or "answers").as_dict() | {"digest": digest}
        return stated_record(record, self.stated_sizes)


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with an ellipsis when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    cut = cut[:cut.rfind(" ")] if " " in cut[limit // 2:] else cut
    return cut.rstrip() + "…"


def judge_passages(data: TrecDlData, qid: str, config: PreferenceConfig) -> list[dict]:
    """The passages the judge sees: grade >= 2 with text, highest grade first (then pid), capped, truncated."""
    judged = data.require_qrels().get(qid, {})
    ranked = sorted(((grade, pid) for pid, grade in judged.items()
                     if grade >= RELEVANT_GRADE and pid in data.passages), key=lambda gp: (-gp[0], gp[1]))
    return [{"pid": pid, "grade": grade, "text": truncate(data.passages[pid], config.passage_chars)}
            for grade, pid in ranked[:config.max_passages]]


def build_units(data: TrecDlData, assignments: Sequence[Assignment], typology: Typology,
                templates: SentenceTemplates, config: PreferenceConfig) -> tuple[list[dict], dict]:
    """The pairs to judge, in topic order (then task order), and what was excluded and why."""
    queries = data.queries()
    order = {qid: i for i, qid in enumerate(queries)}
    excluded = {"not a judged query": [], "no highly relevant passage with text": [], "over max_queries": []}
    usable = []
    for a in sorted(assignments, key=lambda a: (order.get(a.qid, len(order)), a.qid, TASKS.index(a.task))):
        if a.qid not in queries:
            excluded["not a judged query"].append(a.qid)
            continue
        passages = judge_passages(data, a.qid, config)
        if not passages:
            excluded["no highly relevant passage with text"].append(a.qid)
            continue
        usable.append((a, passages))
    kept_qids = list(dict.fromkeys(a.qid for a, _ in usable))
    if config.max_queries is not None:
        excluded["over max_queries"] = kept_qids[config.max_queries:]
        kept_qids = kept_qids[:config.max_queries]
    keep = set(kept_qids)
    units = []
    for a, passages in usable:
        if a.qid not in keep:
            continue
        categories = [typology.find(name, a.task) for name in a.categories]
        if None in categories:
            raise ValueError(f"qid {a.qid}: a category of {a.categories} is not in typology {typology.name!r}")
        used = categories[:1] if config.reason_mode == "first" else categories
        units.append({"qid": a.qid, "query": queries[a.qid], "task": a.task, "categories": list(a.categories),
                      "categories_used": [c.name for c in used], "assignment_source": a.source,
                      "difficulty": templates.difficulty_text(categories, config.reason_mode),
                      "passages": passages})
    return units, {why: sorted(set(q), key=lambda q: order.get(q, 0)) for why, q in excluded.items()}


def _answers(side: AnswerSide, keys: list, prompts: list, options: GenerationOptions, label: str,
             on_progress: Callable[[int], None]) -> list[tuple[str | None, str | None, int | None]]:
    """``(text, error, cut_at)`` per prompt; ``cut_at``: the token limit when the answer was cut at it
    (finish reason ``length``), else None. Imported answers are looked up by qid (``keys``)."""
    if side.imported is not None:
        on_progress(len(keys))
        return [(side.imported[qid], None, None) if qid in side.imported
                else (None, f"no imported answer for qid {qid} in {side.imported_from}", None) for qid in keys]
    replies = side.client.chat_many(prompts, options, progress=label, on_progress=on_progress)
    limit = side.client.effective_options(options).max_tokens
    return [(None, str(r) or type(r).__name__, None) if isinstance(r, LLMError)
            else (r.text, None, limit if r.finish_reason == LENGTH_FINISH else None) for r in replies]


def is_self_judging(judge: ChatClient, generator: ChatClient | None) -> bool:
    """Whether the pairwise judge is the model that writes the answers (the same resolved model): it
    would judge its own answers. Imported answers on both sides (no generator) never are."""
    return generator is not None and generator.provenance.identity() == judge.provenance.identity()


def run_preference(data: TrecDlData, assignments: Sequence[Assignment], typology: Typology,
                   templates: SentenceTemplates, judge: ChatClient, baseline: AnswerSide, aware: AnswerSide,
                   config: PreferenceConfig = PreferenceConfig(), assignment_report: Mapping | None = None,
                   progress: ProgressWriter | None = None) -> dict:
    """Generate (or look up) both answers per pair, judge them in both orders, summarise (module docstring).

    ``assignment_report`` (how the assignments were made, e.g. an LLM's raw replies) is stored as is.
    ``progress``: the job's progress record (:mod:`core.jobs.progress`); this adds its :data:`STAGES`
    stages (baseline answers, difficulty-aware answers, judging calls); the caller ends the record.
    """
    tracker = progress or ProgressWriter(None)
    started = time.time()
    data.require_qrels()
    units, excluded = build_units(data, assignments, typology, templates, config)

    # 1. generations: the baseline once per query, the difficulty-aware answer once per pair
    qids = list(dict.fromkeys(u["qid"] for u in units))
    base_prompts = {qid: zero_shot_messages(data.topics[qid]) for qid in qids}
    tracker.stage("baseline answers (one per query)", len(qids), "answer")
    base = dict(zip(qids, _answers(baseline, qids, [base_prompts[q] for q in qids], config.generation,
                                   f"{data.name} baseline answers", tracker.advance)))
    aware_prompts = [with_difficulty(base_prompts[u["qid"]], u["difficulty"], data.topics[u["qid"]].strip())
                     for u in units]
    tracker.stage("difficulty-aware answers (one per pair)", len(units), "answer")
    aware_answers = _answers(aware, [u["qid"] for u in units], aware_prompts, config.generation,
                             f"{data.name} difficulty-aware answers", tracker.advance)
    for unit, prompt, (text, error, cut_at) in zip(units, aware_prompts, aware_answers):
        unit["prompts"] = {"baseline": base_prompts[unit["qid"]], "aware": prompt}
        unit["answers"] = {"baseline": base[unit["qid"]][0], "aware": text}
        unit["generation_errors"] = {k: e for k, e in (("baseline", base[unit["qid"]][1]), ("aware", error)) if e}
        # answers cut at the token limit: side -> the limit (the page marks them "cut at N tokens")
        unit["cut_at"] = {k: n for k, n in (("baseline", base[unit["qid"]][2]), ("aware", cut_at)) if n}

    # 2. judging, both orders
    judged = [u for u in units if not u["generation_errors"]]
    requests = []
    for u in judged:
        passages = [p["text"] for p in u["passages"]]
        b, a = u["answers"]["baseline"], u["answers"]["aware"]
        requests += [pairwise.judge_messages(u["query"], passages, b, a),  # ab: baseline is A
                     pairwise.judge_messages(u["query"], passages, a, b)]  # ba: aware is A
    tracker.stage("pairwise judging, both orders", len(requests), "call")
    replies = judge.chat_many(requests, config.judge, progress=f"{data.name} pairwise judge",
                              on_progress=tracker.advance) if requests else []
    for i, u in enumerate(judged):
        verdicts, failed = {}, False
        for order, reply in zip(pairwise.ORDERS, replies[2 * i:2 * i + 2]):
            if isinstance(reply, LLMError):
                failed = True
                verdicts[order] = {"raw": None, "error": str(reply) or type(reply).__name__, "verdict": None,
                                   "winner": None}
            else:
                verdict = pairwise.parse_verdict(reply.text)
                verdicts[order] = {"raw": reply.text, "verdict": verdict,
                                   "winner": pairwise.winner(verdict, order)}
        outcome = pairwise.pair_outcome({o: v["verdict"] for o, v in verdicts.items()}, failed=failed)
        u.update(verdicts=verdicts, outcome=outcome.outcome, inconsistent=outcome.inconsistent)
    for u in units:
        if u["generation_errors"]:
            u.update(verdicts={}, outcome="failed", inconsistent=False)

    judge_provenance = judge.provenance.as_dict()
    result = {
        "version": RESULT_VERSION,
        "dataset": data.name,
        "data_source": data.source,
        "coverage": data.coverage.summary(),
        "judge": judge_provenance,
        "generators": {"baseline": baseline.provenance, "aware": aware.provenance},
        "config": config.as_dict(),
        "prompts": {"baseline": prompt_description(), "difficulty": DIFFICULTY_PLACEMENT,
                    "judge": {"system": pairwise.JUDGE_SYSTEM, "instruction": pairwise.JUDGE_INSTRUCTION}},
        "typology": typology.as_dict(),
        "templates": templates.as_dict(),
        "assignments": {"n": len(assignments), "digest": assignments_digest(assignments),
                        "sources": sorted({a.source for a in assignments})},
        "assignment_report": dict(assignment_report or {}),
        "rule": pairwise.RATE_RULE,
        "verdict_rule": pairwise.VERDICT_RULE,
        "excluded": excluded,
        "pairs": units,
        "summary": summarise(units, judge_provenance["label"]),
        "seconds": round(time.time() - started, 3),
    }
    result["id"] = result_id(result)
    return result


def summarise(units: Sequence[dict], judge_label: str) -> dict:
    """Statistics overall, per task and per category (a pair counts under each category it used), over
    queries: a query's pairs in the selection are one unit (``pairwise.query_outcome``)."""
    def stats(selected):
        by_query: dict[str, list] = {}
        for u in selected:
            by_query.setdefault(u["qid"], []).append(pairwise.PairOutcome(u["outcome"], u["inconsistent"]))
        per_pair = [o for outcomes in by_query.values() for o in outcomes]
        winners = [v.get("winner") for u in selected for v in (u.get("verdicts") or {}).values()]
        return {**pairwise.preference_stats(pairwise.query_outcome(o) for o in by_query.values()),
                "unit": "query", "queries": len(by_query), "pairs": len(selected),
                "queries_with_several_pairs": sum(len(o) > 1 for o in by_query.values()),
                "pair_outcomes": {name: sum(o.outcome == name for o in per_pair) for name in pairwise.OUTCOMES},
                "verdict_rule": pairwise.verdict_stats(winners), "judge": judge_label}

    tasks = [t for t in TASKS if any(u["task"] == t for u in units)]
    categories = list(dict.fromkeys(c for u in units for c in u["categories_used"]))
    return {"overall": stats(units),
            "by_task": {t: stats([u for u in units if u["task"] == t]) for t in tasks},
            "by_category": {c: stats([u for u in units if c in u["categories_used"]]) for c in categories}}


def result_id(result: Mapping) -> str:
    """``<dataset>-<sha256[:12]>`` over everything that defines the result (never its timings)."""
    key = {k: result[k] for k in ("dataset", "judge", "generators", "config", "prompts", "typology", "templates",
                                  "assignments")}
    key["templates"] = {k: v for k, v in key["templates"].items() if k != "source"}
    key["pairs"] = [(u["qid"], u["task"]) for u in result["pairs"]]
    return f"{result['dataset']}-{content_digest(key, 12)}"


# ---------------------------------------------------------------------------- stored results
def results_dir(dataset: str | None = None) -> Path:
    return result_files.results_dir(KIND, dataset)


def save_result(result: Mapping, folder: Path | None = None) -> Path:
    return result_files.save_result(KIND, result, folder)


def load_result(path: str | Path) -> dict:
    result = result_files.read_result(path, "a preference result")
    if not isinstance(result, dict) or result.get("version") != RESULT_VERSION or "pairs" not in result:
        raise ValueError(f"{path}: not a preference result of version {RESULT_VERSION}")
    return result


def list_results(dataset: str | None = None) -> list[Path]:
    """Stored result files, newest first (all datasets when ``dataset`` is None)."""
    return result_files.list_results(KIND, dataset)
