"""core.export.git_state: the code's commit and whether it had changes, the stored results aside (issue 41: the MQ2008
reproduction writes its tracked result under bench/results after each part, which marked every later part and every
run it trained as made by changed code, so the script refused to store them)."""
from __future__ import annotations

import subprocess

from core.export import git_state


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, timeout=30)


def test_a_changed_stored_result_is_not_changed_code(tmp_path):
    (tmp_path / "bench" / "results").mkdir(parents=True)
    result, code = tmp_path / "bench" / "results" / "r.json", tmp_path / "code.py"
    result.write_text("{}\n")
    code.write_text("x = 1\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    assert git_state(tmp_path)["dirty"] is False and len(git_state(tmp_path)["commit"]) == 40
    result.write_text('{"parts": {}}\n')
    (tmp_path / "new.txt").write_text("untracked\n")
    assert git_state(tmp_path)["dirty"] is False
    code.write_text("x = 2\n")
    assert git_state(tmp_path)["dirty"] is True
