"""Pairwise preference: the judge's prompt, verdict parsing, both-order outcomes and their statistics.

The judge sees the query, the highly relevant passages (NIST grade 2-3, capped and truncated by the
caller) and two responses labelled A and B, and names the one that better reflects the passages.

Both orders, to cancel position bias: order ``ab`` shows the baseline as A and the difficulty-aware
response as B; order ``ba`` swaps them. Each verdict maps to a winner (``aware``, ``baseline`` or an
explicit ``tie``); the pair's outcome is

* ``win``  — both orders prefer the difficulty-aware response;
* ``loss`` — both prefer the baseline;
* ``tie``  — anything else among parsed verdicts; when the two verdicts name different responses
  the pair is also *inconsistent* (the judge followed the position, not the content);
* ``unparseable`` — at least one verdict has no recognisable answer: recorded, counted, never guessed;
* ``failed`` — a judge call failed (not cached, so a rerun retries it).

Statistics over the decided units (win + tie + loss = n): preference rate = wins / n with its 95%
Wilson score interval (``scipy.stats.binomtest(...).proportion_ci(method="wilson")``), a two-sided
sign test of wins against losses (ties dropped; ``scipy.stats.binomtest(wins, wins + losses, 0.5)``),
and the share of inconsistent units among the decided ones.

The unit is a *query* (:func:`query_outcome`): a query hard in two tasks gets two pairs (two
difficulty sentences), which are not independent draws, so its pairs are combined into one outcome
before any interval or test: more pair wins than losses = win, more losses = loss, else a tie; no
decided pair = unparseable (or failed when a call failed). Pair counts are reported beside.

Two rules, both reported (``RATE_RULE`` and ``VERDICT_RULE``): the *pair rule* above (a win needs
both orders; a position-inconsistent pair is a tie), and the *verdict rule*: every parsed verdict of
every order counts on its own, rate = verdicts for the difficulty-aware answer / all parsed verdicts
(ties included), no interval (the verdicts of one query are not independent). On pairs whose two
verdicts parsed, the verdict rate is never below the pair rate: a win pair gives two verdicts for the
difficulty-aware answer, a tie pair (position-inconsistent or said so) up to one, which the pair rule
counts as no win. The study's published rates (``pipeline.findings.preference.paper_rates``) do not say which rule
they use, so the page and the CLI show both of ours beside them, named.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from scipy.stats import binomtest

from core.inference.paired import sign_test  # noqa: F401  (wins against losses; re-exported)
from pipeline.llm.base import Message

ORDERS = ("ab", "ba")  # ab: baseline is A, aware is B; ba: aware is A, baseline is B
OUTCOMES = ("win", "tie", "loss", "unparseable", "failed")
RATE_RULE = ("pair rule: preference rate = wins / (wins + ties + losses) over queries; a pair counts as a win "
             "only when both orders prefer the difficulty-aware response, as a loss only when both prefer the "
             "baseline, else a tie; a query with several pairs (hard in several tasks) is one unit: more pair "
             "wins than losses = win, more losses = loss, else tie; 95% Wilson score interval; two-sided sign "
             "test of wins vs losses (ties dropped); unparseable and failed excluded and counted")
VERDICT_RULE = ("verdict rule: every parsed verdict of both orders counts on its own; rate = verdicts preferring "
                "the difficulty-aware response / all parsed verdicts (ties included); no interval (a query's "
                "verdicts are not independent)")

JUDGE_SYSTEM = ("You are an impartial judge. You compare two responses to a search query against passages "
                "that human assessors judged highly relevant to it.")
JUDGE_INSTRUCTION = ("Which response better reflects the content of the relevant passages? "
                     "Reply with a single letter: A or B.")
# the verdict's JSON schema: a backend that constrains decoding (llama.cpp) can only answer "A" or "B"
VERDICT_SCHEMA = '{"type":"string","enum":["A","B"]}'


def judge_messages(query: str, passages: Sequence[str], response_a: str, response_b: str) -> list[Message]:
    """The pairwise judge prompt (passages already capped and truncated by the caller)."""
    listed = "\n".join(f"[{i}] {p}" for i, p in enumerate(passages, start=1))
    user = (f"Query: {query}\n\nHighly relevant passages:\n{listed}\n\n"
            f"Response A:\n{response_a.strip()}\n\nResponse B:\n{response_b.strip()}\n\n{JUDGE_INSTRUCTION}")
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


# ---------------------------------------------------------------------------- verdict parsing
_WORD = r"(?i:response|answer|option|output|assistant|candidate)"
# Decisive phrasings, strongest first; each captures the letter. Letters are upper-case only, so the
# article "a" never counts.
_DECISIVE = [
    re.compile(r"\[\[\s*([AB])\s*\]\]"),
    re.compile(r"(?i:verdict|final answer|answer|choice|winner|preferred|better response|better answer)"
               r"\s*(?:is|would be|:|=|-)\s*\**\s*(?:" + _WORD + r"\s*)?\(?([AB])\b"),
    re.compile(r"(?:" + _WORD + r"\s*)?\(?\b([AB])\)?\s+(?i:is|was)\s+(?i:(?:the )?(?:better|best|correct|right|preferred|superior|more|most))"),
    re.compile(r"(?i:prefer|choose|pick|select)\s+(?:" + _WORD + r"\s*)?\(?([AB])\b"),
]
# the whole reply is the letter ("B", "Response B.", "**A**"), or it opens with the bare letter and
# punctuation ("A. Because ...", "(B) cites ..."); never the article in "A better one is B", never the
# label in "Response A: ... Response B: ..."
_ONLY = re.compile(r"^\W*(?:" + _WORD + r"\s*)?\(?([AB])\)?\W*$")
_LEADING = re.compile(r"(?m)^\W*\(?([AB])\)?[.:,;!)\]*\n-]")
_TIE = re.compile(r"(?i)\b(?:tie|equally|both (?:are|responses are) (?:equally )?(?:good|bad|relevant)|"
                  r"neither is better|no difference)\b")


def parse_verdict(text: str) -> str | None:
    """``"A"``, ``"B"``, ``"tie"`` or None (unparseable) from a judge's reply.

    Decisive phrasings ("[[B]]", "Answer: B", "Response B is better", "I prefer B") win; then a reply
    that is the letter or opens with it ("B", "Response B.", "(A) because ..."); then an explicit
    tie. Two different letters among the decisive phrasings, a reply that only describes the
    responses, or no letter at all is unparseable: never a guess.
    """
    text = (text or "").strip()
    if not text:
        return None
    for pattern in _DECISIVE:
        letters = set(pattern.findall(text))
        if len(letters) == 1:
            return letters.pop()
        if len(letters) > 1:
            return None
    only = _ONLY.match(text)
    if only:
        return only.group(1)
    openings = set(_LEADING.findall(text))  # every line that opens with a bare letter: "A: A ... B: B" is no verdict
    if len(openings) == 1 and _LEADING.match(text):
        return openings.pop()
    if openings:
        return None
    if _TIE.search(text):
        return "tie"
    return None


def winner(verdict: str | None, order: str) -> str | None:
    """``aware``, ``baseline``, ``tie`` or None for a parsed verdict given in ``order``."""
    if verdict is None:
        return None
    if verdict == "tie":
        return "tie"
    aware_letter = "B" if order == "ab" else "A"
    return "aware" if verdict == aware_letter else "baseline"


@dataclass(frozen=True)
class PairOutcome:
    outcome: str  # one of OUTCOMES
    inconsistent: bool  # both verdicts decisive and naming different responses


def pair_outcome(verdicts: Mapping[str, str | None], failed: bool = False) -> PairOutcome:
    """The pair's outcome from its parsed verdicts ``{"ab": "A"|"B"|"tie"|None, "ba": ...}``."""
    if failed:
        return PairOutcome("failed", False)
    winners = [winner(verdicts.get(order), order) for order in ORDERS]
    if None in winners:
        return PairOutcome("unparseable", False)
    if winners == ["aware", "aware"]:
        return PairOutcome("win", False)
    if winners == ["baseline", "baseline"]:
        return PairOutcome("loss", False)
    return PairOutcome("tie", set(winners) == {"aware", "baseline"})


# ---------------------------------------------------------------------------- statistics
def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """The Wilson score interval of ``successes / n`` (None when n = 0)."""
    if n == 0:
        return None
    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def query_outcome(outcomes: Sequence[PairOutcome]) -> PairOutcome:
    """One query's outcome from its pairs (module docstring): the sign of pair wins minus losses."""
    decided = [o for o in outcomes if o.outcome in ("win", "tie", "loss")]
    if not decided:
        return PairOutcome("failed" if any(o.outcome == "failed" for o in outcomes) else "unparseable", False)
    net = sum(o.outcome == "win" for o in decided) - sum(o.outcome == "loss" for o in decided)
    return PairOutcome("win" if net > 0 else "loss" if net < 0 else "tie", any(o.inconsistent for o in decided))


def verdict_stats(winners: Iterable[str | None]) -> dict:
    """The verdict rule (``VERDICT_RULE``) over every order's winner (``aware``/``baseline``/``tie``/None)."""
    winners = [w for w in winners if w is not None]
    aware = sum(w == "aware" for w in winners)
    return {"verdicts": len(winners), "aware": aware, "baseline": sum(w == "baseline" for w in winners),
            "tie": sum(w == "tie" for w in winners), "rate": aware / len(winners) if winners else None}


def preference_stats(outcomes: Iterable[PairOutcome]) -> dict:
    """Counts, preference rate, Wilson 95% interval, sign-test p and inconsistent share (see RATE_RULE)."""
    outcomes = list(outcomes)
    counts = {name: sum(o.outcome == name for o in outcomes) for name in OUTCOMES}
    n = counts["win"] + counts["tie"] + counts["loss"]
    inconsistent = sum(o.inconsistent for o in outcomes)
    interval = wilson_interval(counts["win"], n)
    return {
        "pairs": len(outcomes), "decided": n, "wins": counts["win"], "ties": counts["tie"],
        "losses": counts["loss"], "unparseable": counts["unparseable"], "failed": counts["failed"],
        "rate": counts["win"] / n if n else None,
        "ci_low": interval[0] if interval else None, "ci_high": interval[1] if interval else None,
        "sign_test_p": sign_test(counts["win"], counts["loss"]),
        "inconsistent": inconsistent, "inconsistent_share": inconsistent / n if n else None,
    }
