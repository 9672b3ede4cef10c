"""The control arms' sentence (issue 40 item 6): a grammatical, neutral statement of the difficulty sentence's
length, never a cut fragment ("This query requires numerical data." became "Read the query and the."); and a
reasons FILE's maker (item 7), of unknown size unless named and stated."""
from __future__ import annotations

import json

import pytest

from pipeline.prompting import difficulty

SHIPPED = difficulty.load_templates()


@pytest.mark.parametrize("words", range(1, 61))
def test_every_length_gets_whole_sentences_of_exactly_that_many_words(words):
    statements = difficulty.load_statements()
    text = statements.statement(words)
    assert len(text.split()) == words
    sentences = [s for s in text.split(". ") if s]
    assert text.endswith(".") and all(s[0].isupper() for s in sentences)  # whole sentences, each capitalised
    assert "difficult" not in text.lower() and "ambigu" not in text.lower()


def test_the_shipped_difficulty_sentences_get_statements_not_fragments():
    statements = difficulty.load_statements()
    assert statements.matching("This query requires numerical data.") == "This query is in English."
    for sentence in SHIPPED.sentences.values():
        control = statements.matching(sentence)
        assert len(control.split()) == len(sentence.split()) and control != sentence
        assert control in statements.series[0].values()  # one whole statement up to 12 words


def test_a_statement_file_whose_counts_are_wrong_is_refused(tmp_path):
    bad = tmp_path / "s.json"
    bad.write_text(json.dumps({"series": [{"1": "Noted.", "2": "Three words here."}]}))
    with pytest.raises(difficulty.DifficultyInputError, match="exactly 2 words"):
        difficulty.load_statements(bad)
    bad.write_text(json.dumps({"series": [{"1": "Noted.", "3": "Query shown above."}]}))
    with pytest.raises(difficulty.DifficultyInputError, match=r"lacks the word counts \[2\]"):
        difficulty.load_statements(bad)


def test_a_reasons_file_is_made_by_a_model_of_unknown_size_unless_named_and_stated(tmp_path):
    reasons = tmp_path / "r.jsonl"
    reasons.write_text(json.dumps({"qid": "1", "task": "h2r", "categories": ["Specific or niche topics"]}) + "\n")
    _, _, how = difficulty.given_reasons("dl19", str(reasons), difficulty_typology())
    role, maker = difficulty.reasons_made_by(how)
    assert role == difficulty.FILE_MAKER_ROLE and "unknown size" in maker.evidence_gate
    _, _, how = difficulty.given_reasons("dl19", str(reasons), difficulty_typology(), "my-model", {"my-model": 8.0})
    maker = difficulty.reasons_made_by(how)[1]
    assert (maker.model, maker.parameters_b, maker.evidence_gate) == ("my-model", 8.0, "")
    with pytest.raises(ValueError, match="0.78B"):  # a statement is checked against the published sizes
        difficulty.given_reasons("dl19", str(reasons), difficulty_typology(), "flan-t5-large", {"flan-t5-large": 70.0})


def difficulty_typology():
    from pipeline.typology.categories import STUDY_FILE

    return STUDY_FILE
