"""Failure categories and typologies: names, descriptions, normalisation, JSON import.

A typology is a task's list of :class:`Category` (name + one-sentence description). Two names are
the same category when their :func:`normalise_name` forms are equal (case, punctuation, spacing and a
leading article ignored); that is what "the category set is unchanged" means in induction.

The study's ten categories ship as ``study_typology.json`` beside this module and load with
:func:`study_typology`. A typology file is JSON, either one task's list::

    [{"name": "...", "description": "..."}, ...]

or several tasks at once::

    {"name": "study", "tasks": {"h2r": [...], "h2g": [...], "h2j": [...]}}
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

TASKS = ("h2r", "h2g", "h2j")
TASK_TITLES = {"h2r": "hard to retrieve", "h2g": "hard to generate", "h2j": "hard to judge"}
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


def resolve_typology(source: str, task: str) -> tuple[str, list[Category]]:
    """``"study"`` or a JSON file path -> (label, the task's categories)."""
    if source == "study":
        return "study (SIGIR 2026)", study_typology()[task]
    return str(source), load_typology_file(source, task)[task]
