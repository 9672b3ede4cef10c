"""Epoch checkpoints of a run: where they live, atomic save, safe load, RNG state."""
from __future__ import annotations

import pickle
import warnings
from pathlib import Path
from typing import Mapping

import torch

from core.atomic import atomic_write
from ltr.store import RunStore
from ltr.train.config import one_line

CHECKPOINT_FORMAT = 1


def checkpoint_path(store: RunStore, run_id: str) -> Path:
    """``<store folder>/checkpoints/<run_id>.pt`` (``cache/checkpoints/`` for the default store)."""
    return store.path.parent / "checkpoints" / f"{run_id}.pt"


def rng_state() -> dict:
    state = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: Mapping) -> None:
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(path: Path, state: dict) -> None:
    """Write atomically (temp file + ``os.replace``): a kill mid-write leaves the previous one intact."""
    atomic_write(path, lambda tmp: torch.save(state, tmp))


def load_checkpoint(path: Path, run_id: str) -> dict | None:
    """The checkpoint of ``run_id`` (tensors and plain containers only: ``weights_only=True``)."""
    if not path.is_file():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, pickle.UnpicklingError) as exc:
        # Unreadable (e.g. written by another torch version): starting over is always correct.
        warnings.warn(f"ignoring unreadable checkpoint {path}: {one_line(exc)}", stacklevel=2)
        return None
    if state.get("format") != CHECKPOINT_FORMAT or state.get("run_id") != run_id:
        return None
    return state


def clone_state(module: torch.nn.Module) -> dict:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}

