"""TREC Deep Learning 2019-2022 passage-task data: registry, loading and coverage.

Sources, in this order:

1. a data folder in the layout of ``shared/data/trec_dl/`` (``topics.*``, ``qrels.*``,
   ``passages.msmarco-v{1,2}.*.tsv``; the outputs made elsewhere, runs, judgments and answers, and the sizes of
   their models: :mod:`pipeline.data.imported`): the ``data_dir``
   argument, else ``core.paths.data_folder("trec_dl")`` (env ``IRDASH_DATA_TREC_DL`` or
   ``[data] trec_dl`` in ``irdash.toml``);
2. ``ir_datasets`` (``msmarco-passage/trec-dl-2019/judged`` ...) when no data folder is configured;
   it downloads topics, qrels and the MS MARCO corpus on first use, so it needs a network.

Only judged queries count: :meth:`TrecDlData.queries` are the topics that have qrels. Local passage
files can be partial (the shared v1 file covers every judged DL19 passage but only ~45% of the judged
DL20 ones), so :meth:`TrecDlData.coverage` says how many judged and relevant (grade >= 2) passages
have text; everything computed from these texts over a partial corpus must say so.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Mapping

from core import paths
from core.errors import DatasetError
from pipeline.data import imported, trec_io
from pipeline.data.trec_io import Qrels, Run

RELEVANT_GRADE = 2  # TREC DL convention: grades 2 (highly) and 3 (perfectly) relevant count as relevant


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    year: int
    corpus: str  # "msmarco-v1" | "msmarco-v2"
    topics_file: str
    qrels_file: str
    passages_file: str
    ir_datasets_id: str


DATASETS: dict[str, DatasetSpec] = {
    "dl19": DatasetSpec("dl19", 2019, "msmarco-v1", "topics.dl19-passage.txt", "qrels.dl19-passage.txt",
                        "passages.msmarco-v1.dl19-dl20.tsv", "msmarco-passage/trec-dl-2019/judged"),
    "dl20": DatasetSpec("dl20", 2020, "msmarco-v1", "topics.dl20.txt", "qrels.dl20-passage.txt",
                        "passages.msmarco-v1.dl19-dl20.tsv", "msmarco-passage/trec-dl-2020/judged"),
    "dl21": DatasetSpec("dl21", 2021, "msmarco-v2", "topics.dl21.txt", "qrels.dl21-passage.txt",
                        "passages.msmarco-v2.dl21-dl22.tsv", "msmarco-passage-v2/trec-dl-2021/judged"),
    "dl22": DatasetSpec("dl22", 2022, "msmarco-v2", "topics.dl22.txt", "qrels.dl22-passage.txt",
                        "passages.msmarco-v2.dl21-dl22.tsv", "msmarco-passage-v2/trec-dl-2022/judged"),
}


@dataclass(frozen=True)
class Coverage:
    """How much of a dataset's judgments the available passage texts cover.

    ``*_pairs`` count (query, passage) judgments; ``*_passages`` count distinct passages.
    """
    n_topics: int
    n_judged_queries: int
    n_judged_pairs: int
    n_judged_pairs_with_text: int
    n_judged_passages: int
    n_judged_passages_with_text: int
    n_relevant_pairs: int
    n_relevant_pairs_with_text: int
    n_relevant_passages: int
    n_relevant_passages_with_text: int
    n_corpus_passages: int

    def as_dict(self) -> dict:
        out = dict(self.__dict__)
        for what in ("judged_pairs", "judged_passages", "relevant_pairs", "relevant_passages"):
            total = out[f"n_{what}"]
            out[f"frac_{what}_with_text"] = round(out[f"n_{what}_with_text"] / total, 4) if total else None
        return out

    def summary(self) -> str:
        d = self.as_dict()
        if not self.n_judged_queries:
            return f"{self.n_topics} topics, no qrels; {self.n_corpus_passages:,} passages with text"
        return (f"{self.n_judged_queries} of {self.n_topics} topics judged; text for "
                f"{self.n_judged_passages_with_text:,}/{self.n_judged_passages:,} judged passages "
                f"({d['frac_judged_passages_with_text']:.1%}) and "
                f"{self.n_relevant_passages_with_text:,}/{self.n_relevant_passages:,} relevant (grade>=2) "
                f"({d['frac_relevant_passages_with_text']:.1%}); corpus of {self.n_corpus_passages:,} passages")


@dataclass
class TrecDlData:
    """One TREC DL year: all topics, its qrels (None when unavailable) and the passage texts at hand."""
    spec: DatasetSpec
    topics: dict[str, str]
    qrels: Qrels | None
    passages: Mapping[str, str]
    source: str
    folder: Path | None = None
    qrels_note: str | None = None  # why qrels are missing, when they are
    _fingerprint: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def has_qrels(self) -> bool:
        return self.qrels is not None

    def require_qrels(self) -> Qrels:
        """The qrels, or a :class:`DatasetError` saying why there are none."""
        if self.qrels is None:
            raise DatasetError(f"{self.name}: no qrels available: {self.qrels_note}")
        return self.qrels

    @cached_property
    def judged_qids(self) -> list[str]:
        """Query ids with at least one judgment, in topic-file order."""
        if self.qrels is None:
            return []
        return [qid for qid in self.topics if qid in self.qrels]

    def queries(self) -> dict[str, str]:
        """The queries that count: the judged topics (all topics only when qrels are unavailable)."""
        if self.qrels is None:
            return dict(self.topics)
        return {qid: self.topics[qid] for qid in self.judged_qids}

    def passage(self, pid: str) -> str | None:
        return self.passages.get(pid)

    def judged_pairs(self, *, with_text: bool = False) -> list[tuple[str, str, int]]:
        """``(qid, pid, grade)`` for every judgment (only those whose passage has text, if asked)."""
        qrels = self.require_qrels()
        return [(qid, pid, grade) for qid, judged in qrels.items() for pid, grade in judged.items()
                if not with_text or pid in self.passages]

    def relevant_passages(self, qid: str, min_grade: int = RELEVANT_GRADE) -> dict[str, str]:
        """``{pid: text}`` of the passages judged >= ``min_grade`` for ``qid`` that have text."""
        judged = self.require_qrels().get(qid, {})
        return {pid: self.passages[pid] for pid, grade in judged.items()
                if grade >= min_grade and pid in self.passages}

    def reference_coverage(self, min_grade: int = RELEVANT_GRADE) -> dict[str, tuple[int, int]]:
        """``{qid: (relevant passages with text, relevant passages)}`` per judged query: how much of a
        query's reference set (grade >= ``min_grade``) an answer can be compared with."""
        qrels = self.require_qrels()
        out = {}
        for qid in self.judged_qids:
            relevant = [pid for pid, grade in qrels[qid].items() if grade >= min_grade]
            out[qid] = (sum(pid in self.passages for pid in relevant), len(relevant))
        return out

    @cached_property
    def coverage(self) -> Coverage:
        qrels = self.qrels or {}
        pairs = [(pid, grade) for judged in qrels.values() for pid, grade in judged.items()]
        judged = {pid for pid, _ in pairs}
        relevant = {pid for pid, grade in pairs if grade >= RELEVANT_GRADE}
        has = self.passages.__contains__
        return Coverage(
            n_topics=len(self.topics), n_judged_queries=len(qrels),
            n_judged_pairs=len(pairs), n_judged_pairs_with_text=sum(has(pid) for pid, _ in pairs),
            n_judged_passages=len(judged), n_judged_passages_with_text=sum(map(has, judged)),
            n_relevant_pairs=sum(grade >= RELEVANT_GRADE for _, grade in pairs),
            n_relevant_pairs_with_text=sum(has(pid) for pid, grade in pairs if grade >= RELEVANT_GRADE),
            n_relevant_passages=len(relevant), n_relevant_passages_with_text=sum(map(has, relevant)),
            n_corpus_passages=len(self.passages))

    @property
    def passages_fingerprint(self) -> str:
        """SHA-256 of the passage ids and texts: the cache key of every index built over them."""
        if self._fingerprint is None:
            self._fingerprint = passages_fingerprint(self.passages)
        return self._fingerprint

    def folder_files(self, kind: str) -> dict[str, Path]:
        """``{NAME: path}`` of the data folder's files of ``kind`` for this dataset (``runs``, ``judgments``,
        ``answers``, ``samples``: :func:`pipeline.data.imported.folder_files`); ``{}`` without a folder."""
        return imported.folder_files(self.folder, kind, self.name)

    def imported_runs(self) -> dict[str, Path]:
        """``{retriever: path}`` for ``runs/run.<retriever>.<dataset>.txt`` in the data folder."""
        return self.folder_files("runs")

    def model_sizes(self) -> dict[str, imported.ListedSize]:
        """The data folder's ``models.tsv`` rows by model name (``{}`` without one)."""
        return imported.folder_model_sizes(self.folder)

    def load_run(self, path: str | Path) -> Run:
        """Read a TREC run and check that it is a run for this dataset's topics."""
        return trec_io.read_run(path, known_qids=self.topics)


def passages_fingerprint(passages: Mapping[str, str]) -> str:
    digest = hashlib.sha256()
    for pid, text in passages.items():
        digest.update(pid.encode())
        digest.update(b"\t")
        digest.update(text.encode())
        digest.update(b"\n")
    return digest.hexdigest()


def resolve_data_folder(data_dir: str | Path | None = None) -> Path | None:
    """The TREC DL data folder: ``data_dir``, else the configured ``trec_dl`` folder, else None."""
    folder = Path(data_dir).expanduser() if data_dir is not None else paths.data_folder("trec_dl")
    if folder is not None and not folder.is_dir():
        raise DatasetError(f"TREC DL data folder {folder} does not exist")
    return folder


def _stat_key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path), st.st_mtime_ns, st.st_size


@lru_cache(maxsize=4)
def _passages_cached(path: str, mtime_ns: int, size: int) -> dict[str, str]:
    # lru_cache never stores a call that raised, so a malformed file is re-read (and re-reported)
    return trec_io.read_passages(path)


def _load_from_folder(spec: DatasetSpec, folder: Path) -> TrecDlData:
    topics_path = folder / spec.topics_file
    if not topics_path.is_file():
        raise DatasetError(f"{spec.name}: topics file {topics_path} is absent")
    topics = trec_io.read_topics(topics_path)
    qrels_path = folder / spec.qrels_file
    qrels, note = None, None
    if qrels_path.is_file():
        qrels = trec_io.read_qrels(qrels_path, known_qids=topics)
    else:
        note = (f"{qrels_path} is absent (NIST passage qrels for {spec.year} are not in this data folder; "
                f"add them there or use ir_datasets {spec.ir_datasets_id!r} online)")
    passages_path = folder / spec.passages_file
    passages = _passages_cached(*_stat_key(passages_path)) if passages_path.is_file() else {}
    return TrecDlData(spec=spec, topics=topics, qrels=qrels, passages=passages,
                      source=f"data folder {folder}", folder=folder, qrels_note=note)


def _load_from_ir_datasets(spec: DatasetSpec) -> TrecDlData:
    """Topics, qrels and the judged passages' texts from ir_datasets (needs a network on first use).

    Only the judged passages are fetched from the corpus docstore; a BM25 or dense index computed
    here over them is therefore over a partial corpus, like the local files.
    """
    import ir_datasets

    ds = ir_datasets.load(spec.ir_datasets_id)
    # ir_datasets logs every retry of every mirror (its loggers set their own levels, hence
    # logging.disable); an offline failure is reported once, by load_dataset
    logging.disable(logging.WARNING)
    try:
        topics = {q.query_id: q.text for q in ds.queries_iter()}
        qrels: Qrels = {}
        for q in ds.qrels_iter():
            qrels.setdefault(q.query_id, {})[q.doc_id] = int(q.relevance)
        judged = sorted({pid for j in qrels.values() for pid in j})
        passages = {pid: doc.text for pid, doc in ds.docs_store().get_many(judged).items()}
    finally:
        logging.disable(logging.NOTSET)
    return TrecDlData(spec=spec, topics=topics, qrels=qrels, passages=passages,
                      source=f"ir_datasets {spec.ir_datasets_id}")


def load_dataset(name: str, data_dir: str | Path | None = None) -> TrecDlData:
    """Load ``dl19``..``dl22`` from the data folder, else from ir_datasets (see the module docstring)."""
    spec = DATASETS.get(name.lower())
    if spec is None:
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    folder = resolve_data_folder(data_dir)
    if folder is not None:
        return _load_from_folder(spec, folder)
    try:
        return _load_from_ir_datasets(spec)
    except Exception as exc:  # ir_datasets raises many kinds (network, missing files, ...)
        detail = " ".join(str(exc).split())
        detail = detail if len(detail) <= 160 else detail[:157] + "..."
        raise DatasetError(
            f"{name}: no TREC DL data folder configured (pass --data DIR, set IRDASH_DATA_TREC_DL or "
            f"[data] trec_dl in irdash.toml) and ir_datasets could not load {spec.ir_datasets_id!r}: "
            f"{type(exc).__name__}: {detail}") from exc
