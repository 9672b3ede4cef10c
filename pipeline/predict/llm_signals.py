"""Predictors beyond retrieval, where a model exposes log-probabilities: one for H2G, one for H2J.

- :func:`mean_token_logprob` (H2G): the generator's mean token log-probability of its own zero-shot
  answer, a prompt-performance predictor in the spirit of the LLM-confidence signals of Kadavath et al.
  2022 ("Language models (mostly) know what they know") and of QPP for generation (Faggioli et al. 2023,
  "Query performance prediction: from ad-hoc to conversational search" discuss it as open): higher is a
  more confident answer. The answer is asked again through the response cache with the study's
  zero-shot prompt and decoding options plus ``top_logprobs`` (greedy decoding gives the same text; a
  different text is counted), so a rerun costs nothing.
- :func:`expected_grade_spread` (H2J): the population standard deviation (ddof 0) over a query's
  judged pairs of the log-probability judge's expected grade sum_g g p(g)
  (:func:`pipeline.judging.judgments.expected_grade`): how far apart the judge places the query's
  passages; no normalisation.

A generator or judge without log-probabilities (an imported file, an Ollama or OpenAI-compatible
backend that does not return them) has no such predictor: :class:`Absent` says why, it is never 0.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

LOGPROB_ALTERNATIVES = 5  # alternatives per step: the greedy token is the first of them


@dataclass(frozen=True)
class Absent:
    """A predictor that cannot be computed for a component, and why (shown instead of a value)."""
    name: str
    reason: str

    def as_dict(self) -> dict:
        return {"name": self.name, "reason": self.reason}


def mean_token_logprob(steps: list[dict[str, float]], tokens: list[str]) -> float | None:
    """H2G's predictor: (1/n) sum_i log p(t_i | t_<i, prompt) over the answer's n generated tokens (natural
    log, no length normalisation beyond the mean), each token's log-probability read from its step's
    alternatives (None when no token's is among them); an LLM-confidence signal (Kadavath et al. 2022)."""
    found = [alternatives[token] for token, alternatives in zip(tokens, steps) if token in alternatives]
    return float(np.mean(found)) if found else None


def answer_logprobs(client, queries: Mapping[str, str], answers: Mapping[str, str] | None = None, *,
                    progress: str | None = None) -> tuple[dict[str, float], dict]:
    """``({qid: mean token log-probability}, counts)`` of ``client``'s zero-shot answers to ``queries``;
    ``answers`` (the stored generation) lets the counts say how many texts differ from it."""
    from pipeline.generation.answers import GENERATION_OPTIONS, zero_shot_messages
    from pipeline.llm.base import LLMError

    qids = list(queries)
    options = replace(GENERATION_OPTIONS, top_logprobs=LOGPROB_ALTERNATIVES)
    replies = client.chat_many([zero_shot_messages(queries[q]) for q in qids], options, progress=progress)
    values, failed, differ = {}, [], 0
    for qid, reply in zip(qids, replies):
        if isinstance(reply, LLMError) or not reply.text.startswith("{"):
            failed.append(qid)
            continue
        wrapped = json.loads(reply.text)
        value = mean_token_logprob(wrapped.get("top_logprobs", []), wrapped.get("tokens", []))
        if value is None:
            failed.append(qid)
            continue
        values[qid] = value
        if answers is not None and qid in answers and answers[qid].strip() != wrapped.get("content", "").strip():
            differ += 1
    return values, {"n_queries": len(values), "failed": failed, "n_text_differs_from_generation": differ,
                    "options": {**options.__dict__}}


def generator_logprob_predictor(arg: str, data, answers: Mapping[str, str] | None = None, *,
                                llm_options: dict | None = None, progress: bool = True):
    """H2G's predictor for generator ``arg`` (``SPEC`` or ``NAME=FILE``, as ``--generator``):
    ``(name, values, info)``, or :class:`Absent` for imported answers or a backend without
    log-probabilities. ``answers``: the answers H2G scored (only their queries are asked)."""
    from pipeline.llm import make_client
    from pipeline.study.components import parse_component

    spec, file = parse_component(arg, "--generator")
    if file is not None:
        return Absent(f"mean_logprob[{spec}]", f"{spec}: imported answers carry no token log-probabilities")
    client = make_client(spec, **{"step": "generation", **(llm_options or {})})
    name = f"mean_logprob[{client.provenance.backend}:{client.provenance.model}]"  # the model's label is in info
    if not client.backend.supports_logprobs:
        return Absent(name, f"{client.provenance.label}: this backend returns no token log-probabilities")
    queries = data.queries()
    asked = {q: queries[q] for q in (answers if answers is not None else queries) if q in queries}
    values, counts = answer_logprobs(client, asked, answers,
                                     progress=f"{data.name} answer log-probabilities" if progress else None)
    return name, values, {"provenance": client.provenance.as_dict(), **counts}


def expected_grade_spread(expected: Mapping[str, Mapping[str, float]], min_pairs: int = 2) -> dict[str, float]:
    """H2J's predictor: sqrt((1/m) sum_j (e_j - mean e)^2), the population sd (ddof 0) of the judge's
    expected grades e_j = sum_g g p(g) over a query's m labelled pairs (m >= ``min_pairs``), unnormalised;
    the log-probability judge's expected grade follows Thomas et al. 2024 and UMBRELA (Upadhyay et al. 2024)."""
    return {qid: float(np.std(list(grades.values()), ddof=0)) for qid, grades in expected.items()
            if len(grades) >= min_pairs}


def judge_spread_predictor(judgments):
    """H2J's predictor for :class:`pipeline.judging.judgments.Judgments`: ``(name, values, info)``, or
    :class:`Absent` when the judge gave no expected grades (imported labels, no log-probabilities)."""
    name = f"expected_grade_sd[{judgments.judge}]"
    if not judgments.expected:
        why = ("imported judgments hold labels only" if judgments.provenance.get("backend") == "imported"
               else f"{judgments.provenance.get('label', judgments.judge)} returned no log-probabilities")
        return Absent(name, f"{judgments.judge}: no expected grades ({why})")
    values = expected_grade_spread(judgments.expected)
    return name, values, {"provenance": judgments.provenance, "n_queries": len(values),
                    "n_pairs": sum(map(len, judgments.expected.values()))}


# the function whose docstring defines each family's predictor (shown with its values)
DEFINITIONS = {"generation": mean_token_logprob, "judging": expected_grade_spread}
