"""LLM-induced failure typology: per-query reasons, refinement rounds, then assignment.

The procedure, per task (H2R, H2G or H2J) and per dataset:

1. **Reasons.** For every hard query the model gets the query and its task context (H2R: the
   retrieved top passages; H2G: the generated answer and the relevant passages; H2J: the human and
   LLM labels with the passages) and gives one concise reason why it is hard.
2. **Rounds.** The reasons are shuffled once (``seed``) and shown ``batch_size`` at a time. Round 1
   groups its batch into at most ``max_categories`` categories. Every later round gets the current
   typology and the next batch (newly sampled queries; after the last reason the order starts over)
   and returns the revised typology: overlapping categories merged, narrow ones generalised, novel
   causes added.
3. **Stop rule.** Induction stops after round ``r >= 2`` when (a) the round is *unchanged* -- the set
   of normalised category names (:func:`~pipeline.typology.categories.normalise_name`) equals the
   previous round's; descriptions may be reworded -- and (b) every reason has been shown at least
   once. It also stops at ``max_rounds`` (``stop_reason = "max_rounds"``). A round whose answer cannot
   be parsed (or whose call failed) keeps the previous typology and never counts as unchanged. (With
   greedy decoding an identical prompt gets the identical answer -- from the cache, at no cost -- so
   an unreadable round is only worth repeating with a new batch: keep ``batch_size`` below the
   number of reasons.)
   Every round's typology and its difference from the previous one are kept.
4. **Assignment** (:mod:`pipeline.typology.assignment`). Each hard query gets the categories of the
   final typology that explain it -- several allowed -- each with the model's short justification.
   Unreadable answers are recorded as unparseable and counted, never read as "no reason".

Every call goes through a :class:`~pipeline.llm.base.ChatClient` (the response cache), so a rerun
costs no model call and an interrupted run resumes from the cache.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

from pipeline.llm.base import ChatClient, GenerationOptions, LLMError, json_schema_text
from pipeline.typology.categories import TASK_TITLES, Category, category_keys
from pipeline.typology.parse import parse_categories, parse_reason

PROMPT_VERSION = "typology-v1"
# Part of a run's id beside the prompts': a run read by an older parser is recomputed, not reused
# (its calls are replayed from the response cache). 2: prompt placeholders and letterless names are
# not categories. 3: an assignment answer of bare numbers ("2, 1") names categories by number.
PARSER_VERSION = 3
SYSTEM = ("You are an information retrieval researcher analysing why search queries fail. "
          "Answer briefly and exactly in the format asked.")
TASK_EXPLANATIONS = {
    "h2r": "hard to retrieve: the retriever's top passages score low NDCG@10 against the human relevance judgments",
    "h2g": "hard to generate: a language model's zero-shot answer differs from the relevant passages "
           "(low BERTScore)",
    "h2j": "hard to judge: an LLM relevance judge disagrees with the human assessors on many passages",
}
JSON_SHAPE = '[{"name": "short category name", "description": "one sentence"}]'


# The JSON schema of the reply: backends that constrain decoding (llama.cpp) can then only produce
# a readable list; the others ignore it and the parser still reads free text.
def typology_schema(max_categories: int) -> str:
    item = {"type": "object", "properties": {"name": {"type": "string"}, "description": {"type": "string"}},
            "required": ["name", "description"], "additionalProperties": False}
    return json_schema_text({"type": "array", "items": item, "minItems": 1, "maxItems": max_categories})


@dataclass(frozen=True)
class InductionConfig:
    batch_size: int = 8  # reasons shown per round
    max_rounds: int = 6
    max_categories: int = 8
    seed: int = 0
    reason_tokens: int = 80
    typology_tokens: int = 400
    assignment_tokens: int = 200

    def __post_init__(self):
        for name in ("batch_size", "max_rounds", "max_categories"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")

    def as_dict(self) -> dict:
        return {**asdict(self), "prompt_version": PROMPT_VERSION, "parser_version": PARSER_VERSION}


@dataclass(frozen=True)
class HardQuery:
    qid: str
    query: str
    context: str  # the task context, as plain text


@dataclass
class Round:
    number: int
    categories: list[Category]
    batch: list[str]  # qids whose reasons this round saw
    status: str  # "ok" | "unparseable" | "failed"
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    raw: str = ""

    @property
    def unchanged(self) -> bool:
        return self.status == "ok" and not self.added and not self.removed and self.number > 1

    def as_dict(self) -> dict:
        return {"round": self.number, "status": self.status, "unchanged": self.unchanged,
                "categories": [c.as_dict() for c in self.categories], "added": self.added,
                "removed": self.removed, "batch": self.batch, "raw": self.raw}


@dataclass
class Induction:
    task: str
    reasons: dict[str, str]  # qid -> reason (queries whose reason call failed or was empty are absent)
    reason_failures: dict[str, str]  # qid -> why
    rounds: list[Round]
    stop_reason: str  # "converged" | "max_rounds"

    @property
    def categories(self) -> list[Category]:
        for rnd in reversed(self.rounds):
            if rnd.categories:
                return rnd.categories
        return []

    def as_dict(self) -> dict:
        return {"task": self.task, "stop_reason": self.stop_reason, "n_rounds": len(self.rounds),
                "categories": [c.as_dict() for c in self.categories], "reasons": self.reasons,
                "reason_failures": self.reason_failures, "rounds": [r.as_dict() for r in self.rounds]}


# ---------------------------------------------------------------------------------------- prompts
def query_block(task: str, hq: HardQuery) -> str:
    """The task, the query and its task context (left out when there is none), opening a query's prompts."""
    context = f"{hq.context.strip()}\n" if hq.context.strip() else ""
    return f"This query was {TASK_EXPLANATIONS[task]}.\n\nQuery: {hq.query}\n\n{context}"


def reason_messages(task: str, hq: HardQuery) -> list[dict]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": query_block(task, hq) +
             f"\nIn one sentence, why is this query {TASK_TITLES[task]}? Reply with the reason only."}]


def numbered_categories(categories: Sequence[Category]) -> str:
    return "\n".join(f"{i}. {c.name}: {c.description}" for i, c in enumerate(categories, start=1))


def _reason_list(reasons: Sequence[str]) -> str:
    return "\n".join(f"- {r}" for r in reasons)


def initial_messages(task: str, reasons: Sequence[str], max_categories: int) -> list[dict]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content":
             f"Reasons why search queries were {TASK_TITLES[task]}:\n{_reason_list(reasons)}\n\n"
             f"Group these reasons into at most {max_categories} general failure categories. "
             f"Reply with a JSON list only: {JSON_SHAPE}"}]


def refine_messages(task: str, categories: Sequence[Category], reasons: Sequence[str],
                    max_categories: int) -> list[dict]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content":
             f"Current categories of reasons why search queries are {TASK_TITLES[task]}:\n"
             f"{numbered_categories(categories)}\n\nReasons from more queries:\n{_reason_list(reasons)}\n\n"
             "Revise the categories: merge categories that overlap, generalise categories that are too "
             "narrow, and add a category for a reason that no category covers. If no change is needed, "
             f"repeat the categories unchanged. Keep at most {max_categories}. "
             f"Reply with the full JSON list only: {JSON_SHAPE}"}]


# ---------------------------------------------------------------------------------------- steps
def collect_reasons(client: ChatClient, task: str, queries: Sequence[HardQuery], config: InductionConfig,
                    on_progress: Callable[[int], None] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """One concise reason per hard query: ``(reasons, failures)`` keyed by qid. ``on_progress(n)``:
    ``n`` more queries answered."""
    options = GenerationOptions(seed=config.seed, max_tokens=config.reason_tokens)
    replies = client.chat_many([reason_messages(task, q) for q in queries], options,
                               progress=f"{task}: reasons", on_progress=on_progress)
    reasons, failures = {}, {}
    for hq, reply in zip(queries, replies):
        if isinstance(reply, LLMError):
            failures[hq.qid] = f"call failed: {reply}"
            continue
        text = parse_reason(reply.text)
        if text:
            reasons[hq.qid] = text
        else:
            failures[hq.qid] = "empty answer"
    return reasons, failures


def _batches(qids: Sequence[str], config: InductionConfig):
    """Endless batches over a seeded shuffle of ``qids``; yields (batch, all_seen_after_this_batch)."""
    order = list(qids)
    random.Random(config.seed).shuffle(order)
    position = 0
    while True:
        batch = [order[(position + i) % len(order)] for i in range(min(config.batch_size, len(order)))]
        position += len(batch)
        yield batch, position >= len(order)


def run_rounds(client: ChatClient, task: str, reasons: dict[str, str], config: InductionConfig,
               on_round: Callable[[Round], None] | None = None,
               before_round: Callable[[int], None] | None = None) -> tuple[list[Round], str]:
    """Refinement rounds until the stop rule (module docstring) holds: ``(rounds, stop_reason)``.
    ``before_round(number)`` is told as a round starts, ``on_round(round)`` when it is done."""
    if not reasons:
        raise ValueError(f"{task}: no reasons to induce a typology from (every reason call failed?)")
    rounds: list[Round] = []
    current: list[Category] = []
    batches = _batches(sorted(reasons), config)
    for number in range(1, config.max_rounds + 1):
        if before_round:
            before_round(number)
        batch, all_seen = next(batches)
        texts = [reasons[q] for q in batch]
        messages = (refine_messages(task, current, texts, config.max_categories) if current
                    else initial_messages(task, texts, config.max_categories))
        options = GenerationOptions(seed=config.seed, max_tokens=config.typology_tokens,
                                    json_schema=typology_schema(config.max_categories))
        try:
            raw = client.chat(messages, options).text
        except LLMError as exc:
            rnd = Round(number, current, batch, "failed", raw=str(exc))
        else:
            proposed = parse_categories(raw, config.max_categories)
            if proposed:
                before, after = category_keys(current), category_keys(proposed)
                rnd = Round(number, proposed, batch, "ok", raw=raw,
                            added=[c.name for c in proposed if c.key not in before],
                            removed=[c.name for c in current if c.key not in after])
                current = proposed
            else:
                rnd = Round(number, current, batch, "unparseable", raw=raw)
        rounds.append(rnd)
        if on_round:
            on_round(rnd)
        if rnd.unchanged and all_seen:
            return rounds, "converged"
    return rounds, "max_rounds"


def induce(client: ChatClient, task: str, queries: Sequence[HardQuery], config: InductionConfig = InductionConfig(),
           on_round: Callable[[Round], None] | None = None) -> Induction:
    """Reasons, then rounds until the stop rule; see the module docstring."""
    if task not in TASK_EXPLANATIONS:
        raise ValueError(f"unknown task {task!r}; tasks are {', '.join(TASK_EXPLANATIONS)}")
    reasons, failures = collect_reasons(client, task, queries, config)
    return induce_from_reasons(client, task, reasons, failures, config, on_round)


def induce_from_reasons(client: ChatClient, task: str, reasons: dict[str, str], failures: dict[str, str],
                        config: InductionConfig = InductionConfig(),
                        on_round: Callable[[Round], None] | None = None,
                        before_round: Callable[[int], None] | None = None) -> Induction:
    """The rounds part of :func:`induce`, from reasons already collected."""
    rounds, stop_reason = run_rounds(client, task, reasons, config, on_round, before_round)
    if not any(r.categories for r in rounds):
        raise ValueError(f"{task}: no round produced a readable typology in {len(rounds)} round(s); "
                         "see the stored rounds' raw answers")
    return Induction(task, reasons, failures, rounds, stop_reason)
