"""Test helper for code that writes a job's progress record (:mod:`core.jobs.progress`)."""
from __future__ import annotations

from core.jobs.progress import ProgressWriter


class RecordingWriter(ProgressWriter):
    """The real ProgressWriter that also keeps the record each stage ended with (the stored record
    holds only the last)."""

    def __init__(self, *args, **kwargs):
        self.ended = []
        super().__init__(*args, **kwargs)

    def stage(self, *args, **kwargs):
        if self.record["stage_index"]:
            self.ended.append(dict(self.record))
        super().stage(*args, **kwargs)
