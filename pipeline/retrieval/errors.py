"""Errors of the retrieval steps, in a module of their own so retrievers, BM25 and dense import no one another."""


class RetrievalError(RuntimeError):
    """A retriever cannot run or a run cannot be found (one clear line)."""
