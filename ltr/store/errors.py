"""What the run store raises."""
from __future__ import annotations


class RunConfigMismatch(ValueError):
    """A run id already stored with a different configuration."""


class RunBusy(RuntimeError):
    """The run is being trained by another live process."""


class UnknownRun(KeyError):
    """No run with that id in the store."""
