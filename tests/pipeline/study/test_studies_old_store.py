"""The studies store (JSON files) written by the code before the move (main at 20028e0, the designed
study of ``tests/fixtures/old_stores/``) reads with the current code: listed, loaded whole, and typed
back to the same JSON."""
from __future__ import annotations

import json
import shutil

from pipeline.study import store as studies
from pipeline.study.result import StudyResult
from tests.support.old_stores import OLD_STORES


def test_an_old_study_lists_loads_and_round_trips(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copytree(OLD_STORES / "failure", tmp_path / "cache" / "failure")
    (path,) = (OLD_STORES / "failure" / "designed" / "studies").glob("*.json")
    (entry,) = studies.list_studies("designed")
    assert entry["id"] == path.stem and entry["configuration"]["setups"] == ["binary", "graded"]
    stored = json.loads(path.read_text(encoding="utf-8"))
    loaded = studies.load_study("designed", entry["id"])
    assert loaded == stored
    assert StudyResult.from_dict(loaded).to_dict() == stored
