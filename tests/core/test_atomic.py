"""core.atomic: no half-written file or folder is ever visible, and a concurrent winner is kept."""
from __future__ import annotations

import pytest

from core.atomic import atomic_write, atomic_write_text, publish_dir


def test_atomic_write_replaces_whole_and_cleans_up_on_failure(tmp_path):
    target = tmp_path / "sub" / "a.txt"
    atomic_write_text(target, "first")
    with pytest.raises(RuntimeError):
        atomic_write(target, lambda tmp: (tmp.write_text("half"), (_ for _ in ()).throw(RuntimeError("boom"))))
    assert target.read_text() == "first"
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.txt"]


def test_publish_dir_is_all_or_nothing(tmp_path):
    final = tmp_path / "entry"
    with pytest.raises(ValueError):
        with publish_dir(final) as staging:
            (staging / "part.bin").write_bytes(b"x")
            raise ValueError("build failed")
    assert list(tmp_path.iterdir()) == []
    with publish_dir(final) as staging:
        (staging / "meta.json").write_text("{}")
    assert (final / "meta.json").is_file() and len(list(tmp_path.iterdir())) == 1


def test_publish_dir_keeps_a_complete_entry_published_first(tmp_path):
    final = tmp_path / "entry"
    with publish_dir(final) as staging:
        (staging / "meta.json").write_text("winner")
        final.mkdir()  # another process publishes the same entry meanwhile
        (final / "meta.json").write_text("winner")
        (final / "data").write_text("kept")
    assert (final / "data").read_text() == "kept"
    assert [p.name for p in tmp_path.iterdir()] == ["entry"]
    incomplete = tmp_path / "other"
    with pytest.raises(OSError):
        with publish_dir(incomplete) as staging:
            (staging / "meta.json").write_text("{}")
            incomplete.mkdir()
            (incomplete / "junk").write_text("no marker")
