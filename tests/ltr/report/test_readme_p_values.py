"""Every p-value the README's reproduction block prints is recomputed from the per-query archive (issue 41): on a
small study stored here and run through the reproduction's report part, and on the real archive in bench/results
where it exists (it needs the MQ2008 reproduction retrained; skipped until then)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ltr.losses import loss_label
from ltr.paper_table import GUIDE_BLOCK, README_BLOCK, current_block, markdown
from ltr.report.archive import read_archive, table_frame
from ltr.report.paired import recomputed_tests
from ltr.report.seeds import run_means, seed_tests
from ltr.store import RunStore
from tests.ltr.report.support import MODEL, build_store
from tests.ltr.support import reproduction_script

ROOT = Path(__file__).resolve().parents[3]
RESULT = ROOT / "bench" / "results" / "learndcg_mq2008_reproduction.json"


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def block_rows(block: str) -> dict[str, dict[str, str]]:
    """``{loss: {column: cell}}`` of the block's first table."""
    lines = [line for line in block.splitlines() if line.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return {cells[0]: dict(zip(head, cells)) for cells in
            ([c.strip() for c in line.strip("|").split("|")] for line in lines[1:])}


def assert_block_recomputes(block: str, archive, experiment: str, candidate: str, model: str = MODEL) -> int:
    """Every p-value cell of the block's (first) table equals the archive's recomputation; returns how many were
    checked."""
    frame = table_frame(archive, experiment, model)
    paired = recomputed_tests(frame, candidate, (10,)).set_index("loss")
    seeded = seed_tests(frame, candidate, (10,)).set_index("loss")
    # the block names a loss by its label (rmse: "RMSE (allRank + mean-grade offset)"), the archive by its name
    named = {loss_label(loss): loss for loss in paired.index}
    checked, rows = 0, {named.get(label, label): row for label, row in block_rows(block).items()}
    for loss, row in rows.items():
        if loss == candidate:
            continue
        if loss not in paired.index:  # a loss reported under a second name (no runs of its own): its twin's cells
            cells = [row[c] for c in ("t-test Holm p", "fold-level Holm p", "bootstrap 95% CI, Holm p")]
            assert any(cells == [r[c] for c in ("t-test Holm p", "fold-level Holm p", "bootstrap 95% CI, Holm p")]
                       for name, r in rows.items() if name != loss and name in paired.index), loss
            continue
        mark = "†" if paired.loc[loss, "better@10"] else "‡" if paired.loc[loss, "worse@10"] else ""
        assert row["t-test Holm p"] == _p(paired.loc[loss, "p_holm@10"]) + mark, loss
        assert row["fold-level Holm p"] == _p(seeded.loc[loss, "fold_p_holm@10"]), loss
        low, high = seeded.loc[loss, "boot_low@10"], seeded.loc[loss, "boot_high@10"]
        assert row["bootstrap 95% CI, Holm p"] == (f"[{100 * low:+.2f}, {100 * high:+.2f}], "
                                                   f"{_p(seeded.loc[loss, 'boot_p_holm@10'])}"), loss
        checked += 3
    return checked


def test_the_reproduction_block_p_values_recompute_from_its_archive(tmp_path):
    bench = reproduction_script()
    experiment = bench.EXPERIMENTS["shared"]
    with RunStore(tmp_path / "runs.sqlite") as store:
        build_store(store, data=bench.DATA_NAME, experiment=experiment)
    part, rows = bench.report_experiment(tmp_path / "runs.sqlite", experiment, tmp_path / "export")
    import pandas as pd
    from ltr.report.archive import write_archive

    path = write_archive(pd.concat(rows, ignore_index=True), bench.archive_path(tmp_path / "result.json"))
    assert path.name == "result_per_query.csv.gz"
    block = markdown({"report": {"shared": part}}, "result.json")
    # the note under the table names the stored tests, not a recomputation for a result without the archive
    definitions = part["tables"][MODEL]["seed_tests_definitions"]
    assert f"Seeds as a random effect: fold-level Holm p = the {definitions['fold']}; bootstrap = the " in block
    assert "predates" not in block
    archive = read_archive(path)
    assert assert_block_recomputes(block, archive, experiment, "learndcg") == 3 * 3
    # the stored top group is the bootstrap's; ranknet trails learndcg at every seed, so it is out
    group = part["tables"][MODEL]["top_group"]
    assert group["best"] in {"learndcg", "listnet", "neuralloss"} and "ranknet" not in group["members"]
    marked = {loss for loss, row in block_rows(block).items() if row["top group"] == "●"}
    assert marked == set(group["members"])
    # a loss reported under a second name (no runs of its own, its twin's figures) shows its twin's cells
    table = part["tables"][MODEL]
    twin = next(r for r in table["rows"] if r["loss"] == "listnet")
    table["rows"].append({**twin, "loss": "learndcg_fixed"})
    rows = block_rows(markdown({"report": {"shared": part}}, "result.json"))
    assert {c: v for c, v in rows["learndcg_fixed"].items() if c != "loss"} == \
        {c: v for c, v in rows["listnet"].items() if c != "loss"}
    # the fold-level test and the bootstrap read the same runs as the archive: its run means are the stored ones
    means = run_means(table_frame(archive, experiment, MODEL), 10)
    assert len(means) == 4 * 5 * 3


def stored_result_and_archive():
    """The stored reproduction result and its per-query archive; skips where bench/results holds none (a result
    that predates the archive needs the MQ2008 reproduction retrained)."""
    if not RESULT.is_file():
        pytest.skip("no stored reproduction result")
    result = json.loads(RESULT.read_text(encoding="utf-8"))
    archive = (result.get("archive") or {}).get("path")
    if not archive or not (RESULT.parent / archive).is_file():
        pytest.skip("the stored result has no per-query archive yet (retrain the MQ2008 reproduction)")
    return result, read_archive(RESULT.parent / archive)


def test_the_readme_p_values_recompute_from_the_stored_archive():
    result, frame = stored_result_and_archive()
    block = current_block((ROOT / "README.md").read_text(encoding="utf-8"), README_BLOCK)
    table = result["report"]["shared"]["tables"]["mlp"]
    assert re.search(r"bootstrap 95% CI", block)
    assert assert_block_recomputes(block, frame, result["settings"]["experiments"]["shared"],
                                   table["candidate"]) >= 3 * 10


def test_the_guide_p_values_recompute_from_the_stored_archive():
    """The guide's block: the tuned table and each other ranker's, every p-value recomputed from the same archive."""
    result, frame = stored_result_and_archive()
    block = current_block((ROOT / "docs" / "ltr-guide.md").read_text(encoding="utf-8"), GUIDE_BLOCK)
    checked = {}
    for section in re.split(r"(?m)^(?=\*\*MQ2008, )", block)[1:]:  # one table per part and ranker
        ranker = section.removeprefix("**MQ2008, ").split(",")[0]
        part = "tuned" if "tuned" in section.splitlines()[0] else "rankers"
        table = result["report"][part]["tables"][ranker]
        checked[(part, ranker)] = assert_block_recomputes(section, frame, result["settings"]["experiments"][part],
                                                          table["candidate"], model=ranker)
    assert set(checked) == {("tuned", "mlp")} | {("rankers", r) for r in result["report"]["rankers"]["tables"]}
    assert all(n >= 3 * 9 for n in checked.values()), checked
