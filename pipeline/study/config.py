"""The one configuration of a failure study: which collection, which components, which rules.

:class:`StudyConfig` is built once, from the command line's flags (``pipeline.cli.config.study_config``)
or from the Failure overlap page's form (``pipeline.study.jobs.study_command`` turns it into the
job's command line with :meth:`StudyConfig.run_args`), and every task of the study reads its part of
it (:meth:`pipeline.study.task.FailureTask.run`). Components use the ``NAME[=FILE]`` forms of
:mod:`pipeline.study.components`. :meth:`StudyConfig.stored` is what a study stores as its
``configuration`` (and hashes into its id): the same keys and order as every study stored before.

The collection is a registry dataset (``dataset`` with an optional ``data_dir``), any TREC-style
collection (``qrels`` with optional ``topics`` and ``passages``), or one already loaded
(``collection``); :meth:`StudyConfig.data` loads it once and keeps the first ``max_queries`` judged
queries.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Mapping

from pipeline.judging.judgments import DEFAULT_CAP
from pipeline.sets.rule import DEFAULT_QUANTILE
from pipeline.study.universe import DEFAULT_UNIVERSE, check_universe

SETUPS = ("binary", "graded")
COLLECTION_FIELDS = ("dataset", "data_dir", "qrels", "topics", "passages")  # what names the collection


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"


def load_collection(dataset: str | None = None, *, qrels=None, topics=None, passages=None, data_dir=None):
    """A registry dataset (``dl19``..``dl22``), or any TREC-style collection from ``qrels`` (with
    optional ``topics`` and ``passages`` files), as a :class:`pipeline.data.datasets.TrecDlData`."""
    from pipeline.data import trec_io
    from pipeline.data.datasets import DatasetSpec, TrecDlData, load_dataset

    if qrels is None:
        if dataset is None:
            raise ValueError("give --dataset or --qrels")
        return load_dataset(dataset, data_dir)
    qrels_path = Path(qrels)
    name = dataset or slug(qrels_path.stem)
    topic_map = trec_io.read_topics(topics) if topics else {}
    judged = trec_io.read_qrels(qrels_path, known_qids=topic_map or None)
    for qid in judged:
        topic_map.setdefault(qid, "")  # no topics file: query texts unknown (LLM steps will refuse)
    texts = trec_io.read_passages(passages) if passages else {}
    spec = DatasetSpec(name, 0, "custom", str(topics or ""), str(qrels_path), str(passages or ""), "")
    return TrecDlData(spec=spec, topics=topic_map, qrels=judged, passages=texts,
                      source=f"files qrels={qrels_path}" + (f", topics={topics}" if topics else "")
                             + (f", passages={passages}" if passages else ""))


def first_queries(data, n: int | None):
    """``data`` restricted to its first ``n`` judged queries in topic order (all when ``n`` is None)."""
    if n is None:
        return data
    if n < 1:
        raise ValueError(f"--max-queries must be at least 1, got {n}")
    keep = data.judged_qids[:n]
    qrels = data.require_qrels()
    return replace(data, qrels={qid: qrels[qid] for qid in keep}, _fingerprint=None)


def require_query_texts(data) -> dict[str, str]:
    """The collection's judged queries with their texts; an LLM step refuses a collection without them."""
    queries = data.queries()
    missing = [qid for qid, text in queries.items() if not text.strip()]
    if missing:
        raise ValueError(f"{data.name}: {len(missing)} queries have no text (e.g. {missing[0]}); "
                         f"an LLM step needs --topics")
    return queries


def study_dir(data) -> Path:
    """The collection's folder of the study cache (its generated answers, its stored studies)."""
    from core import paths

    return paths.cache_subdir("failure", slug(data.name))


@dataclass(frozen=True)
class StudyConfig:
    """What a study (or one task of it) is asked to do (module docstring). Sequences are kept as tuples."""
    dataset: str | None = None  # a registry name; with ``qrels``, the collection's name (default: the file's)
    data_dir: str | Path | None = None  # the TREC DL data folder (default: the configured one)
    qrels: str | Path | None = None  # any TREC-style collection instead of a registry dataset
    topics: str | Path | None = None
    passages: str | Path | None = None
    retrievers: tuple[str, ...] = ()  # NAME[=RUNFILE]
    generators: tuple[str, ...] = ()  # LLM spec or NAME=FILE.jsonl
    judges: tuple[str, ...] = ()  # LLM spec, a data folder judge NAME, or NAME=FILE
    setups: tuple[str, ...] = SETUPS
    quantile: float = DEFAULT_QUANTILE
    encoder: str = "auto"  # BERTScore encoder
    aggregate: str = "max"  # BERTScore over a query's reference passages
    cap: int | None = DEFAULT_CAP  # LLM judge: judged pairs per query at most (None: all)
    max_queries: int | None = None  # only the first N judged queries in topic order
    partial_references: str = "exclude"  # H2G: queries with an incomplete reference set
    universe: str = DEFAULT_UNIVERSE  # over which queries each set is drawn (pipeline.study.universe)
    truncated_answers: str = "exclude"  # H2G: answers cut at the token limit
    # tasks beyond the paper's three (registered FailureTasks without a section): ((task, (system, ...)), ...);
    # a mapping {task: [system, ...]} is accepted. Not on the command line: the job's argv cannot carry them
    further_tasks: tuple[tuple[str, tuple[str, ...]], ...] = ()
    llm_options: Mapping | None = field(default=None, compare=False)  # make_client keywords (not stored)
    collection: object = field(default=None, compare=False, repr=False)  # an already loaded TrecDlData

    def __post_init__(self):
        for name in ("retrievers", "generators", "judges", "setups"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise TypeError(f"{name} must be a sequence of names, got the string {value!r}")
            object.__setattr__(self, name, tuple(value or ()))
        unknown = [s for s in self.setups if s not in SETUPS]
        if unknown:
            raise ValueError(f"unknown judging setup {unknown[0]!r}; use {' or '.join(SETUPS)}")
        check_universe(self.universe)
        further = dict(self.further_tasks.items() if isinstance(self.further_tasks, Mapping) else self.further_tasks)
        for task, systems in further.items():
            if isinstance(systems, str) or not systems:
                raise ValueError(f"further task {task!r}: name its systems as a non-empty list, got {systems!r}")
        object.__setattr__(self, "further_tasks", tuple((task, tuple(systems)) for task, systems in further.items()))
        object.__setattr__(self, "_loaded", None)

    def further_systems(self, task: str) -> tuple[str, ...]:
        """The systems this configuration names for the further task ``task`` (none: ``()``)."""
        return dict(self.further_tasks).get(task, ())

    @classmethod
    def of(cls, data, **settings) -> StudyConfig:
        """The configuration of an already loaded collection ``data`` (a ``TrecDlData``)."""
        return cls(dataset=data.name, collection=data, **settings)

    def replace(self, **changes) -> StudyConfig:
        """A copy with ``changes``; the loaded collection is kept unless ``changes`` name another one."""
        if "collection" not in changes and any(k in changes for k in COLLECTION_FIELDS):
            changes["collection"] = None
        return replace(self, **changes)

    def full_collection(self):
        """The collection, loaded once, all its judged queries."""
        if self.collection is None:
            object.__setattr__(self, "collection", load_collection(
                self.dataset, qrels=self.qrels, topics=self.topics, passages=self.passages, data_dir=self.data_dir))
        return self.collection

    def data(self):
        """The collection the tasks run on: loaded once, its first ``max_queries`` judged queries."""
        if self._loaded is None:
            object.__setattr__(self, "_loaded", first_queries(self.full_collection(), self.max_queries))
        return self._loaded

    def with_default_components(self) -> StudyConfig:
        """The components a study runs when none are named: the data folder's imported runs (``bm25``
        when it has none), its answers files as generators (``auto`` when it has none: the only default that
        calls an LLM), and the folder's judgment files plus ``auto`` as judges."""
        data = self.full_collection()
        return self.replace(
            retrievers=self.retrievers or (sorted(data.imported_runs()) or ["bm25"]),
            generators=self.generators or (sorted(data.folder_files("answers")) or ["auto"]),
            judges=self.judges or [*data.folder_files("judgments"), "auto"])

    def stored(self) -> dict:
        """What a study run is asked to do, as the study stores it (and hashes into its id)."""
        data = self.data()
        return {"dataset": data.name, "retrievers": list(self.retrievers), "generators": list(self.generators),
                "judges": list(self.judges), "setups": list(self.setups), "quantile": self.quantile,
                "encoder": self.encoder, "aggregate": self.aggregate, "cap": self.cap,
                "max_queries": self.max_queries, "partial_references": self.partial_references,
                "universe": self.universe, "truncated_answers": self.truncated_answers,
                "data_folder": str(data.folder) if data.folder is not None else None,
                # only when there are some: a three-task study's configuration (and id) is as before
                **({"further_tasks": {t: list(s) for t, s in self.further_tasks}} if self.further_tasks else {})}

    def run_args(self, study_id: str | None = None) -> list[str]:
        """The ``python -m pipeline run`` arguments that build this configuration again (the page's
        background job); options at their defaults are left out, except those the page always sets."""
        if self.further_tasks:
            raise ValueError(f"further tasks ({', '.join(t for t, _ in self.further_tasks)}) have no command-line "
                             f"option: run them with pipeline.study.run.run_study(config)")
        out = ["--dataset", str(self.dataset)]
        for generator in self.generators:
            out += ["--generator", generator.strip()]
        out += ["--cap", "none" if self.cap is None else str(int(self.cap)),
                "--partial-references", self.partial_references, "--universe", check_universe(self.universe),
                "--truncated-answers", self.truncated_answers]
        if self.max_queries:
            out += ["--max-queries", str(int(self.max_queries))]
        if study_id:
            out += ["--study-id", study_id]
        if self.data_dir is not None:
            out += ["--data", str(self.data_dir)]
        for judge in self.judges:
            out += ["--judge", judge]
        for retriever in self.retrievers:
            out += ["--retriever", retriever]
        if self.setups != SETUPS:
            for setup in self.setups:
                out += ["--setup", setup]
        defaults = {f.name: f.default for f in fields(self)}
        for name in ("quantile", "encoder", "aggregate"):
            if getattr(self, name) != defaults[name]:
                out += [f"--{name}", str(getattr(self, name))]
        return out
