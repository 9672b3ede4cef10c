"""Job kinds: what a kind of background job is, declared once where the kind is defined.

A :class:`JobKind` says how a job of that kind is built from its parameters (its command line, its
label, the ``meta`` it keeps), which progress record it writes (:mod:`core.jobs.progress`), and
where its result is shown (a link to the page selecting it). The library that owns a command
declares its kind and registers it (:func:`register`); this module knows no specific kind (the
dependency direction is pages -> ltr | pipeline -> core). Pages submit and list a kind's jobs
through it and draw them in the one jobs panel (``pages/panels/jobs.py``).

A kind's ``name`` is what every job of it stores as ``meta["kind"]``: it is never renamed, so the
jobs a store holds from before keep listing under their kind.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from core.jobs.records import JobError

if TYPE_CHECKING:
    from core.jobs.records import Job


def _no_meta(**_params) -> dict:
    return {}


@dataclass(frozen=True)
class JobKind:
    """One kind of job. ``command``, ``title`` and ``meta`` take the job's parameters as keywords."""

    name: str
    """Stored as every job's ``meta["kind"]`` (never renamed: stored jobs list by it)."""
    label: str
    """What the jobs panel calls these jobs, e.g. ``training jobs``."""
    command: Callable[..., Sequence[str]]
    """The argv a job runs (from the project root); raises ValueError on bad parameters."""
    title: Callable[..., str]
    """A job's label, e.g. ``retrieve bm25 on dl19 (partial corpus)``."""
    meta: Callable[..., Mapping[str, Any]] = _no_meta
    """What a job keeps of its parameters (what lists filter on and its result link reads)."""
    progress: str | None = None
    """The parameter of ``command`` that names the progress record a job writes; its value is kept as
    ``meta["progress"]``. None: the kind writes none (its table reads progress elsewhere)."""
    progress_prefix: str = ""
    """With ``progress``: a job submitted without that parameter gets a fresh key ``<prefix>-<hex>``."""
    link: Callable[["Job"], str | None] | None = None
    """The URL of the page (and selection) showing a job's result, None while there is none."""

    def job_meta(self, params: Mapping[str, Any]) -> dict:
        """The ``meta`` a job of ``params`` is stored with: its kind first, then what it keeps."""
        meta = {"kind": self.name, **self.meta(**params)}
        if self.progress is not None:
            meta["progress"] = params[self.progress]
        return meta

    def prepared(self, params: Mapping[str, Any]) -> dict:
        """``params`` with the progress record's key filled in (a fresh one when not given)."""
        params = dict(params)
        if self.progress is not None and not params.get(self.progress):
            if not self.progress_prefix:
                raise JobError(f"a {self.name} job needs its {self.progress!r}")
            from core.jobs.progress import new_key

            params[self.progress] = new_key(self.progress_prefix)
        return params

    def submit(self, *, resource: str = "cpu", start_worker: bool = True, **params) -> int:
        """Queue one job of this kind; returns its id. A bad parameter raises before anything is queued."""
        from core.jobs.queue import submit

        params = self.prepared(params)
        return submit(self.command(**params), label=self.title(**params), resource=resource,
                      meta=self.job_meta(params), start_worker=start_worker)

    def jobs(self, limit: int | None = 10, **where) -> list["Job"]:
        """This kind's jobs, newest first; ``where``: ``meta`` fields they must have (e.g. ``dataset="dl19"``)."""
        from core.jobs.queue import list_jobs

        return list_jobs(meta={"kind": self.name, **where}, limit=limit)

    def owns(self, job: "Job") -> bool:
        return job.meta.get("kind") == self.name

    def result_link(self, job: "Job") -> str | None:
        return self.link(job) if self.link is not None else None


_KINDS: dict[str, JobKind] = {}


def register(kind: JobKind) -> JobKind:
    """Make ``kind`` known by its name (the module defining it calls this once); returns it.

    A second kind under a name already taken by another definition is refused; the same definition
    again (its module reloaded, as Streamlit does on a change) replaces the first.
    """
    known = _KINDS.get(kind.name)
    if known is not None and _origin(known) != _origin(kind):
        raise JobError(f"job kind {kind.name!r} is defined twice: {_origin(known)} and {_origin(kind)}")
    _KINDS[kind.name] = kind
    return kind


def _origin(kind: JobKind) -> str:
    return f"{kind.command.__module__}.{kind.command.__qualname__}"


def kind_named(name: str | None) -> JobKind | None:
    """The registered kind of that name (None for a job of no kind, or of a kind nobody imported)."""
    return _KINDS.get(name) if name else None


def kind_of(job: "Job") -> JobKind | None:
    return kind_named(job.meta.get("kind"))


def registered_kinds() -> list[JobKind]:
    return list(_KINDS.values())
