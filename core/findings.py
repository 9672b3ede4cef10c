"""A checked claim of either study: what the paper says, what was measured here, the verdict and what it
rests on (``pipeline.findings`` for the failure paper, ``ltr.findings`` for LearnDCG).

Verdicts (:data:`VERDICTS`): ``holds``, ``does not hold``, ``inconclusive`` (measured, but the evidence
cannot carry a verdict: n below the claim's minimum, an interval that straddles the threshold, a sub-1B
or unknown-size model, a universe under half of the judged queries; always with that reason) and ``not
measurable here`` (nothing to measure: no study for that dataset, no runs). Parts combine by
:func:`combine`: one part that does not hold makes the whole not hold, whatever else holds (a verdict
is never softened); otherwise one inconclusive part makes the whole inconclusive; otherwise one part that
cannot be measured makes the whole not measurable.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

HOLDS, FAILS, INCONCLUSIVE, UNMEASURABLE = "holds", "does not hold", "inconclusive", "not measurable here"
VERDICTS = (HOLDS, FAILS, INCONCLUSIVE, UNMEASURABLE)


@dataclass
class Part:
    """One measured unit of a finding (a configuration, a dataset, a model): its figures and verdict."""
    scope: str  # "dl19 · bm25 | planted | llama-3.3-70b | binary", "dl19", a model label
    measured: dict
    verdict: str
    reason: str = ""
    # What the verdict rests on, shown in its headline (:attr:`headline`): {"n": int, "statistic": the rule's,
    # "interval": [low, high], "level": ..., "shown": "Wilson 95.0% [0.0%, 8.2%] vs < 10.0%",
    # "models": ["generator: ollama:x (8B, ollama /api/show)"], "inconclusive_because": [...],
    # "on_its_figures": the verdict the figures alone give}
    evidence: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}")

    @property
    def headline(self) -> str:
        """``inconclusive (n = 6 < minimum 30) · n = 6 · Wilson 95.0% [0.0%, 39.0%] · models: generator: x (8B)``:
        the verdict (an inconclusive one with its first reason) and what it rests on (:func:`evidence_text`), as
        the CLI, the JSON and the Findings page show it."""
        because = self.evidence.get("inconclusive_because") or []
        verdict = f"{self.verdict} ({because[0]})" if self.verdict == INCONCLUSIVE and because else self.verdict
        shown = evidence_text(self.evidence)
        return f"{verdict} · {shown}" if shown else verdict

    def to_dict(self) -> dict:
        return {"scope": self.scope, "measured": self.measured, "verdict": self.verdict, "reason": self.reason,
                "evidence": self.evidence, "headline": self.headline}


def evidence_text(evidence: dict) -> str:
    """What a verdict rests on in one line: ``n = 43 · <statistic text> · <power> · models: ...`` (the keys it
    knows: ``n`` (a number, or one per figure), ``shown`` (the statistic's figures as text: an interval, a test),
    ``decides`` (an inconclusive verdict's MDE and the n that would decide, :mod:`core.inference.power`),
    ``models``)."""
    pieces = []
    n = evidence.get("n")
    if isinstance(n, dict):  # one n per figure: "n = accuracy 120, precision 40"
        pieces.append("n = " + ", ".join(f"{k} {v}" for k, v in n.items()))
    elif n is not None:
        pieces.append(f"n = {n}")
    if evidence.get("shown"):
        pieces.append(str(evidence["shown"]))
    if evidence.get("decides"):  # an inconclusive verdict's power: its MDE and the n that would decide
        pieces.append(str(evidence["decides"]))
    if evidence.get("models"):
        pieces.append("models: " + "; ".join(evidence["models"]))
    return " · ".join(pieces)


@dataclass
class Finding:
    name: str
    claim: str
    paper: str
    verdict: str
    reason: str
    parts: list[Part] = field(default_factory=list)
    measured: dict = field(default_factory=dict)  # the figures the verdict reads (headline)
    rests_on: list[dict] = field(default_factory=list)  # studies / runs / results with models and digests
    definitions: dict = field(default_factory=dict)
    # The claim's rule as the claims file states it beside the claim: statistic, minimum n, threshold,
    # correction (shown with the verdict)
    rule: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "claim": self.claim, "paper": self.paper, "verdict": self.verdict,
                "reason": self.reason, "measured": self.measured, "parts": [p.to_dict() for p in self.parts],
                "rests_on": self.rests_on, "definitions": self.definitions, "rule": self.rule}


def combine(parts: list[Part]) -> tuple[str, str]:
    """The whole's verdict and reason from its parts (module docstring)."""
    if not parts:
        return UNMEASURABLE, "nothing to measure"
    failing = [p for p in parts if p.verdict == FAILS]
    if failing:
        return FAILS, "; ".join(f"{p.scope}: {p.reason}" for p in failing)
    unsure = [p for p in parts if p.verdict == INCONCLUSIVE]
    if unsure:
        return INCONCLUSIVE, "; ".join(f"{p.scope}: {p.reason}" for p in unsure)
    missing = [p for p in parts if p.verdict == UNMEASURABLE]
    if missing:
        return UNMEASURABLE, "; ".join(f"{p.scope}: {p.reason}" for p in missing)
    return HOLDS, f"holds in all {len(parts)} of {len(parts)}"


def from_claim(name: str, claim: dict, parts: list[Part], *, measured: dict | None = None,
               rests_on: list[dict] | None = None, paper: str | None = None, definitions: dict | None = None) -> Finding:
    """A :class:`Finding` of claim ``name`` (``claim``: its ``claim`` text and ``paper`` figure) over ``parts``."""
    verdict, reason = combine(parts)
    return Finding(name, claim["claim"], paper if paper is not None else claim["paper"], verdict, reason, parts,
                   measured or {}, rests_on or [], definitions or {}, dict(claim.get("rule", {})))


def rule_text(rule: dict) -> str:
    """A claim's rule in one line, as the claims file states it: type, statistic, minimum n (and what it
    counts), side and threshold or margin, level, how units combine, the family or correction, the reading
    (``""`` for a claim without one)."""
    if not rule:
        return ""
    pieces = [f"{rule['type']} claim"] if rule.get("type") else []
    if rule.get("statistic"):
        pieces.append(rule["statistic"])
    if rule.get("min_n") is not None:
        pieces.append(f"minimum n {rule['min_n']}" + (f" ({rule['counts']})" if rule.get("counts") else ""))
    for key in ("side", "threshold", "margin", "target", "tolerance", "level", "resamples", "seed"):
        if rule.get(key) is not None:
            pieces.append(f"{key} {rule[key]}")
    if rule.get("combine"):
        pieces.append(f"combine {rule['combine']}")
    if rule.get("family"):
        pieces.append(f"family: {rule['family']}")
    elif rule.get("correction"):
        pieces.append(f"correction {rule['correction']}")
    if rule.get("reading"):
        pieces.append(rule["reading"])
    return "; ".join(pieces)


def percent(share: float | None) -> str:
    return "—" if share is None else f"{100 * share:.1f}%"


# A LaTeX table's row cannot break across pages, and a finding's reason names every part (a LearnDCG verdict's
# ran to a page and more): the exports' findings.tex prints this much of it, cut at a word and marked; the full
# text stays in findings.csv and the JSON.
LATEX_REASON_CHARS = 400


def summary_rows(found, reason_chars: int | None = None) -> list[dict]:
    """One row per finding: name, verdict, the paper's figure, the reason (the Findings page's table, the
    export's findings table); ``reason_chars``: the reason cut to about that length, marked as cut."""
    return [{"finding": f.name, "verdict": f.verdict, "paper": f.paper,
             "reason": f.reason if reason_chars is None else cut_reason(f.reason, reason_chars)} for f in found]


def cut_reason(text: str, chars: int) -> str:
    """``text`` when it has at most ``chars`` characters, else its start cut at a word and marked."""
    if len(text) <= chars:
        return text
    return text[:chars].rsplit(" ", 1)[0] + " [...] (in full: findings.csv)"


def part_rows(finding: Finding) -> list[dict]:
    """One row per measured part of a finding: scope, verdict, reason."""
    return [{"scope": p.scope, "verdict": p.verdict, "reason": p.reason} for p in finding.parts]


# The findings commands' text (``python -m pipeline findings``, ``python -m ltr findings``): readable on a
# terminal of this many columns. A reason names every part and ran past 1,000 characters on one line.
TEXT_COLUMNS = 100


def one_line(text: str, width: int = TEXT_COLUMNS) -> str:
    """``text`` on one line of at most ``width`` characters, cut at a word and marked ``…`` when longer."""
    text = str(text)
    indent = text[:len(text) - len(text.lstrip())]
    text = indent + " ".join(text.split())
    if len(text) <= width:
        return text
    head = text[:width - 1]
    return (head.rsplit(" ", 1)[0] if " " in head[width // 2:] else head) + "…"


def wrapped(text: str, indent: str = "", width: int = TEXT_COLUMNS) -> list[str]:
    """``text`` whole, wrapped at ``width`` columns: the first line at ``indent``, the rest two further in
    (a long word, such as a path, is broken rather than run past the edge)."""
    import textwrap

    return textwrap.wrap(" ".join(str(text).split()), width, initial_indent=indent,
                         subsequent_indent=indent + "    ", break_on_hyphens=False) or [indent.rstrip()]


def part_summary(part: Part) -> str:
    """A part's verdict and what it rests on in short: ``verdict · n = 43 · <interval or test>`` and, for an
    inconclusive one, why; a part without figures to show, its reason (the models and the whole reason are
    in :attr:`Part.headline` and ``--verbose``)."""
    pieces = [part.verdict]
    if part.evidence.get("n") is not None:
        pieces.append(f"n = {part.evidence['n']}")
    if part.evidence.get("shown"):
        pieces.append(str(part.evidence["shown"]))
    because = part.evidence.get("inconclusive_because") or []
    if part.verdict == INCONCLUSIVE and because:
        pieces.append(str(because[0]))
    elif not part.evidence.get("shown") and part.reason:  # no figures to show: what the reason says
        return " · ".join(pieces) + " — " + part.reason
    return " · ".join(pieces)


SCOPE_COLUMNS = 60  # a part's line gives its scope at most this many columns (cut, marked), then its figures
_SCOPE_SEPARATOR = re.compile(r"( · | \| | → |; )")


def short_scopes(scopes: list[str]) -> list[str]:
    """Each part's scope by what tells it from the others (``dl19 · bm25 | planted | x | binary`` and
    ``dl19 · tasb | planted | x | binary`` -> ``bm25``, ``tasb``): the components every part shares are on
    the finding's line and in ``--verbose``; a lone part, or parts shaped differently, keep their scope."""
    split = [_SCOPE_SEPARATOR.split(s) for s in scopes]
    if len(scopes) < 2 or len({len(x) for x in split}) != 1:
        return scopes
    differ = [i for i in range(0, len(split[0]), 2) if len({x[i] for x in split}) > 1]
    if not differ:
        return scopes
    # each kept component after the separator that stood before it (a pair of configurations keeps its arrow)
    return ["".join((x[i - 1] if i and n else "") + x[i] for n, i in enumerate(differ)) for x in split]


def finding_lines(finding: Finding, verbose: bool = False, n: str | None = None) -> list[str]:
    """One finding as the findings commands print it, every line within :data:`TEXT_COLUMNS`: its verdict
    (``n``: what its parts rest on) and reason, cut to a line; then one line per part (scope, verdict, n,
    interval or test). ``verbose``: the reason, the paper's figure, the rule, each part's headline (with its
    models) and reason, and what the finding rests on, whole and wrapped."""
    verdict = f"{finding.verdict} (n = {n})" if n else finding.verdict
    if not verbose:
        lines = [one_line(f"{finding.name}: {verdict} — {finding.reason}")]
        for part, scope in zip(finding.parts, short_scopes([p.scope for p in finding.parts])):
            # whose figures these are first (what tells the part from the others), then its verdict and n
            lines.append(one_line(f"  {one_line(scope, SCOPE_COLUMNS)}: {part_summary(part)}"))
        return lines
    lines = [f"{finding.name}: {verdict}", *wrapped(f"reason: {finding.reason}", "  "),
             *wrapped(f"paper: {finding.paper}", "  ")]
    if finding.rule:
        lines += wrapped(f"rule: {rule_text(finding.rule)}", "  ")
    for part in finding.parts:
        lines += wrapped(f"- {part.scope}: {part.headline}", "  ")
        if part.reason:
            lines += wrapped(part.reason, "      ")
    for rest in finding.rests_on:
        lines += wrapped("rests on: " + ", ".join(f"{k} {v}" for k, v in rest.items()
                                                    if k in ("kind", "dataset", "id", "model", "path", "store")), "  ")
    return lines


MORE_TEXT = "(one line per part; --verbose: every reason, rule and model in full; --json: everything)"
