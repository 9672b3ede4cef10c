"""Reason assignment: which categories of a typology explain why each hard query is hard.

The one procedure, used by the failure typology's runs (:mod:`pipeline.typology.runner`, after
induction or on an imported typology) and by the preference step when it has no assignment at hand
(:func:`assign_reasons`). The model sees the task, the query, its task context when there is one
(retrieved passages, generated answer, judgments: :mod:`pipeline.typology.context`) and the numbered
categories with their descriptions; it answers with the categories that apply -- several allowed,
most important first -- each with a short justification, as a JSON list (or, from a small model,
bare category numbers such as "2, 1": :func:`pipeline.typology.parse.parse_assignment`).
An answer nothing can be read from is recorded as unparseable and counted, a failed call as failed,
an answer naming categories outside the typology (a model without a grammar constraint invents
them) as "unknown_category" with the invented names kept; none is ever read as "no reason applies".
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

from pipeline.llm.base import ChatClient, GenerationOptions, LLMError, json_schema_text
from pipeline.typology.categories import TASK_TITLES, UNKNOWN_CATEGORY, Assignment, Category, Typology
from pipeline.typology.induction import SYSTEM, HardQuery, InductionConfig, numbered_categories, query_block
from pipeline.typology.parse import read_assignment


def assignment_schema(categories: Sequence[Category]) -> str:
    """The reply's JSON schema: backends that constrain decoding (llama.cpp) can then only produce a
    readable list of the typology's names; the others ignore it and the parser still reads free text."""
    item = {"type": "object", "properties": {"category": {"type": "string", "enum": [c.name for c in categories]},
                                             "justification": {"type": "string"}},
            "required": ["category", "justification"], "additionalProperties": False}
    return json_schema_text({"type": "array", "items": item})


def assignment_messages(task: str, hq: HardQuery, categories: Sequence[Category]) -> list[dict]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": query_block(task, hq) +
             f"\nFailure categories:\n{numbered_categories(categories)}\n\n"
             f"Which of these categories explain why this query is {TASK_TITLES[task]}? Several may apply. "
             'Reply with a JSON list only: [{"category": "category name", "justification": "short reason"}]'}]


def assign(client: ChatClient, task: str, queries: Sequence[HardQuery], categories: Sequence[Category],
           config: InductionConfig = InductionConfig(), source: str = "",
           on_progress: Callable[[int], None] | None = None) -> list[Assignment]:
    """Each hard query's reasons from ``categories`` (several allowed), with justifications, one
    :class:`Assignment` per query (status "ok", "unknown_category", "unparseable" or "failed";
    ``source`` as given).
    ``on_progress(n)``: ``n`` more queries answered."""
    if not categories:
        raise ValueError("cannot assign reasons from an empty typology")
    categories = list(categories)
    options = GenerationOptions(seed=config.seed, max_tokens=config.assignment_tokens,
                                json_schema=assignment_schema(categories))
    replies = client.chat_many([assignment_messages(task, q, categories) for q in queries], options,
                               progress=f"{task}: assignment", on_progress=on_progress)
    out = []
    for hq, reply in zip(queries, replies):
        if isinstance(reply, LLMError):
            out.append(Assignment(hq.qid, task, [], "failed", source, str(reply)))
            continue
        read = read_assignment(reply.text, categories)
        # unparseable first: an answer with an item that names nothing is no reading, invented names or not
        status = "unparseable" if not read.parsed else UNKNOWN_CATEGORY if read.unknown else "ok"
        out.append(Assignment(hq.qid, task, read.found, status, source, reply.text, tuple(read.unknown)))
    return out


def assign_reasons(client: ChatClient, typology: Typology, queries: Mapping[str, str],
                   hard: Mapping[str, Sequence[str]],
                   on_progress: Callable[[int], None] | None = None) -> tuple[list[Assignment], dict]:
    """:func:`assign` for the preference step: each hard query (``hard[task] = [qid, ...]``, text in
    ``queries``) gets its task's categories of ``typology``, seeing the query alone (the step has no
    task context). ``on_progress(n)``: ``n`` more queries answered.

    Returns the assignments that name a reason (source ``llm:<label>``) and a report: per task the
    queries asked, assigned, unassigned (the reply named no reason, or could not be read), unknown_category (``{qid: the
    names outside the typology it gave}``; such a reply's reasons of the typology, if any, are still
    used) and failed (the call failed; a rerun retries it), with the raw replies.
    """
    source = f"llm:{client.provenance.label}"
    assignments, report = [], {}
    for task, qids in hard.items():
        if not typology.for_task(task) or not qids:
            continue
        made = assign(client, task, [HardQuery(qid, queries[qid], "") for qid in qids], typology.for_task(task),
                      source=source, on_progress=on_progress)
        entry = report[task] = {"asked": len(made), "assigned": 0, "unassigned": [], "unknown_category": {},
                                "failed": [], "replies": {}}
        for a in made:
            if a.status == "failed":
                entry["failed"].append(a.qid)
                continue
            entry["replies"][a.qid] = a.raw
            if a.unknown:
                entry["unknown_category"][a.qid] = list(a.unknown)
            if not a.reasons or a.status == "unparseable":  # an unparseable reply's reasons are no reading
                if not a.unknown:
                    entry["unassigned"].append(a.qid)
                continue
            entry["assigned"] += 1
            assignments.append(a)
    return assignments, report
