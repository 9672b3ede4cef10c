"""The failure typology's domain model -- :class:`Category`, :class:`Typology`, :class:`Assignment` --
used by induction, assignment, annotation and difficulty-aware prompting alike; names,
normalisation and the typology JSON files.

A category is a name and a one-sentence description. Two names are the same category when their
:func:`normalise_name` forms are equal (case, punctuation, spacing and a leading article ignored);
that is what "the category set is unchanged" means in induction. A :class:`Typology` holds each
task's categories; an :class:`Assignment` is one hard query's reasons (categories of a typology,
most important first, each with a justification).

The study's ten categories ship as ``study_typology.json`` beside this module and load with
:func:`study_typology` (per task) or :func:`load_typology` (a :class:`Typology`). A typology file is
JSON, either one task's list::

    [{"name": "...", "description": "..."}, ...]

or several tasks at once::

    {"name": "study", "tasks": {"h2r": [...], "h2g": [...], "h2j": [...]}}
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping, Sequence

TASKS = ("h2r", "h2g", "h2j")
TASK_TITLES = {"h2r": "hard to retrieve", "h2g": "hard to generate", "h2j": "hard to judge"}
UNKNOWN_CATEGORY = "unknown_category"  # an assignment's status when its answer names categories outside the typology
STUDY_FILE = Path(__file__).with_name("study_typology.json")
MAX_NAME_CHARS = 80
MAX_DESCRIPTION_CHARS = 400


class TypologyError(ValueError):
    """A typology file or value is unusable; the message names the file and the problem."""


@dataclass(frozen=True)
class Category:
    name: str
    description: str = ""

    @property
    def key(self) -> str:
        return normalise_name(self.name)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Typology:
    """Each task's categories, in order (only tasks that have some, in :data:`TASKS` order), under a
    name that says where they came from (the file's ``name``, "typology runs ...")."""
    name: str
    tasks: dict[str, tuple[Category, ...]]

    @classmethod
    def from_tasks(cls, name: str, by_task: Mapping[str, Sequence[Category]]) -> "Typology":
        return cls(name, {task: tuple(by_task[task]) for task in TASKS if by_task.get(task)})

    @property
    def categories(self) -> tuple[Category, ...]:
        """Every task's categories, task by task."""
        return tuple(c for cats in self.tasks.values() for c in cats)

    def for_task(self, task: str) -> tuple[Category, ...]:
        return self.tasks.get(task, ())

    def find(self, name: str, task: str | None = None) -> Category | None:
        """The category called ``name`` (normalised; that task's, when two tasks share a name)."""
        key = normalise_name(name)
        found = [(t, c) for t, cats in self.tasks.items() for c in cats if c.key == key]
        return next((c for t, c in found if t == task), found[0][1] if found else None)

    def as_dict(self) -> dict:
        """The typology file's layout: ``{"name", "tasks": {task: [{"name", "description"}, ...]}}``."""
        return {"name": self.name, "tasks": {t: [c.as_dict() for c in cats] for t, cats in self.tasks.items()}}


@dataclass(frozen=True)
class Assignment:
    """One hard query's reasons in one task: categories of a typology, most important first, each with
    the model's justification ("" when there is none: imported or hand-made reasons).

    ``status`` is "ok", or "unparseable" / "failed" when no answer could be read (recorded, never read
    as "no reason applies"), or "unknown_category" when the answer names categories that are not in
    the typology (kept in ``unknown``, beside whatever categories of the typology it also named: its
    "not assigned" says nothing, so it is never a true negative); ``source`` says where the reasons
    came from ("imported FILE", "llm:<label>", "typology run ID"); ``raw`` is the model's answer as given."""
    qid: str
    task: str
    reasons: list[tuple[Category, str]]
    status: str = "ok"
    source: str = ""
    raw: str = ""
    unknown: tuple[str, ...] = ()

    @property
    def categories(self) -> tuple[str, ...]:
        """The reasons' category names, most important first."""
        return tuple(c.name for c, _ in self.reasons)

    def as_dict(self) -> dict:
        return {"qid": self.qid, "task": self.task, "status": self.status, "source": self.source, "raw": self.raw,
                "reasons": [{"category": c.name, "justification": j} for c, j in self.reasons],
                "unknown_categories": list(self.unknown)}


def normalise_name(name: str) -> str:
    """Lower case, punctuation and markdown removed, spaces collapsed, a leading article dropped."""
    text = re.sub(r"[^\w\s]", " ", str(name).lower().replace("_", " "))
    text = " ".join(text.split())
    return re.sub(r"^(the|a|an) ", "", text)


def clean_category(name: str, description: str = "") -> Category | None:
    """A category from raw model or file text, or None when the name is empty or absurdly long."""
    name = " ".join(str(name).replace("*", " ").replace("`", " ").split()).strip(" -:.#\"'")
    description = " ".join(str(description or "").split())[:MAX_DESCRIPTION_CHARS]
    if not normalise_name(name) or len(name) > MAX_NAME_CHARS:
        return None
    return Category(name, description)


def dedupe(categories) -> list[Category]:
    """First occurrence of each normalised name wins (order kept)."""
    seen, out = set(), []
    for cat in categories:
        if cat is not None and cat.key not in seen:
            seen.add(cat.key)
            out.append(cat)
    return out


def category_keys(categories) -> frozenset[str]:
    return frozenset(c.key for c in categories)


def _categories_from_json(value, where: str) -> list[Category]:
    if not isinstance(value, list) or not value:
        raise TypologyError(f"{where}: expected a non-empty list of categories")
    out = []
    for i, item in enumerate(value, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise TypologyError(f"{where}: category {i} needs a string 'name' (and a 'description')")
        cat = clean_category(item["name"], item.get("description", ""))
        if cat is None:
            raise TypologyError(f"{where}: category {i} has an empty or over-long name")
        if cat.key in {c.key for c in out}:
            raise TypologyError(f"{where}: category {i} ({cat.name!r}) repeats an earlier name")
        out.append(cat)
    return out


def load_typology_file(path: str | Path, task: str | None = None) -> dict[str, list[Category]]:
    """``{task: [Category, ...]}`` from a typology JSON file (one task's list needs ``task``)."""
    path = Path(path)
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TypologyError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise TypologyError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from exc
    if isinstance(value, list):
        if task is None:
            raise TypologyError(f"{path}: a single list of categories needs the task it belongs to")
        return {task: _categories_from_json(value, str(path))}
    if not isinstance(value, dict) or not isinstance(value.get("tasks"), dict):
        raise TypologyError(f"{path}: expected a list of categories or an object with 'tasks'")
    unknown = set(value["tasks"]) - set(TASKS)
    if unknown:
        raise TypologyError(f"{path}: unknown task(s) {sorted(unknown)}; tasks are {', '.join(TASKS)}")
    out = {t: _categories_from_json(cats, f"{path} [{t}]") for t, cats in value["tasks"].items()}
    if task is not None and task not in out:
        raise TypologyError(f"{path}: no categories for task {task}")
    return out


def study_typology() -> dict[str, list[Category]]:
    """The study's ten categories (three for H2R, three for H2G, four for H2J)."""
    return load_typology_file(STUDY_FILE)


def load_typology(path: str | Path = STUDY_FILE) -> Typology:
    """A typology JSON file of several tasks as a :class:`Typology` (the study's ten categories by
    default), named by the file's ``name`` (else its stem); :class:`TypologyError` names the file."""
    path = Path(path)
    by_task = load_typology_file(path)  # a readable file of several tasks from here on
    return Typology.from_tasks(str(json.loads(path.read_text(encoding="utf-8")).get("name", path.stem)), by_task)


def resolve_typology(source: str, task: str) -> tuple[str, list[Category]]:
    """``"study"`` or a JSON file path -> (label, the task's categories)."""
    if source == "study":
        return "study (SIGIR 2026)", study_typology()[task]
    return str(source), load_typology_file(source, task)[task]
