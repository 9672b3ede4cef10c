"""The per-query archive: every compared run's per-query NDCG in a deterministic gzip CSV, from which the table's
p-values are recomputed without the run store (issue 41)."""
from __future__ import annotations

import gzip

import pandas as pd
import pytest

from ltr.report.archive import ArchiveError, archive_bytes, archive_rows, read_archive, table_frame, write_archive
from ltr.report.paired import configuration_runs, per_query_frame, significance_table, recomputed_tests
from tests.ltr.report.support import DATA, MODEL


def _archive(store, tmp_path):
    runs, configuration, _ = configuration_runs(store, DATA, MODEL)
    rows = archive_rows(per_query_frame(store, runs), experiment="e", model=MODEL, configuration=configuration)
    return write_archive(rows, tmp_path / "per_query.csv.gz"), rows


def test_every_p_value_of_the_table_recomputes_from_the_archive(small_store, tmp_path):
    store, _ = small_store
    table = significance_table(store, DATA, MODEL, holm=True).set_index("loss")
    path, _ = _archive(store, tmp_path)
    archive = read_archive(path)
    assert set(archive["run_id"]) == {f"{loss}-{f}-{s}" for loss in ("learndcg", "neuralloss", "ranknet", "listnet")
                                      for f in range(1, 6) for s in range(3)}
    assert len(archive) == 4 * 5 * 3 * 20 and (archive["n_relevant"] == 0).sum() == 4 * 5 * 3 * 3
    again = recomputed_tests(table_frame(archive, "e", MODEL), "learndcg").set_index("loss")
    assert sorted(again.index) == sorted(b for b in table.index if b != "learndcg")
    for loss in again.index:
        for k in (1, 3, 5, 10):
            for column in (f"diff@{k}", f"p@{k}", f"p_holm@{k}", f"pairs@{k}"):
                assert again.loc[loss, column] == pytest.approx(table.loc[loss, column], rel=1e-12), (loss, column)
            assert again.loc[loss, f"better@{k}"] == table.loc[loss, f"better@{k}"]
    # both outcomes are reached: ranknet trails (the candidate significantly better), listnet does not differ
    assert again.loc["ranknet", "better@10"] and not again.loc["listnet", "better@10"]


def test_the_archive_bytes_are_deterministic(small_store, tmp_path):
    store, _ = small_store
    path, rows = _archive(store, tmp_path)
    first = path.read_bytes()
    shuffled = rows.sample(frac=1.0, random_state=3)
    assert archive_bytes(shuffled) == first  # row order, time and file name leave no trace
    assert first[4:8] == b"\0\0\0\0" and not first[3] & 0x08  # gzip MTIME 0, no FNAME field
    text = gzip.decompress(first).decode()
    assert text.splitlines()[0].startswith("experiment,model,configuration,loss,variant,fold,seed,run_id,qid")
    back = read_archive(path)
    assert back["ndcg@10"].tolist() == rows.sort_values(["variant", "fold", "seed", "qid"])["ndcg@10"].tolist()


def test_a_file_without_the_archive_columns_is_refused(tmp_path):
    path = tmp_path / "x.csv.gz"
    path.write_bytes(gzip.compress(pd.DataFrame({"qid": ["1"], "value": [0.5]}).to_csv(index=False).encode()))
    with pytest.raises(ArchiveError, match="missing column"):
        read_archive(path)
