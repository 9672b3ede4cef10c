"""Is a process still the one we started? Its start time, read from /proc (Linux), tells a live
process from a pid reused by another after the first one died."""
from __future__ import annotations


def proc_start_time(pid: int | None) -> str | None:
    """Start time of process ``pid`` (field 22 of /proc/<pid>/stat, clock ticks since boot); None when
    it does not exist or is a zombie (exited, not yet reaped: not alive for our purposes)."""
    if not pid:
        return None
    try:
        with open(f"/proc/{int(pid)}/stat") as fh:
            fields = fh.read().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else fields[19]
