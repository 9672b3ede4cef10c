"""The README's MQ2008 reproduction table is generated from the stored result (ltr.paper_table), never typed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ltr.paper_table import END, current_block, markdown, sync_block

ROOT = Path(__file__).resolve().parents[2]
RESULT = ROOT / "bench" / "results" / "learndcg_mq2008_reproduction.json"


def planted_result() -> dict:
    rows = [{"loss": "learndcg(normalisation=standard)", "ndcg@1": 0.66, "seed_sd@1": 0.004, "ndcg@3": 0.70,
             "seed_sd@3": 0.003, "ndcg@5": 0.74, "seed_sd@5": 0.002, "ndcg@10": 0.785, "seed_sd@10": 0.001},
            {"loss": "neuralloss", "ndcg@1": 0.64, "seed_sd@1": None, "ndcg@3": 0.69, "seed_sd@3": None,
             "ndcg@5": 0.73, "seed_sd@5": None, "ndcg@10": 0.7711, "seed_sd@10": None, "diff@10": 0.0139,
             "p_holm@10": 0.0004, "better@10": True, "worse@10": False},
            {"loss": "listnet", "ndcg@1": 0.65, "ndcg@3": 0.69, "ndcg@5": 0.735, "ndcg@10": 0.78, "diff@10": 0.005,
             "p_holm@10": 0.21, "better@10": False, "worse@10": False}]
    return {"settings": {"workers": 1, "torch_threads": "1"},
            "timing": {"shared": {"wall_seconds": 600.0, "cpu_seconds": 540.0, "commit": "abcdef0123456789"}},
            "report": {"shared": {"tables": {"mlp": {"configuration": "epochs=100 · seeds=0,1,2", "rows": rows}},
                                  "findings": {"findings": {"learndcg_highest": {
                                      "verdict": "does not hold", "reason": "at @1 and @10",
                                      "parts": [{"scope": "mq2008 / mlp · NDCG@1", "reason": "ranknet above"},
                                                {"scope": "mq2008 / mlp · NDCG@10", "reason": "listnet not below"}]},
                                      "theta_d_fold_specific": {"verdict": "inconclusive", "reason": "one seed",
                                                                "parts": [{"scope": "mq2008 / mlp",
                                                                           "reason": "one seed"}]}}}}}}


def test_the_table_reads_every_figure_from_the_result_and_the_paper_from_the_claims_file():
    text = markdown(planted_result(), "bench/results/x.json")
    lines = text.splitlines()
    assert lines[0].startswith("<!-- mq2008-reproduction:start") and lines[-1] == END
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| loss")]
    # sorted by NDCG@10, x 100, mean ± seed sd, the paper's figure where the paper gives one (ltr/paper_claims.json)
    assert rows[0] == "| learndcg(normalisation=standard) | 66.00 ± 0.40 | 70.00 ± 0.30 | 74.00 ± 0.20 | 78.50 ± 0.10 | 79.03 | — | — |"
    assert rows[1] == "| listnet | 65.00 | 69.00 | 73.50 | 78.00 | — | +0.50 | 0.210 |"
    assert rows[2] == "| neuralloss | 64.00 | 69.00 | 73.00 | 77.11 | 77.07 | +1.39 | < 0.001† |"
    # the verdicts: the NDCG@10 parts of a claim tested per cut-off (the paper's figures are NDCG@10), else every part
    assert "- `learndcg_highest`: **does not hold**. mq2008 / mlp · NDCG@10: listnet not below." in lines
    assert "- `theta_d_fold_specific`: **inconclusive**. mq2008 / mlp: one seed." in lines
    assert "shared 10.0 min wall, 9.0 min CPU" in text and "abcdef0123" in text
    assert "*The other rankers at the shared hyper-parameters:* not run." in lines


def test_sync_replaces_only_the_marked_block():
    block = markdown(planted_result(), "r.json")
    text = sync_block("# Title\n\nintro\n", block)
    assert text.startswith("# Title\n\nintro\n\n<!-- mq2008-reproduction:start") and current_block(text) == block
    again = sync_block(text + "\n## After\n", markdown({}, "r.json"))
    assert current_block(again) == markdown({}, "r.json") and again.endswith("\n## After\n")
    assert again.startswith("# Title\n\nintro\n\n")


def test_the_readme_block_is_what_the_stored_result_gives():
    if not RESULT.is_file():
        pytest.skip(f"{RESULT.relative_to(ROOT)} is not stored")
    result = json.loads(RESULT.read_text(encoding="utf-8"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert current_block(readme) == markdown(result, "bench/results/learndcg_mq2008_reproduction.json"), (
        "README's reproduction table differs from the stored result: rerun bench/learndcg_mq2008_reproduction.py "
        "--parts report --readme README.md")
