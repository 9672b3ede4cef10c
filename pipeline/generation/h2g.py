"""Hard to generate (H2G): each answered query's BERTScore F1 against its reference passages (those graded
2-3 that have text), the maximum over them by default (:func:`generation_values`).

A query whose reference set is only partly in the corpus (some grade-2/3 passages without text) can only
score lower, so H2G would partly measure corpus coverage: such queries are left out and counted
(``partial_references="exclude"``, the default) or scored against the passages at hand (``"include"``);
:func:`reference_note` is the one-line report of that choice.

An answer cut at the token limit (finish reason ``length``) is scored as if complete by BERTScore, so
its low score would partly measure the limit: such answers are left out and counted
(``truncated_answers="exclude"``, the default) or scored as they are (``"include"``);
:func:`truncation_note` is the one-line report, :func:`cut_note` the mark beside a shown answer.

Only what H2G can score is generated: :func:`unscorable_queries` names the judged queries it never
scores under the chosen option (no grade-2/3 passage with text; with ``"exclude"`` also the partial
ones), and the answer step (``pipeline.study.tasks.h2g.generation_for``) skips them and records them in
``Generation.not_generated``; :func:`generation_values` counts them (imported answers are read whole).
"""
from __future__ import annotations

from pipeline.generation.answers import Generation
from pipeline.llm.base import LENGTH_FINISH

PARTIAL_REFERENCES = ("exclude", "include")
TRUNCATED_ANSWERS = ("exclude", "include")


def partial_reference_queries(data, qids=None) -> list[str]:
    """Judged queries (of ``qids``) with some but not all of their grade-2/3 passages' texts."""
    coverage = data.reference_coverage()
    return [q for q in (coverage if qids is None else qids) if q in coverage and 0 < coverage[q][0] < coverage[q][1]]


NO_REFERENCE_TEXT = "no reference text"
PARTIAL_REFERENCE_SET = "partial references"


def unscorable_queries(data, partial_references: str = "exclude") -> dict[str, str]:
    """``{qid: why}`` for the judged queries H2G cannot score under ``partial_references``: those whose
    grade-2/3 passages have no text (:data:`NO_REFERENCE_TEXT`, the rule of
    ``pipeline.generation.bertscore.bertscore_per_query``) and, with ``"exclude"``, those with only some
    (:data:`PARTIAL_REFERENCE_SET`, :func:`partial_reference_queries`). An answer for them is made for nothing."""
    _check_partial_references(partial_references)
    out = {q: NO_REFERENCE_TEXT for q in data.judged_qids
           if not any(text.strip() for text in data.relevant_passages(q).values())}
    if partial_references == "exclude":
        out.update({q: PARTIAL_REFERENCE_SET for q in partial_reference_queries(data) if q not in out})
    return out


def _check_partial_references(partial_references: str) -> None:
    if partial_references not in PARTIAL_REFERENCES:
        raise ValueError(f"partial_references must be one of {PARTIAL_REFERENCES}, got {partial_references!r}")


def truncated_answers(gen: Generation) -> list[str]:
    """The qids whose (non-empty) answer was cut at the token limit (finish reason ``length``)."""
    return sorted(q for q, text in gen.answers.items() if text.strip() and gen.finish_reasons.get(q) == LENGTH_FINISH)


def generation_values(data, gen: Generation, encoder: str = "auto", aggregate: str = "max",
                      partial_references: str = "exclude",
                      truncated: str = "exclude") -> tuple[dict[str, float], dict]:
    """BERTScore F1 per answered query; queries with an incomplete reference set, and answers cut at
    the token limit, are excluded and counted unless ``partial_references="include"``,
    ``truncated="include"`` (module docstring)."""
    from pipeline.generation.bertscore import bertscore_per_query, empty_answers, resolve_encoder
    from pipeline.llm.cpu import encoder_threads_record  # the encoder's CPU threads (core.threads)

    _check_partial_references(partial_references)
    if truncated not in TRUNCATED_ANSWERS:
        raise ValueError(f"truncated must be one of {TRUNCATED_ANSWERS}, got {truncated!r}")
    enc = resolve_encoder(encoder)
    qrels = data.require_qrels()
    answered = [qid for qid in gen.answers if qid in qrels]
    partial = partial_reference_queries(data, answered)
    cut = [q for q in truncated_answers(gen) if q in qrels]
    dropped = set(partial) if partial_references == "exclude" else set()
    dropped_cut = set(cut) if truncated == "exclude" else set()
    scored = [qid for qid in answered if qid not in dropped and qid not in dropped_cut]
    references = {qid: data.relevant_passages(qid) for qid in scored}
    values, excluded = bertscore_per_query({q: gen.answers[q] for q in scored}, references, enc, aggregate=aggregate)
    empty = empty_answers(gen.answers)  # never BERTScored (see pipeline.generation.bertscore)
    coverage = data.reference_coverage()
    # judged queries the answer step did not ask, as H2G could not score them (unscorable_queries)
    not_generated = {q: why for q, why in gen.not_generated.items() if q in qrels}
    return values, {**enc.as_dict(), "aggregate": aggregate, "excluded_no_relevant_text": excluded,
                    "n_excluded": len(excluded), "n_failed_generations": len(gen.failed),
                    "excluded_empty_answer": empty, "n_empty_answers": len(empty),
                    "partial_references": partial_references, "n_answered": len(answered),
                    "n_partial_references": len(partial), "excluded_partial_references": sorted(dropped),
                    "n_excluded_partial_references": len(dropped),
                    "not_generated": not_generated, "n_not_generated": len(not_generated),
                    "n_not_generated_no_reference": sum(w == NO_REFERENCE_TEXT for w in not_generated.values()),
                    "n_not_generated_partial_references":
                        sum(w == PARTIAL_REFERENCE_SET for w in not_generated.values()),
                    "truncated_answers": truncated, "truncated": cut, "n_truncated": len(cut),
                    "excluded_truncated": sorted(dropped_cut), "n_excluded_truncated": len(dropped_cut),
                    "max_tokens": (gen.options or {}).get("max_tokens"),
                    "reference_coverage": {q: list(coverage[q]) for q in answered},
                    "corpus_note": data.coverage.summary(), "threads": encoder_threads_record()}


def reference_note(info: dict) -> str:
    """One line: the partial-reference choice and its counts (CLI text output, the page)."""
    n_partial = info.get("n_partial_references")
    if n_partial is None:
        return "reference coverage not recorded (a study from before partial references were counted)"
    verb = ("excluded from H2G (partial references: exclude)" if info["partial_references"] == "exclude" else
            "scored against the passages that have text (partial references: include)")
    note = (f"{n_partial} of {info['n_answered']} answered queries have only some of their grade-2/3 passages' "
            f"texts: {verb}; {info['n_excluded']} more have none (excluded)")
    if info.get("n_not_generated"):
        note += (f"; {info['n_not_generated']} judged queries not answered (H2G cannot score them): "
                 f"{info['n_not_generated_no_reference']} without reference text, "
                 f"{info['n_not_generated_partial_references']} with partial references")
    return note


def cut_note(max_tokens) -> str:
    """The mark beside an answer cut at the token limit, wherever an answer is shown (as text)."""
    return f"cut at {max_tokens} tokens" if max_tokens else "cut at the token limit"


def answer_cut_note(finish_reasons, options, qid: str) -> str | None:
    """:func:`cut_note` for the answer of ``qid`` when it was cut at the token limit, else None
    (``finish_reasons``/``options`` as a generation records them; None for imported answers)."""
    if (finish_reasons or {}).get(qid) != LENGTH_FINISH:
        return None
    return cut_note((options or {}).get("max_tokens"))


def truncation_note(info: dict) -> str:
    """One line: how many answers were cut at the token limit and what H2G did with them."""
    if info.get("n_truncated") is None:
        return "truncated answers not counted (a result from before answers cut at the token limit were counted)"
    verb = ("excluded from H2G (truncated answers: exclude)" if info["truncated_answers"] == "exclude" else
            "scored as they are (truncated answers: include)")
    return (f"{info['n_truncated']} of {info['n_answered']} answered queries have an answer "
            f"{cut_note(info.get('max_tokens'))} (finish reason length): {verb}")
