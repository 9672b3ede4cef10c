"""Stored failure studies: every ``run_study`` result kept under its own id, never replaced, and one study per
configuration and inputs: a run whose result equals a stored one's (:func:`same_study`) stores nothing and
returns that study, so running the same command again gives the same id.

Layout: ``cache/failure/<dataset>/studies/<id>.json``, one file per run, written once, atomically
(:mod:`core.atomic`), when the run has finished every step; a run that fails writes none. The id is
``<UTC start time>-<sha256 of the configuration>[:8]-<4 random hex>``, e.g.
``20261201T211003Z-3fa2c1d0-9b1e``: it sorts by time, says which runs share a configuration, and two
runs started in the same second with the same configuration still get their own.

Every study file holds its ``id``, its ``configuration`` (what the run was asked to do: components,
setups, quantile, encoder, aggregate, cap, query cap, data folder), ``time`` (ISO 8601, UTC, when it
started) and ``finished`` besides the results (see :func:`pipeline.study.run.run_study`). The store
reads and writes that JSON form; :class:`pipeline.study.result.StudyResult` is its type.

Before this layout a dataset had one ``cache/failure/<dataset>/study.json``, replaced by every run.
:func:`migrate_legacy` moves such a file into the layout (id from its content and modification
time, so that two processes migrating at once write the same file) and only then removes it.
Deleting a study is explicit: :func:`delete_study` (``python -m pipeline studies --delete ID``, or
the page's confirmed button).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
import uuid
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from core import paths
from core.atomic import atomic_write_text
from core.digest import content_digest

STUDY_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{8}-[0-9a-f]{4}$")
LEGACY_NAME = "study.json"


class StudyError(ValueError):
    """An unknown or malformed study id."""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"


def dataset_dir(dataset: str) -> Path:
    return paths.cache_dir() / "failure" / _slug(dataset)


def studies_dir(dataset: str) -> Path:
    return dataset_dir(dataset) / "studies"


def configuration_digest(configuration: dict) -> str:
    return content_digest(configuration, 8, default=str)


def new_study_id(configuration: dict, now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{configuration_digest(configuration)}-{uuid.uuid4().hex[:4]}"


def check_study_id(study_id: str) -> str:
    if not isinstance(study_id, str) or not STUDY_ID.match(study_id):
        raise StudyError(f"{study_id!r} is not a study id (expected e.g. 20261201T211003Z-3fa2c1d0-9b1e)")
    return study_id


def iso_time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def readable_time(iso: str) -> str:
    """``2026-12-01 21:10 UTC`` from the stored ISO time."""
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M UTC")
    except (TypeError, ValueError):
        return str(iso)


def study_path(dataset: str, study_id: str) -> Path:
    return studies_dir(dataset) / f"{check_study_id(study_id)}.json"


def save_study(study: dict) -> Path:
    """Write a finished study (it carries ``dataset`` and ``id``) atomically; returns its path."""
    return atomic_write_text(study_path(study["dataset"], study["id"]),
                             json.dumps(study, ensure_ascii=False, indent=1))


def load_study(dataset: str, study_id: str | None = None) -> dict | None:
    """One study (the newest when ``study_id`` is None); None when the dataset has none."""
    if study_id is None:
        listed = list_studies(dataset)
        if not listed:
            return None
        study_id = listed[0]["id"]
    path = study_path(dataset, study_id)
    if not path.is_file():
        raise StudyError(f"{dataset}: no study {study_id} (see python -m pipeline studies --dataset {dataset})")
    return json.loads(path.read_text(encoding="utf-8"))


def legacy_configuration(study: dict) -> dict:
    """What a pre-layout study was run with, read back from its content."""
    setups = sorted({s for per in study.get("judges", {}).values() for s in per})
    return {"retrievers": sorted(study.get("retrievers", {})), "generators": sorted(study.get("generators", {})),
            "judges": sorted(study.get("judges", {})), "setups": setups, "quantile": study.get("quantile"),
            "cap": study.get("cap"), "data_folder": study.get("data_folder")}


def migrate_legacy(dataset: str) -> str | None:
    """Move ``cache/failure/<dataset>/study.json`` into the layout; returns the new id (None if there
    was nothing to move). The new file is written before the old one is removed, so a crash in
    between loses nothing (the next call writes the same id again)."""
    legacy = dataset_dir(dataset) / LEGACY_NAME
    try:
        text = legacy.read_text(encoding="utf-8")
        mtime = legacy.stat().st_mtime
    except FileNotFoundError:
        return None
    study = json.loads(text)
    configuration = study.get("configuration") or legacy_configuration(study)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(mtime))
    content = hashlib.sha256(text.encode()).hexdigest()
    study_id = f"{stamp}-{configuration_digest(configuration)}-{content[:4]}"
    study.update(id=study_id, configuration=configuration, time=study.get("time") or iso_time(mtime),
                 finished=study.get("finished") or iso_time(mtime), migrated_from=str(legacy))
    save_study(study)
    try:
        os.unlink(legacy)
    except FileNotFoundError:  # another process migrated it at the same time (same id, same content)
        pass
    return study_id


def list_studies(dataset: str, data_folder: str | Path | None = None) -> list[dict]:
    """``[{id, configuration, time, finished, n_configurations, path}]``, newest first; a legacy
    ``study.json`` is migrated first. ``data_folder``: only the studies computed from that folder."""
    migrate_legacy(dataset)
    folder = studies_dir(dataset)
    wanted = str(Path(data_folder).expanduser().resolve()) if data_folder is not None else None
    out = []
    for path in folder.glob("*.json") if folder.is_dir() else []:
        if not STUDY_ID.match(path.stem):
            continue
        try:
            entry = _summary(str(path), path.stat().st_mtime_ns)
        except (OSError, ValueError):
            continue  # removed meanwhile; a half-written file never exists (atomic writes)
        used = entry["configuration"].get("data_folder")
        if wanted is not None and (used is None or str(Path(used).expanduser().resolve()) != wanted):
            continue
        out.append(dict(entry))
    return sorted(out, key=lambda s: (s["time"] or "", s["id"]), reverse=True)


@lru_cache(maxsize=256)
def _summary(path: str, mtime_ns: int) -> dict:
    """What :func:`list_studies` shows of one study file (a study is 1-2 MB of JSON: parsed once per
    version of the file, not on every page rerun)."""
    study = json.loads(Path(path).read_text(encoding="utf-8"))
    encoders = sorted({(g.get("bertscore") or {}).get("encoder") for g in study.get("generators", {}).values()} - {None})
    return {"id": study["id"], "configuration": study.get("configuration", {}), "time": study.get("time"),
            "finished": study.get("finished"), "n_configurations": len(study.get("configurations", {})),
            "path": path,
            # what the components resolved to (an "auto" spec names no model) and the encoder that ran
            "components": {"generators": list(study.get("generators", {})), "judges": list(study.get("judges", {})),
                           "encoders": encoders}}


# what differs between two runs of one configuration on the same inputs: when and under which id they ran
RUN_FIELDS = ("id", "time", "finished", "migrated_from")
# keys, at any depth, that record how the machine ran a step (BERTScore's CPU threads and load), not what it measured
RUN_FACTS = ("threads",)


def _without_run_facts(value):
    if isinstance(value, dict):
        return {k: _without_run_facts(v) for k, v in value.items() if k not in RUN_FACTS}
    if isinstance(value, list):
        return [_without_run_facts(v) for v in value]
    return value


def _comparable(study: dict) -> str:
    return json.dumps(_without_run_facts({k: v for k, v in study.items() if k not in RUN_FIELDS}), sort_keys=True,
                      ensure_ascii=False, default=str)


def same_configuration(dataset: str, configuration: dict) -> list[dict]:
    """The stored studies of ``dataset`` (entries of :func:`list_studies`, newest first) asked to do exactly
    ``configuration`` (:meth:`pipeline.study.config.StudyConfig.stored`)."""
    wanted = json.dumps(configuration, sort_keys=True, default=str)
    return [entry for entry in list_studies(dataset)
            if json.dumps(entry["configuration"], sort_keys=True, default=str) == wanted]


def same_study(study: dict) -> dict | None:
    """The stored study (newest first) that holds exactly what ``study`` holds, its id and times apart: the
    same configuration run on the same inputs (files, models, cached answers) gave the same result. None when
    none does: the inputs changed (a file, a model, an answer retried), so the run is a study of its own."""
    mine = _comparable(study)
    for entry in same_configuration(study["dataset"], study["configuration"]):
        stored = load_study(study["dataset"], entry["id"])
        if stored is not None and _comparable(stored) == mine:
            return stored
    return None


def _answer_path(dataset: str, study_id: str) -> Path:
    return studies_dir(dataset) / f"{check_study_id(study_id)}.same"


def record_same(dataset: str, asked_id: str, stored_id: str) -> None:
    """A run asked to store under ``asked_id`` (a dashboard job chose it) gave the stored study ``stored_id``'s
    result: remember which, so the job's row links to the study it ran (a small text file beside the studies,
    never listed as one)."""
    atomic_write_text(_answer_path(dataset, asked_id), check_study_id(stored_id))


def study_of_run(dataset: str, asked_id: str) -> str | None:
    """The stored study a run asked to store under ``asked_id`` gave: that id when it stored one, the equal
    study's it returned instead (:func:`record_same`), or None (it stored nothing, or the study is gone)."""
    if study_path(dataset, asked_id).is_file():
        return asked_id
    try:
        same = _answer_path(dataset, asked_id).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return same if STUDY_ID.match(same) and study_path(dataset, same).is_file() else None


def study_datasets() -> list[str]:
    """Datasets with at least one stored (or legacy) study, sorted."""
    root = paths.cache_dir() / "failure"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if (p / LEGACY_NAME).is_file() or any((p / "studies").glob("*.json")))


def settings_line(entry: dict) -> str:
    """``binary+graded · cap 20 · q 0.25 · encoder minilm · partial refs exclude · truncated exclude ·
    universe per-task``: the settings that make two studies of the same components differ. A setting a
    study stored before it existed is left out, except the universe, which then reads ``common (not
    recorded)`` (such studies took their sets within the common universe)."""
    c = entry["configuration"]
    resolved = (entry.get("components") or {}).get("encoders") or []
    parts = ["+".join(c["setups"]) if c.get("setups") else None,
             f"cap {c['cap'] if c['cap'] is not None else 'none'}" if "cap" in c else None,
             f"q {c['quantile']}" if c.get("quantile") is not None else None,
             f"encoder {', '.join(resolved) or c.get('encoder')}" if resolved or c.get("encoder") else None,
             f"aggregate {c['aggregate']}" if c.get("aggregate") not in (None, "max") else None,
             f"partial refs {c['partial_references']}" if c.get("partial_references") else None,
             f"truncated {c['truncated_answers']}" if c.get("truncated_answers") else None,
             f"universe {c['universe']}" if c.get("universe") else "universe common (not recorded)"]
    return " · ".join(p for p in parts if p)


def describe(entry: dict) -> str:
    """``2026-12-01 21:10 UTC · bm25, tasb | ollama:llama3.2:3b | llama-3.3-70b, ollama:qwen3:8b ·
    binary+graded · cap 20 · q 0.25 · encoder minilm · partial refs exclude · universe per-task · first 30
    queries · 8 configurations · <id>`` (an entry of :func:`list_studies`): what tells two studies apart,
    in one line. Generators and judges are named as they resolved (the study's keys), retrievers as asked."""
    c = entry["configuration"]
    resolved = entry.get("components") or {}
    asked = {key: [str(a).partition("=")[0] for a in c.get(key, [])] for key in ("retrievers", "generators", "judges")}
    parts = [", ".join(asked["retrievers"]) or "-",
             *(", ".join(resolved.get(key) or asked[key]) or "-" for key in ("generators", "judges"))]
    capped = f" · first {c['max_queries']} queries" if c.get("max_queries") else ""
    return (f"{readable_time(entry['time'])} · {' | '.join(parts)} · {settings_line(entry)}{capped} · "
            f"{entry['n_configurations']} configurations · {entry['id']}")


def delete_study(dataset: str, study_id: str) -> Path:
    """Remove one study for good; an unknown id is an error (nothing else is touched)."""
    path = study_path(dataset, study_id)
    try:
        path.unlink()
    except FileNotFoundError:
        raise StudyError(f"{dataset}: no study {study_id}") from None
    return path
