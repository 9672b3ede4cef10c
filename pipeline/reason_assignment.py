"""A narrow LLM call that assigns typology categories to hard queries, for the preference step.

The failure typology's own assignment (issue 12) gives the model each query's task context
(retrieved passages, generated answer, judgments) and a justification per reason. This is the small
stand-in used when no such assignment is at hand: the model sees only the query and the task's
categories with their descriptions, and answers with category numbers, most important first.
A reply without a valid number leaves the query unassigned (counted, never guessed).
"""
from __future__ import annotations

import re
from typing import Callable, Mapping, Sequence

from pipeline.difficulty import Assignment, Category, Typology
from pipeline.llm.base import ChatClient, GenerationOptions, LLMError, Message

TASK_CONTEXT = {
    "h2r": "retrieval systems fail to rank relevant passages for it near the top",
    "h2g": "language models generate answers to it that match the relevant passages poorly",
    "h2j": "LLM relevance judges disagree with human assessors on its passages",
}
OPTIONS = GenerationOptions(max_tokens=16)


def assignment_messages(query: str, task: str, categories: Sequence[Category]) -> list[Message]:
    listed = "\n".join(f"{i}. {c.name}: {c.description}" for i, c in enumerate(categories, start=1))
    return [{"role": "system", "content": "You classify why search queries are difficult."},
            {"role": "user", "content": f"Query: {query}\n\nThis query is hard because {TASK_CONTEXT[task]}. "
                                        f"Which of these reasons explain why?\n{listed}\n\n"
                                        "Reply with the numbers of the reasons that apply, most important first "
                                        "(for example: 2, 1)."}]


def parse_numbers(text: str, n_categories: int) -> list[int]:
    """1-based category numbers in the order given, valid and without repeats."""
    numbers = [int(m) for m in re.findall(r"(?<![\d.])(\d{1,2})(?![\d.]\d)", text or "")]
    return list(dict.fromkeys(k for k in numbers if 1 <= k <= n_categories))


def assign_reasons(client: ChatClient, typology: Typology, queries: Mapping[str, str],
                   hard: Mapping[str, Sequence[str]],
                   on_progress: Callable[[int], None] | None = None) -> tuple[list[Assignment], dict]:
    """Assign each hard query (``hard[task] = [qid, ...]``) its task's categories; ``on_progress(n)``:
    ``n`` more queries answered.

    Returns the assignments and a report: per task the queries asked, assigned, unassigned
    (no valid number in the reply) and failed (the call failed; a rerun retries it), with the raw replies.
    """
    jobs = [(task, qid) for task, qids in hard.items() for qid in qids if typology.for_task(task)]
    requests = [assignment_messages(queries[qid], task, typology.for_task(task)) for task, qid in jobs]
    replies = client.chat_many(requests, OPTIONS, progress="assigning reasons",
                               on_progress=on_progress) if requests else []
    source = f"llm:{client.provenance.label}"
    assignments, report = [], {}
    for (task, qid), reply in zip(jobs, replies):
        entry = report.setdefault(task, {"asked": 0, "assigned": 0, "unassigned": [], "failed": [], "replies": {}})
        entry["asked"] += 1
        if isinstance(reply, LLMError):
            entry["failed"].append(qid)
            continue
        entry["replies"][qid] = reply.text
        categories = typology.for_task(task)
        numbers = parse_numbers(reply.text, len(categories))
        if not numbers:
            entry["unassigned"].append(qid)
            continue
        entry["assigned"] += 1
        assignments.append(Assignment(qid, task, tuple(categories[k - 1].name for k in numbers), source))
    return assignments, report
