"""The study's query universe: over which queries each task's hard set is drawn, and where the three
sets are intersected.

Every task scores its own queries: a retriever every judged query, H2G only those with (complete)
reference passages, an LLM judge only those with judged pairs that have text. The overlap figures
(Venn regions, pairwise counts, the hypergeometric test) need one population, the *common universe*:
the queries all three tasks score. Two rules, named, stored with every study and shown with it:

- ``per-task`` (default, the paper's): each task's set is its quantile over the task's own scored
  queries (the set ``python -m pipeline h2r|h2g|h2j`` reports), and the overlap is computed over those
  sets' members in the common universe. A query hard to retrieve among all of DL20's 54 queries stays
  hard whatever H2G could score.
- ``common``: each task's quantile is taken within the common universe (the rule before the choice
  existed). On a partial corpus this redefines "hard": with the data folder's passages DL20's H2R
  quartile is taken over 26 of 54 queries and DL21's over 5 of 53.

Studies stored before the choice carry no ``universe``: their sets were taken within the common universe,
so they read as ``common`` and say that the rule was not recorded (:data:`LEGACY_NOTE`).

:class:`UniverseSummary` records, per configuration, the rule, each task's own n, the common universe's
n, the judged queries' n, how many of each task's hard queries fall outside the common universe (they
are in no Venn region) and a warning when the common universe holds under half of the judged queries.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Collection, Mapping

from pipeline.sets.rule import HardSet, hard_set

UNIVERSES = ("per-task", "common")
DEFAULT_UNIVERSE = "per-task"
LEGACY_UNIVERSE = "common"
LEGACY_NOTE = "stored before the universe choice was recorded: its sets were taken within the common universe"
UNIVERSE_HELP = {
    "per-task": "each task's set is its quantile over the queries that task scores; the overlap is computed "
                "over the sets' members among the queries all three tasks score (the paper's definition)",
    "common": "each task's quantile is taken within the queries all three tasks score",
}
TASK_NAMES = {"h2r": "H2R", "h2g": "H2G", "h2j": "H2J"}


def check_universe(rule: str) -> str:
    if rule not in UNIVERSES:
        raise ValueError(f"unknown universe {rule!r}; use {' or '.join(UNIVERSES)}")
    return rule


def stored_rule(stored: str | None) -> str:
    """The rule of a stored study or configuration (None: stored before the choice, i.e. ``common``)."""
    return stored if stored is not None else LEGACY_UNIVERSE


@dataclass(frozen=True)
class UniverseSummary:
    """How one configuration's sets were drawn and over which queries. JSON: :meth:`to_dict`."""
    rule: str  # "per-task" or "common"
    n_common: int  # queries all three tasks score: the overlap's N
    n_judged: int  # the study's judged queries (0: not known, e.g. derived from an older study)
    n_task: dict[str, int]  # task -> queries that task scores
    hard_outside: dict[str, int]  # task -> hard queries outside the common universe (per-task only; else 0)
    recorded: bool = True  # False: derived from a study stored before the choice

    @property
    def share(self) -> float | None:
        return self.n_common / self.n_judged if self.n_judged else None

    @property
    def warning(self) -> str | None:
        """One line when the common universe holds under half of the judged queries."""
        if not self.n_judged or 2 * self.n_common >= self.n_judged:
            return None
        fewest = min(self.n_task, key=lambda t: self.n_task[t])
        return (f"the overlap is computed over {self.n_common} of {self.n_judged} judged queries "
                f"({self.share:.0%}, under half): the queries all three tasks score; "
                f"{TASK_NAMES.get(fewest, fewest)} scores only {self.n_task[fewest]}")

    def line(self) -> str:
        """``universe per-task: H2R over 54 queries, H2G over 26, H2J over 54; overlap over the 26 all three
        score (of 54 judged)``, plus the hard queries outside it (the page's and CLI's line)."""
        over = ", ".join(f"{TASK_NAMES.get(t, t)} {n}" for t, n in self.n_task.items())
        where = ("each task's set over its own scored queries" if self.rule == "per-task"
                 else "each task's set within the common universe")
        text = (f"universe {self.rule} ({where}): queries scored {over}; overlap over the {self.n_common} "
                f"all three score" + (f" (of {self.n_judged} judged)" if self.n_judged else ""))
        outside = {t: n for t, n in self.hard_outside.items() if n}
        if outside:
            text += ("; hard queries outside it, in no region: "
                     + ", ".join(f"{TASK_NAMES.get(t, t)} {n}" for t, n in outside.items()))
        if not self.recorded:
            text += f" ({LEGACY_NOTE})"
        return text

    def to_dict(self) -> dict:
        return {**asdict(self), "share": self.share, "warning": self.warning}

    @classmethod
    def from_dict(cls, data: Mapping) -> UniverseSummary:
        return cls(data["rule"], data["n_common"], data["n_judged"], dict(data["n_task"]),
                   dict(data["hard_outside"]), data.get("recorded", True))


def common_universe(values: Mapping[str, Mapping[str, float]]) -> list[str]:
    """The queries every task scores, sorted."""
    scored = [set(v) for v in values.values()]
    return sorted(set.intersection(*scored)) if scored else []


def draw_sets(values: Mapping[str, Mapping[str, float]], quantile: float, rule: str = DEFAULT_UNIVERSE,
              n_judged: int = 0, *, top: Collection[str] = ()
              ) -> tuple[list[str], dict[str, HardSet], dict[str, list[str]], UniverseSummary]:
    """``(common universe, each task's HardSet, each task's set within the universe, summary)`` for the
    per-task values ``{"h2r": {qid: v}, "h2g": ..., "h2j": ...}`` under ``rule`` (module docstring).
    The HardSet is what the rule drew (its N is the task's own n under ``per-task``, the universe's under
    ``common``); the sets within the universe, hardest first, are what every overlap figure counts.
    ``top``: the tasks whose hardest queries have the highest values (the study's: H2J's disagreement,
    as each task's ``higher_is`` says; the others' hardest are the lowest)."""
    check_universe(rule)
    universe = common_universe(values)
    inside = set(universe)
    hard = {}
    for task, per_query in values.items():
        scope = per_query if rule == "per-task" else {q: v for q, v in per_query.items() if q in inside}
        hard[task] = hard_set(scope, quantile, task, top=task in top) if scope else None
    sets = {task: [q for q in h.qids if q in inside] if h else [] for task, h in hard.items()}
    summary = UniverseSummary(rule, len(universe), n_judged, {t: len(v) for t, v in values.items()},
                              {t: (len(h.qids) - len(sets[t])) if h else 0 for t, h in hard.items()})
    return universe, hard, sets, summary
