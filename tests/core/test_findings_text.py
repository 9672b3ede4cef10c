"""The findings commands' text names each part (issue 40, the real DL19 study): a part's scope longer than
30 characters went after its figures and was cut off the 100-column line, so four of the eight DL19
configurations (``bm25 | text-davinci-003 | binary`` ...) and every structure_stable pair printed a verdict
and figures without saying whose."""
from __future__ import annotations

from core.findings import SCOPE_COLUMNS, TEXT_COLUMNS, Finding, Part, finding_lines, one_line, short_scopes

SHOWN = "vs -0.1 to +0.1: H2R ∩ H2G (incl. H2J) 0 in, 0 out of 43 [-0.0587, +0.0587]: holds; H2R ∩ H2J ..."


def _part(scope: str) -> Part:
    return Part(scope, {}, "holds", "the reason", {"n": 43, "shown": SHOWN})


def test_every_part_line_leads_with_what_tells_it_from_the_others():
    configs = [f"dl19 · {r} | {g} | llama-3.3-70b | {s}" for r in ("bm25", "tasb")
               for g in ("gpt-4o-mini", "text-davinci-003") for s in ("binary", "graded")]
    labels = [c.split(" · ")[1] for c in configs[::2]]  # the binary setup of each retriever and generator
    pairs = [f"dl19 · setup: {c} → graded" for c in labels]  # the second by the component it changes
    for scopes in (configs, pairs):
        finding = Finding("claim", "claim", "paper", "holds", "why", [_part(s) for s in scopes])
        lines = finding_lines(finding)[1:]
        assert len(lines) == len(scopes) and max(map(len, lines)) <= TEXT_COLUMNS
        for line, short in zip(lines, short_scopes(scopes)):
            assert line.startswith(f"  {one_line(short, SCOPE_COLUMNS)}: holds · n = 43 · vs -0.1"), line
    # what differs, with the separators it had: a pair of configurations keeps its arrow
    assert short_scopes(pairs)[1] == "setup: bm25 | text-davinci-003"
    long = [f"dl19 · {c.split(' · ')[1]} → {c.split(' · ')[1]}" for c in configs]  # cut to its columns, marked
    assert finding_lines(Finding("c", "c", "p", "holds", "why", [_part(s) for s in long]))[3].startswith(
        "  bm25 | text-davinci-003 | binary → bm25 | text-davinci-003…: holds · n = 43 · ")
