"""Difficulty-aware prompts: a query's assigned failure reasons turned into one sentence added to the
zero-shot generation prompt.

Three inputs, all data rather than code:

* a **typology** (:class:`pipeline.typology.categories.Typology`, read by
  ``pipeline.typology.categories.load_typology`` from a file in its layout
  ``{"name", "tasks": {task: [{"name", "description"}, ...]}}``): the study's ten categories are
  ``pipeline/typology/study_typology.json``;
* **assignments** (:class:`pipeline.typology.categories.Assignment`), the "query -> reason
  categories" input of the preference step: from a JSON list or a JSONL file of one record per
  (query, task) ``{"qid", "task", "categories": [name, ...]}`` (most important first; hand-assigned,
  another tool's output), from the failure typology's runs (:func:`reasons_from_typology_store`) or
  from an LLM (:func:`pipeline.typology.assignment.assign_reasons`);
* **sentence templates** (``pipeline/prompting/difficulty_sentences.json``): one sentence per category,
  matched by normalised name, and a ``default`` template with ``{category}`` and
  ``{description}`` for categories without one. The templates used are stored with every result.

The difficulty-aware prompt is the baseline prompt with the sentence added on its own line to its
last user message, right after the line holding the query (before the zero-shot prompt's closing
"Answer:" cue); nothing else changes, so :func:`prompt_diff` shows exactly the change.
By default the sentence comes from the first (most important) reason; ``mode="all"`` writes one
sentence per reason.
"""
from __future__ import annotations

import difflib
import json
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from core.digest import content_digest
from pipeline.llm.base import Message, Provenance
from pipeline.typology.categories import TASKS, Assignment, Category, Typology, load_typology, normalise_name

DATA_DIR = Path(__file__).resolve().parent
DEFAULT_TEMPLATES = DATA_DIR / "difficulty_sentences.json"
DEFAULT_STATEMENTS = DATA_DIR / "neutral_statements.json"
REASON_MODES = ("first", "all")


class DifficultyInputError(ValueError):
    """A typology, template or assignment file is malformed: names the file (and line) and the problem."""


# ---------------------------------------------------------------------------- sentence templates
@dataclass(frozen=True)
class SentenceTemplates:
    """Category name -> difficulty sentence; ``default`` formats ``{category}`` and ``{description}``."""
    default: str
    sentences: dict[str, str]
    source: str = ""

    def sentence(self, category: Category) -> str:
        for name, text in self.sentences.items():
            if normalise_name(name) == normalise_name(category.name):
                return text.strip()
        return self.default.format(category=category.name.lower(), description=category.description).strip()

    def difficulty_text(self, categories: Sequence[Category], mode: str = "first") -> str:
        """The text added to the prompt: the first category's sentence, or one sentence per category."""
        if mode not in REASON_MODES:
            raise ValueError(f"reason mode must be one of {REASON_MODES}, got {mode!r}")
        if not categories:
            raise ValueError("no category to describe")
        chosen = categories[:1] if mode == "first" else categories
        return " ".join(self.sentence(c) for c in chosen)

    def as_dict(self) -> dict:
        return {"default": self.default, "sentences": dict(self.sentences), "source": self.source}


def templates_from_dict(obj, where: str = "templates") -> SentenceTemplates:
    if not isinstance(obj, dict):
        raise DifficultyInputError(f"{where}: expected a JSON object with 'default' and 'sentences'")
    default, sentences = obj.get("default"), obj.get("sentences", {})
    if not isinstance(default, str) or not default.strip():
        raise DifficultyInputError(f"{where}: 'default' must be a non-empty template string")
    fields = {f for _, f, _, _ in string.Formatter().parse(default) if f is not None}
    if fields - {"category", "description"}:
        raise DifficultyInputError(f"{where}: 'default' may only use {{category}} and {{description}}, "
                                   f"not {', '.join(sorted(fields - {'category', 'description'}))}")
    if not isinstance(sentences, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                                  for k, v in sentences.items()):
        raise DifficultyInputError(f"{where}: 'sentences' must map category names to non-empty sentences")
    return SentenceTemplates(default.strip(), {k.strip(): v.strip() for k, v in sentences.items()},
                             str(obj.get("source", where)))


def load_templates(path: str | Path = DEFAULT_TEMPLATES) -> SentenceTemplates:
    path = Path(path)
    return templates_from_dict(_read_json(path), str(path))


# ---------------------------------------------------------------------------- control statements
@dataclass(frozen=True)
class NeutralStatements:
    """Grammatical statements naming no difficulty, by word count (``neutral_statements.json``): the control
    arms' sentence, as long as the difficulty sentence it stands for (issue 40: a cut fragment such as "Read the
    query and the." is no statement, and a reader tells it from the real sentence by its form alone).

    ``series[0]`` has one statement for every count 1..L; a longer sentence is matched by several statements,
    one from each series in turn, the words split as evenly as possible (each part then has at least L/2
    words, so the later series hold the counts ceil(L/2)..L)."""
    series: tuple[dict[int, str], ...]
    source: str = ""

    def statement(self, words: int) -> str:
        """A neutral statement of exactly ``words`` words."""
        if words < 1:
            raise ValueError(f"a control statement needs at least one word, got {words}")
        longest = max(self.series[0])
        parts = -(-words // longest)
        base, extra = divmod(words, parts)
        sizes = [base + 1] * extra + [base] * (parts - extra)
        return " ".join(self.series[i % len(self.series)][size] for i, size in enumerate(sizes))

    def matching(self, sentence: str) -> str:
        """The statement as long as ``sentence`` (its words, split on whitespace)."""
        return self.statement(len(sentence.split()))

    def as_dict(self) -> dict:
        return {"series": [{str(k): v for k, v in sorted(s.items())} for s in self.series], "source": self.source}


def load_statements(path: str | Path = DEFAULT_STATEMENTS) -> NeutralStatements:
    """The control statements of ``path``, checked: every text has its key's word count, the first series
    every count 1..L, the others ceil(L/2)..L (:class:`NeutralStatements`)."""
    path = Path(path)
    obj = _read_json(path)
    raw = obj.get("series") if isinstance(obj, dict) else None
    if not isinstance(raw, list) or not raw or not all(isinstance(s, dict) for s in raw):
        raise DifficultyInputError(f"{path}: expected an object with 'series', a list of {{word count: text}}")
    series = []
    for i, entries in enumerate(raw):
        checked = {}
        for key, text in entries.items():
            if not (isinstance(key, str) and key.isdigit() and isinstance(text, str)) \
                    or len(text.split()) != int(key):
                raise DifficultyInputError(f"{path}: series {i}, {key!r}: the text must have exactly {key} words, "
                                           f"got {text!r}")
            checked[int(key)] = " ".join(text.split())
        series.append(checked)
    longest = max(series[0], default=0)
    for i, entries in enumerate(series):
        needed = set(range(1, longest + 1)) if i == 0 else set(range(-(-longest // 2), longest + 1))
        if not needed <= set(entries):
            raise DifficultyInputError(f"{path}: series {i} lacks the word counts "
                                       f"{sorted(needed - set(entries))}")
    return NeutralStatements(tuple(series), str(path))


# ---------------------------------------------------------------------------- assignments
def load_assignments(path: str | Path, typology: Typology) -> list[Assignment]:
    """Read assignments from a JSON list or a JSONL file of ``{"qid", "task", "categories"}``.

    Every category must be in ``typology`` (matched case-insensitively, stored with its canonical
    name); a (qid, task) may appear once. Errors name the file and the line (JSONL) or item (JSON).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        try:
            items = [(f"item {i}", obj) for i, obj in enumerate(json.loads(text))]
        except json.JSONDecodeError as exc:
            raise DifficultyInputError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    else:
        items = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append((f"line {line_no}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise DifficultyInputError(f"{path}:{line_no}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    out, seen = [], set()
    for where, obj in items:
        place = f"{path}:{where.split()[-1]}" if where.startswith("line") else f"{path}: {where}"
        if not isinstance(obj, dict) or not isinstance(obj.get("qid"), (str, int)):
            raise DifficultyInputError(f"{place}: expected an object with 'qid', 'task' and 'categories'")
        task = obj.get("task")
        if task not in TASKS:
            raise DifficultyInputError(f"{place}: task {task!r} is not one of {', '.join(TASKS)}")
        names = obj.get("categories")
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise DifficultyInputError(f"{place}: 'categories' must be a non-empty list of category names")
        canonical = []
        for name in names:
            category = typology.find(name, task)
            if category is None:
                raise DifficultyInputError(f"{place}: category {name!r} is not in typology {typology.name!r}")
            canonical.append(category)
        key = (str(obj["qid"]), task)
        if key in seen:
            raise DifficultyInputError(f"{place}: (qid {key[0]}, task {task}) appears twice")
        seen.add(key)
        out.append(Assignment(key[0], task, [(c, "") for c in dict.fromkeys(canonical)],
                              source=f"imported {path.name}"))
    return out


def given_reasons(dataset: str, source: str, typology_file, model: str | None = None,
                  stated: Mapping[str, float] | None = None) -> tuple[Typology, list[Assignment], dict]:
    """``(typology, assignments, how they were made)`` of reasons made before the run: ``source="typology"``,
    the failure typology store's latest runs of ``dataset`` by one model (:func:`reasons_from_typology_store`,
    its own categories); otherwise ``source`` is a reasons FILE against the typology of ``typology_file``
    (:func:`load_assignments`), made by ``model`` when named (its size from ``stated``, the user's
    ``--model-size``, checked as every statement is: :func:`pipeline.llm.sizes.with_stated_size`). ``how`` is
    what a result records: ``{"typology_store": report}`` or ``{"imported": FILE[, "made_by": provenance]}``."""
    if source == "typology":
        typology, assignments, report = reasons_from_typology_store(dataset, model=model)
        return typology, assignments, {"typology_store": report}
    typology = load_typology(typology_file)
    how = {"imported": str(source)}
    if model:
        from pipeline.llm.sizes import with_stated_size

        how["made_by"] = with_stated_size(Provenance(FILE_MAKER_BACKEND, model), stated).as_dict()
    return typology, load_assignments(source, typology), how


# a reasons FILE's maker: named by the user (--reasons-model), sized only by a statement (--model-size)
FILE_MAKER_BACKEND = "imported"
FILE_MAKER_ROLE = "reasons FILE's maker"


def reasons_made_by(how: Mapping | None) -> tuple[str, Provenance] | None:
    """``(role, provenance)`` of the model that made the reasons a result rests on, from the result's record
    of how they were made (:func:`given_reasons`, or an assignment made in the run): the model that
    assigned them in the run (``assigned_by``), that of the typology store's runs they were read from, or a
    reasons FILE's maker. A FILE counts as made by a model of unknown size (issue 40: a file must not open the
    gate a model's size closes) unless its maker is named and its size stated. None for records from before
    runs kept their model."""
    how = how or {}
    if how.get("assigned_by"):
        return "assigner", Provenance.from_dict(how["assigned_by"])
    if how.get("imported"):
        return FILE_MAKER_ROLE, Provenance.from_dict(how.get("made_by") or {"backend": FILE_MAKER_BACKEND,
                                                                            "model": "unnamed"})
    runs = [r for r in (how.get("typology_store") or {}).values() if isinstance(r, Mapping) and r.get("provenance")]
    return ("reasons' model (typology store)", Provenance.from_dict(runs[0]["provenance"])) if runs else None


def _run_model(run: dict) -> str:
    return run["provenance"].get("label", run["provenance"].get("model", ""))


def reasons_from_typology_store(dataset: str, store=None, model: str | None = None,
                                ) -> tuple[Typology, list[Assignment], dict]:
    """Each task's latest finished run of the failure typology (``pipeline.typology.store``) for
    ``dataset`` *made by one model*: its categories, and every query whose assignment parsed with its
    reasons in the model's order. Queries whose assignment was unparseable or failed are listed, not
    guessed. ``model`` is a run's model label; None: the model of the dataset's newest finished run.
    A task without a finished run by that model is left out and reported (``report["skipped"]``),
    so reasons from different models are never mixed in one result."""
    from pipeline.typology.store import TypologyStore, default_path

    if store is None:
        if not default_path().is_file():
            raise DifficultyInputError(f"no failure typology store at {default_path()}: run "
                                       f"`python -m pipeline typology --dataset {dataset} --task ...` first")
        with TypologyStore() as opened:
            return reasons_from_typology_store(dataset, opened, model)
    finished = store.list_runs(dataset=dataset, status="done")  # newest first
    if not finished:
        raise DifficultyInputError(f"{dataset}: the failure typology store has no finished run for this dataset")
    model = model or _run_model(finished[0])
    models = sorted({_run_model(r) for r in finished})
    if model not in models:
        raise DifficultyInputError(f"{dataset}: no finished typology run by model {model!r}; "
                                   f"models with one: {', '.join(models)}")
    by_task, assignments, report = {}, [], {}
    skipped = {}
    for task in TASKS:
        runs = [r for r in finished if r["task"] == task]
        mine = [r for r in runs if _run_model(r) == model]
        if not mine:
            if runs:
                skipped[task] = f"no finished run by {model} (its latest is by {_run_model(runs[0])})"
            continue
        run = mine[0]  # newest first
        by_task[task] = run["categories"]
        queries = store.queries(run["run_id"])
        assigned = [q for q in queries if q["status"] == "ok" and q["assigned"]]
        assignments += [_stored_assignment(q, task, run) for q in assigned]
        report[task] = {"run_id": run["run_id"], "typology": run["typology_label"],
                        "model": run["provenance"].get("label", run["provenance"].get("model")),
                        "provenance": run["provenance"],
                        "assigned": len(assigned), "not assigned": [q["qid"] for q in queries if q not in assigned]}
    name = "typology runs " + ", ".join(r["run_id"] for r in report.values())
    return Typology.from_tasks(name, by_task), assignments, {**report, "model": model, "skipped": skipped}


def _stored_assignment(query: dict, task: str, run: dict) -> Assignment:
    """A typology store query's assigned reasons (a category named twice counts once, first place)."""
    categories = {c.name: c for c in run["categories"]}
    reasons: dict[str, tuple[Category, str]] = {}
    for a in query["assigned"]:
        reasons.setdefault(a["category"], (categories.get(a["category"], Category(a["category"])),
                                           a.get("justification", "")))
    return Assignment(query["qid"], task, list(reasons.values()), query["status"],
                      f"typology run {run['run_id']}", query["raw"] or "")


def assignments_digest(assignments: Iterable[Assignment]) -> str:
    return content_digest(sorted((a.qid, a.task, list(a.categories)) for a in assignments), 12)


# ---------------------------------------------------------------------------- prompts
def with_difficulty(messages: Sequence[Message], difficulty: str, query: str | None = None) -> list[Message]:
    """The baseline ``messages`` with ``difficulty`` added on its own line to the last user message:
    right after the line holding ``query`` when given and found (so it stays in the question, before
    a trailing cue such as "Answer:"), else at the end."""
    out = [dict(m) for m in messages]
    sentence = difficulty.strip()
    for message in reversed(out):
        if message.get("role") != "user":
            continue
        lines = message["content"].rstrip().split("\n")
        at = next((i for i, line in enumerate(lines) if query and query.strip() and query.strip() in line), None)
        if at is None:
            lines.append(sentence)
        else:
            lines.insert(at + 1, sentence)
        message["content"] = "\n".join(lines)
        return out
    raise ValueError("the baseline prompt has no user message to extend")


def render_messages(messages: Sequence[Message]) -> str:
    """Chat messages as plain text, one ``[role]`` header per message."""
    return "\n".join(f"[{m['role']}]\n{m['content']}" for m in messages)


def prompt_diff(baseline: Sequence[Message], aware: Sequence[Message]) -> str:
    """The two prompts as one plain-text diff: unchanged lines start with two spaces, added lines with
    ``+ `` and removed ones with ``- `` (shown by the page as ``diff``-highlighted text, never HTML)."""
    a, b = render_messages(baseline).splitlines(), render_messages(aware).splitlines()
    lines = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            lines += [f"  {line}" for line in a[i1:i2]]
        else:
            lines += [f"- {line}" for line in a[i1:i2]] + [f"+ {line}" for line in b[j1:j2]]
    return "\n".join(lines)


def _read_json(path: Path):
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DifficultyInputError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from None
