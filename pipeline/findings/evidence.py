"""What a verdict rests on, and its part of a finding (issues 33 and 40).

The inference core decides (:mod:`core.inference`: each claim's rule is data in ``paper_claims.json``, read
as a :class:`core.inference.claims.Claim`); this module holds what the failure study adds around it:

- the gates of a configuration that do not depend on the claim (:func:`context_gates`): a universe under
  half of the judged queries (the study's :class:`pipeline.study.universe.UniverseSummary` warning), a model
  that is sub-1B or of unknown size (:attr:`pipeline.llm.base.Provenance.evidence_gate`, recorded per
  configuration by :func:`pipeline.study.run.configuration_result`); the minimum n is the claim's own
  (``min_n`` and what it ``counts``), checked by the core;
- the models a headline names (:func:`model_lines`);
- the parts of a finding (:func:`graded_parts`): each unit's decision, the family's correction by the claim's
  ``combine`` (:func:`core.inference.combine.every`), and each part with its evidence (n, test, interval,
  threshold or margin, models; for an inconclusive one, the MDE and the n that would decide).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from core.inference import combine
from core.inference.claims import Decision
from pipeline.findings.finding import Part
from pipeline.study.result import StudyResult


def model_lines(study: StudyResult, label: str) -> list[str]:
    """``generator: imported:planted, unknown size``: each LLM of a configuration with its size, as every
    verdict's headline names them."""
    from pipeline.llm.base import Provenance

    config = study.configurations[label]
    models = {"generator": study.generator(label).provenance, "judge": study.judge(label).provenance}
    lines = [f"{role}: {Provenance.from_dict(p).label}, {Provenance.from_dict(p).size_text}"
             for role, p in models.items() if isinstance(p, Mapping) and p]
    return lines + [f"{task}: gated ({why})" for task, why in (config.gated or {}).items() if task not in models]


def context_gates(study: StudyResult, label: str) -> list[str]:
    """The gates of a configuration that do not depend on the claim: a universe under half of the judged
    queries, each gated model (sub-1B or of unknown size)."""
    gates = []
    universe = study.universe_summary(label)
    if universe.warning:
        gates.append(f"a universe under half of the judged queries ({universe.n_common} of {universe.n_judged})")
    return gates + [f"{role} is {why}" for role, why in study.model_gates(label).items()]


@dataclass
class Unit:
    """One unit of a finding before the family's correction: its scope, figures, decision (gated already),
    the models it rests on, and words that go before the decision's (``lead``) and after (``context``)."""
    scope: str
    measured: dict
    decision: Decision
    models: list
    lead: str = ""
    context: str = ""
    extra: dict | None = None


def graded_parts(entries: Sequence[Unit | Part]) -> list[Part]:
    """The parts of a finding, in order: each :class:`Unit` decided with the family's correction (every claim of
    the failure paper combines ``every``: :func:`core.inference.combine.every`) and given its evidence; a ready
    :class:`Part` (not measurable here) kept as it is."""
    units = [e for e in entries if isinstance(e, Unit)]
    decided = combine.every([u.decision for u in units])
    by_unit = dict(zip(map(id, units), decided))
    parts = []
    for entry in entries:
        if isinstance(entry, Part):
            parts.append(entry)
            continue
        d = by_unit[id(entry)]
        evidence = {**d.evidence(), "models": entry.models, **(entry.extra or {})}
        reason = d.reason()
        if entry.lead:  # a gated part's reason starts with its gates
            reason = f"{reason}; {entry.lead}" if d.gates else f"{entry.lead}; {reason}"
        if entry.context:
            reason += f"; {entry.context}"
        parts.append(Part(entry.scope, entry.measured, d.verdict, reason, evidence))
    return parts
