"""Where things are, independent of how deep the test module that asks sits below ``tests/``."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout: tests/support/paths.py -> tests -> root
TESTS = ROOT / "tests"
FIXTURES = TESTS / "fixtures"  # reference numbers carried with the tests (tests/fixtures/README.md)
SHARED = ROOT.parent / "shared"  # real data beside the checkout; absent on some machines
APP = ROOT / "app.py"
PAGES = ROOT / "pages"
ARTIFACTS = ROOT / "test-artifacts"  # screenshots and logs the browser tests leave for a reader
