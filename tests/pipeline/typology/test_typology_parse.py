"""Reading JSON-ish model output: typologies, assignments, reasons; the study's typology file."""
from __future__ import annotations

import json

import pytest

from pipeline.typology.categories import (Category, TypologyError, load_typology_file, normalise_name,
                                          resolve_typology, study_typology)
from pipeline.typology.parse import extract_json, match_category, parse_assignment, parse_categories, parse_reason

TYPOLOGY = [Category("Numerical data requirements", "numbers"), Category("Ambiguous subject references", "vague"),
            Category("Specific product terminology", "brands")]


def test_normalise_name():
    assert normalise_name("**The Ambiguous-Subject  references.**") == "ambiguous subject references"
    assert normalise_name("An  Answer") == "answer"
    assert normalise_name("???") == ""


@pytest.mark.parametrize("text", [
    '[{"name": "Ambiguity", "description": "vague"}, {"name": "Numbers", "description": "figures"}]',
    'Sure! Here is the list:\n```json\n[{"name": "Ambiguity", "description": "vague"},\n'
    ' {"name": "Numbers", "description": "figures"},]\n```\nHope this helps.',
    "[{'name': 'Ambiguity', 'description': 'vague'}, {'name': 'Numbers', 'description': 'figures'}]",
    '{"categories": [{"category": "Ambiguity", "definition": "vague"}, {"title": "Numbers", "desc": "figures"}]}',
    '{"Ambiguity": "vague", "Numbers": "figures"}',
    '[{"name": "Ambiguity", "description": "vague"}, {"name": "Numbers", "description": "figures"}, {"name": "Tru',
    "1. **Ambiguity**: vague\n2. **Numbers**: figures\n",
    "- Ambiguity - vague\n- Numbers - figures",
])
def test_parse_categories_accepts_common_shapes(text):
    cats = parse_categories(text)
    assert [(c.name, c.description) for c in cats] == [("Ambiguity", "vague"), ("Numbers", "figures")]


def test_parse_categories_dedupes_caps_and_rejects_garbage():
    text = json.dumps([{"name": n, "description": ""} for n in ("A one", "a one!", "B two", "C three", "")])
    assert [c.name for c in parse_categories(text)] == ["A one", "B two", "C three"]
    assert [c.name for c in parse_categories(text, max_categories=2)] == ["A one", "B two"]
    assert parse_categories("I cannot help with that.") == []
    copied = ('1. False Dichotomy Fallacy\n2. One Sentence\n```json\n[{"name": "short category name", '
              '"description": "one sentence"}]\n```')  # seen from SmolLM2-135M on DL19
    assert [c.name for c in parse_categories(copied)] == ["False Dichotomy Fallacy"]  # "One Sentence": the placeholder
    assert parse_categories("") == []
    assert parse_categories('[{"name": "' + "x" * 200 + '"}]') == []
    assert extract_json("__import__('os').system('echo pwned')") is None  # literals only, never code


def test_match_category():
    assert match_category("2", TYPOLOGY) == TYPOLOGY[1]
    assert match_category("3. Specific product terminology", TYPOLOGY) == TYPOLOGY[2]
    assert match_category("numerical data requirement", TYPOLOGY) == TYPOLOGY[0]  # close spelling
    assert match_category("**Ambiguous Subject References**", TYPOLOGY) == TYPOLOGY[1]
    assert match_category("7", TYPOLOGY) is None
    assert match_category("weather", TYPOLOGY) is None


def test_parse_assignment_shapes_and_status():
    found, ok = parse_assignment('[{"category": "Numerical data requirements", "justification": "asks for a price"},'
                                 ' {"category": "2", "justification": "which jaguar?"},'
                                 ' {"category": "Unknown thing", "justification": "x"},'
                                 ' {"category": "numerical data requirements", "justification": "dup"}]', TYPOLOGY)
    assert ok and [(c.name, j) for c, j in found] == [("Numerical data requirements", "asks for a price"),
                                                      ("Ambiguous subject references", "which jaguar?")]
    assert parse_assignment("[]", TYPOLOGY) == ([], True)  # an explicit "none applies"
    found, ok = parse_assignment("1. Ambiguous subject references: the word has two senses\n", TYPOLOGY)
    assert ok and [(c.name, j) for c, j in found] == [("Ambiguous subject references", "the word has two senses")]
    assert parse_assignment('["Specific product terminology: brand names"]', TYPOLOGY)[0][0][1] == "brand names"
    assert parse_assignment("The query is hard because it is hard.", TYPOLOGY) == ([], False)
    echoed = '[1] (grade 0) a passage\n[{"category": "3", "justification": "brand"}]'
    assert [c.name for c, _ in parse_assignment(echoed, TYPOLOGY)[0]] == ["Specific product terminology"]
    assert [c.name for c, _ in parse_assignment("[1, 3]", TYPOLOGY)[0]] == ["Numerical data requirements",
                                                                          "Specific product terminology"]


def test_parse_reason():
    assert parse_reason("Reason: The query needs a number.\nMore text") == "The query needs a number."
    assert parse_reason("\n\n  **Answer:** \"ambiguous term\"") == "ambiguous term"
    assert parse_reason("") == "" and len(parse_reason("x" * 1000)) == 300


def test_study_typology_has_the_ten_categories():
    study = study_typology()
    assert {t: len(c) for t, c in study.items()} == {"h2r": 3, "h2g": 3, "h2j": 4}
    assert [c.name for c in study["h2g"]] == ["Need for recent information", "Accurate technical knowledge",
                                             "Risk of misinformation"]
    assert all(c.description for cats in study.values() for c in cats)
    label, cats = resolve_typology("study", "h2j")
    assert "study" in label and cats[3].name == "Absence of relevant passage context"


def test_typology_file_errors(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('[{"name": "A", "description": "a"}]')
    assert load_typology_file(path, "h2r") == {"h2r": [Category("A", "a")]}
    with pytest.raises(TypologyError, match="needs the task"):
        load_typology_file(path)
    path.write_text('[{"name": "A"},\n {"name": "a."}]')
    with pytest.raises(TypologyError, match="category 2 .* repeats"):
        load_typology_file(path, "h2r")
    path.write_text('{"tasks": {"h2x": []}}')
    with pytest.raises(TypologyError, match="unknown task"):
        load_typology_file(path)
    path.write_text('{"tasks": {"h2r": [}')
    with pytest.raises(TypologyError, match=r"t.json:1: invalid JSON"):
        load_typology_file(path)
    with pytest.raises(TypologyError, match="cannot read"):
        load_typology_file(tmp_path / "absent.json", "h2r")


def test_sentence_list_items_become_named_categories():
    """The embedded 135M model answers the typology prompt with whole-sentence list items (seen in
    tests/pipeline/typology/test_typology_embedded.py's run): each becomes a category named by its reason's first
    words."""
    text = ("The list of reasons for the failure category is:\n\n"
            "- This query is hard to retrieve because it involves a complex and technical question that "
            "requires a deep understanding of the topic and the ability to analyze information.\n"
            "- This query is hard to retrieve because it involves a complex and technical question that "
            "requires a deep understanding of the topic and the ability to analyze information.\n"
            "- Ambiguous subject: the query names no single entity\n")
    cats = parse_categories(text)
    assert [c.name for c in cats] == ["involves a complex and technical question", "Ambiguous subject"]
    assert cats[0].description.startswith("This query is hard to retrieve because")


def test_prompt_placeholders_and_outline_numbers_are_not_categories():
    """Two answers SmolLM2-135M gave on DL20 (stored raw answers, abridged): the prompt's JSON example
    copied back ("One sentence", on which a run had "converged") and a typology of outline numbers.
    Neither holds a category, so the round is unparseable instead of a typology."""
    echo = ('This list contains 8 general failure categories:\n\n'
            '- "Short category name" - This category is a list of 8 general failure categories.\n'
            '- "One sentence" - This sentence is a list of 8 general failure categories.\n'
            '- "One sentence" - This sentence is a list of 8 general failure categories.\n')
    assert parse_categories(echo) == []
    outline = "1. 2.1.1.1: text\n2. 5.1.1.1: more text\n3. 9.1.1.1 - even more\n"
    assert parse_categories(outline) == []
    mixed = echo + "- Ambiguous entity: the query names two things\n"
    assert [c.name for c in parse_categories(mixed)] == ["Ambiguous entity"]
