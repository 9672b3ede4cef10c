"""Robust reading of LLM output that should be JSON but often is not quite.

Small models wrap JSON in prose or code fences, use single quotes, leave trailing commas, stop
mid-list, or answer with a markdown list instead. :func:`extract_json` finds the first balanced JSON
value in the text and repairs the common slips; the two readers then fall back to line-by-line
parsing ("1. **Name**: description"). Nothing here ever evaluates model output as code:
``ast.literal_eval`` only builds literals.
"""
from __future__ import annotations

import ast
import difflib
import json
import re
from dataclasses import dataclass

from pipeline.typology.categories import (MAX_NAME_CHARS, UNKNOWN_CATEGORY, Category, clean_category, dedupe,
                                          normalise_name)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_LIST_LINE = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)]|#+)\s*(.+)$")
_NAME_DESC = re.compile(r"^\**\s*(?P<name>[^:*]{2,90}?)\s*\**\s*(?::|\s-\s|\s–\s|\s—\s)\s*(?P<desc>.*)$")
NAME_KEYS = ("name", "category", "title", "label", "reason", "type")
DESC_KEYS = ("description", "desc", "definition", "explanation", "details")
JUSTIFICATION_KEYS = ("justification", "why", "because", "explanation", "rationale", "reason_text", "evidence")
MATCH_RATIO = 0.8  # difflib similarity above which a slightly misspelt category name still matches
# The prompts' JSON examples ({"name": "short category name", "description": "one sentence"}, ...): a
# small model often copies them back (measured: SmolLM2-135M "converged" on a category named
# "One sentence"); they are never categories.
PLACEHOLDER_NAMES = {"short category name", "category name", "name", "one sentence", "short reason"}


def _is_category(cat: Category | None) -> bool:
    """A usable category: not a prompt placeholder, and a name with a letter in it (outline numbers
    such as "5.1.1.1", which the 135M model produced as a whole typology, are not names)."""
    return cat is not None and _is_name(cat.key)


def _is_name(label: str) -> bool:
    """Whether a label from a model's answer names something: a letter in it, not the prompt's placeholder."""
    key = normalise_name(label)
    return key not in PLACEHOLDER_NAMES and re.search(r"[^\W\d_]", key) is not None


def _placeholder(item) -> bool:
    """An answer item that only repeats the prompt's example (``{"category": "category name", ...}``)."""
    label = _first(item, NAME_KEYS) if isinstance(item, dict) else str(item).partition(":")[0]
    return normalise_name(label) in PLACEHOLDER_NAMES


def _balanced(text: str, start: int) -> str | None:
    """The bracketed value starting at ``text[start]`` (strings respected), or None if unclosed."""
    pairs = {"[": "]", "{": "}"}
    stack, quote, escape = [], None, False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                quote = None
        elif ch in "\"'" and (ch == '"' or (i > 0 and not text[i - 1].isalnum())):
            quote = ch
        elif ch in pairs:
            stack.append(pairs[ch])
        elif ch in "]}":
            if not stack or ch != stack.pop():
                return None
            if not stack:
                return text[start:i + 1]
    return None


def _loads(candidate: str):
    for attempt in (candidate, re.sub(r",\s*([\]}])", r"\1", candidate)):
        try:
            return json.loads(attempt)
        except json.JSONDecodeError:
            pass
        try:  # single quotes, True/False/None: literals only, never code
            value = ast.literal_eval(attempt)
            if isinstance(value, (list, dict)):
                return value
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pass
    return None


def _truncated_list(text: str, start: int):
    """A list cut off mid-way (the model hit its token limit): keep the complete objects."""
    if text[start] != "[":
        return None
    last = text.rfind("}", start)
    if last == -1:
        return None
    return _loads(text[start:last + 1] + "]")


def iter_json(text: str):
    """Every JSON list or object in ``text`` (fenced blocks first), in order, lightly repaired."""
    if not text:
        return
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for source in sources:
        for match in re.finditer(r"[\[{]", source):
            block = _balanced(source, match.start())
            value = _loads(block) if block else _truncated_list(source, match.start())
            if isinstance(value, (list, dict)):
                yield value


def extract_json(text: str):
    """The first JSON list or object in ``text`` (fenced or not, lightly repaired), or None."""
    return next(iter_json(text), None)


def _first(item: dict, keys) -> str:
    lowered = {str(k).lower(): v for k, v in item.items()}
    for key in keys:
        value = lowered.get(key)
        if isinstance(value, (str, int, float)) and str(value).strip():
            return str(value)
    return ""


def _items_from_json(value) -> list:
    if isinstance(value, dict):
        for key in ("categories", "typology", "reasons", "items", "result", "answer"):
            if isinstance(value.get(key), list):
                return value[key]
        if value and all(isinstance(v, str) for v in value.values()) and not any(k in value for k in NAME_KEYS):
            return [{"name": k, "description": v} for k, v in value.items()]  # {"Name": "description"}
        return [value]
    return value if isinstance(value, list) else []


def _list_lines(text: str) -> list[tuple[str, str]]:
    """(name, rest) from markdown/numbered list lines such as ``2. **Name**: description``."""
    out = []
    for line in text.splitlines():
        m = _LIST_LINE.match(line)
        if not m:
            continue
        body = m.group(1).strip()
        nd = _NAME_DESC.match(body)
        out.append((nd.group("name"), nd.group("desc")) if nd else _sentence_item(body.strip("*")))
    return out


_REASON_LEAD = re.compile(r"^(?:this|the)\s+query\s+(?:is|was)\s+hard\s+to\s+\w+\s+because\s+(?:it\s+)?", re.I)


def _sentence_item(body: str) -> tuple[str, str]:
    """A list item written as a whole sentence (small models answer "- This query is hard to retrieve
    because it involves a complex ... question ..."): the category name is the reason's first six words
    after that lead-in, the description the whole sentence. Short items stay names as they are."""
    if len(body) <= MAX_NAME_CHARS:
        return body, ""
    reason = _REASON_LEAD.sub("", body)
    return " ".join(reason.split()[:6]).strip(" ,.;:"), body


def parse_categories(text: str, max_categories: int | None = None) -> list[Category]:
    """Categories from a model's typology answer (JSON first, then list lines); [] when none."""
    value = extract_json(text)
    cats = []
    if value is not None:
        for item in _items_from_json(value):
            if isinstance(item, dict):
                cats.append(clean_category(_first(item, NAME_KEYS), _first(item, DESC_KEYS)))
            elif isinstance(item, str):
                name, _, desc = item.partition(":")
                cats.append(clean_category(name, desc))
    cats = [c for c in cats if _is_category(c)]
    if not cats:
        cats = [c for c in (clean_category(name, desc) for name, desc in _list_lines(text)) if _is_category(c)]
    cats = dedupe(cats)
    return cats[:max_categories] if max_categories else cats


def match_category(label, typology: list[Category]) -> Category | None:
    """The typology category a model's label refers to: its 1-based number, its name (normalised),
    a close spelling (difflib ratio >= 0.8), or a label that contains exactly one category name."""
    text = str(label).strip()
    number = re.fullmatch(r"\(?#?(\d{1,2})[.)]?\)?(?:\s*[.:-].*)?", text)
    if number and 1 <= int(number.group(1)) <= len(typology):
        return typology[int(number.group(1)) - 1]
    key = normalise_name(re.sub(r"^\(?\d{1,2}[.)]\s*", "", text))
    if not key:
        return None
    by_key = {c.key: c for c in typology}
    if key in by_key:
        return by_key[key]
    close = difflib.get_close_matches(key, list(by_key), n=1, cutoff=MATCH_RATIO)
    if close:
        return by_key[close[0]]
    contained = [c for c in typology if re.search(rf"\b{re.escape(c.key)}\b", key)]
    return contained[0] if len(contained) == 1 else None


@dataclass(frozen=True)
class AssignmentReading:
    """What :func:`read_assignment` read from a model's assignment answer.

    ``found``: the typology's categories it names, with justifications, most important first;
    ``parsed``: whether anything in it could be read as a list of categories; ``unknown``: the names
    it gives that are no category of the typology (a model without a grammar constraint invents
    them: "Lack of context"), in order, without repeats. An answer with such a name is no evidence
    that the typology's other categories do not apply (the invented name may stand for one of
    them), so the assignment records them instead of reading "nothing else assigned".
    ``unreadable``: how many items of its JSON list name nothing at all (``7`` or ``"7"`` beyond the
    typology's numbers, ``{}``, ``{"category": ""}``, ``null``, a nested list); any such item makes
    the answer unparseable (``parsed`` False): it says neither which categories apply nor that none does."""
    found: list[tuple[Category, str]]
    parsed: bool
    unknown: list[str]
    unreadable: int = 0


def read_assignment(text: str, typology: list[Category]) -> AssignmentReading:
    """Read a model's assignment answer (:class:`AssignmentReading`).

    Read in turn: a JSON list (of objects, names or numbers), list lines ("1. Name: why"), and an
    answer of bare category numbers ("2, 1", as small models give). ``parsed`` is False when nothing
    in the answer could be read as a list of categories (the query is then recorded as unparseable,
    not as "no reason applies"). An explicit empty JSON list is a parsed answer with no reason; a
    JSON list with an item that names nothing (``[7]``, ``["7"]``, ``[{}]``, ``[{"category": 7}]``,
    ``[{"category": ""}]``) is not parsed, even beside readable items (the model meant something the
    reading cannot see, so "not assigned" would be a guess), unless the answer is read from its list
    lines instead (the JSON was then a passage marker the model echoed, such as "[12]").
    Names outside the typology are collected from the JSON items only (an item's name, or a string
    item's text before ":"): list lines of prose are not category names. The prompt's own
    placeholder ("category name") is no name at all.
    """
    # Prefer a value with objects or strings: a bare "[1]" is more often a passage marker the model
    # echoed from its context than an answer.
    candidates = list(iter_json(text))
    value = next((v for v in candidates if any(isinstance(i, (dict, str)) for i in _items_from_json(v))),
                 candidates[0] if candidates else None)
    found: list[tuple[Category, str]] = []
    unknown: list[str] = []
    unreadable = 0
    parsed = False
    if value is not None:
        items = _items_from_json(value)
        # a list of nothing but the prompt's placeholder copied back is no answer, not "none applies"
        parsed = isinstance(items, list) and not (items and all(_placeholder(i) for i in items))
        for item in items:
            label = ""
            if isinstance(item, dict):
                label = _first(item, NAME_KEYS + ("id", "number"))
                cat = match_category(label, typology)
                why = _first(item, JUSTIFICATION_KEYS)
            elif isinstance(item, (str, int)):
                label, _, why = str(item).partition(":")
                cat = match_category(label, typology)
                label = label if isinstance(item, str) else ""  # an out-of-range number names nothing
            else:
                cat, why = None, ""
            if cat is not None:
                found.append((cat, " ".join(why.split())))
            elif _is_name(label):
                unknown.append(" ".join(label.split())[:MAX_NAME_CHARS * 2])
            elif not _placeholder(item):  # the prompt's example copied back is skipped, not unreadable
                unreadable += 1
    read_from_lines = False
    if not found:
        for name, rest in _list_lines(text):
            cat = match_category(name, typology)
            if cat is not None:
                found.append((cat, " ".join(rest.split())))
                parsed = read_from_lines = True
    if not found and not re.search(r"[^\W\d_]", text or ""):  # no word at all: "2, 1" names categories by number
        found = [(typology[k - 1], "") for k in parse_numbers(text, len(typology))]
    seen, unique = set(), []
    for cat, why in found:
        if cat.key not in seen:
            seen.add(cat.key)
            unique.append((cat, why))
    invented = list(dict.fromkeys(unknown))
    unreadable = 0 if read_from_lines else unreadable
    return AssignmentReading(unique, (parsed or bool(unique) or bool(invented)) and not unreadable, invented,
                             unreadable)


def reread_status(stored: str | None, raw: str | None, categories: list[Category]) -> str | None:
    """A stored assignment's status as today's reader reads its answer: a stored "ok" (or
    "unknown_category") whose answer has JSON items that name nothing (:attr:`AssignmentReading.unreadable`)
    is ``unparseable`` (stores written before issue 33 kept ``[7]``, ``[{}]``, ... as "ok, nothing
    assigned"); any other status stays (an answer an older reader read some other way keeps its
    reading). An empty ``raw`` (reasons not from a model's answer) is never re-read."""
    if stored in ("ok", UNKNOWN_CATEGORY) and raw and categories:
        reading = read_assignment(raw, categories)
        if reading.unreadable and not reading.parsed:
            return "unparseable"
    return stored


def parse_assignment(text: str, typology: list[Category]) -> tuple[list[tuple[Category, str]], bool]:
    """``(found, parsed)`` of :func:`read_assignment` (the categories named, whether anything was read)."""
    reading = read_assignment(text, typology)
    return reading.found, reading.parsed


def parse_numbers(text: str, n_categories: int) -> list[int]:
    """1-based category numbers in the order given, valid and without repeats (a decimal such as
    "3.5" is no number of a category)."""
    numbers = [int(m) for m in re.findall(r"(?<![\d.])(\d{1,2})(?![\d.]\d)", text or "")]
    return list(dict.fromkeys(k for k in numbers if 1 <= k <= n_categories))


def parse_reason(text: str, max_chars: int = 300) -> str:
    """A concise reason: the answer's first non-empty line, label prefixes and quotes removed."""
    for line in (text or "").splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d[.)])?\s*(?:\**(?:reason|answer|explanation)\**\s*:)?\s*", "", line,
                      flags=re.I).strip(" \"'*")
        if line:
            return line[:max_chars]
    return ""
