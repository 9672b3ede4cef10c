"""The Findings page's cache key of the failure section (``pipeline.views.findings.stores_version``): it
moves with every file the findings read (a study, a preference result, an annotation commit) and with
nothing else, so the page checks again exactly when a store changed."""
from __future__ import annotations

from pipeline.study.store import save_study
from pipeline.views.findings import stores_version
from tests.pipeline.stored_figures import write_preference_result


def test_the_key_moves_with_what_the_findings_read(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    empty = stores_version("dl19")
    assert empty == (str(tmp_path), ()) and stores_version("dl19") == empty

    (tmp_path / "annotations.sqlite-wal").write_bytes(b"")  # what a reading connection leaves: no commit
    assert stores_version("dl19") == empty
    (tmp_path / "annotations.sqlite-wal").write_bytes(b"a commit")
    with_annotation = stores_version("dl19")
    assert with_annotation != empty

    write_preference_result(tmp_path, "dl20", ["win"] * 3)  # another dataset's result: not dl19's findings
    assert stores_version("dl19") == with_annotation and stores_version("all") != stores_version("dl19")

    path = save_study({"dataset": "dl19", "id": "20261203T130000Z-0123abcd-0001"})
    with_study = stores_version("dl19")
    assert with_study != with_annotation and str(path) in {stamp[0] for stamp in with_study[1]}
    assert stores_version("dl19") == with_study
