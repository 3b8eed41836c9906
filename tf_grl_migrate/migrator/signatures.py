"""A file's signature, and when it can vouch for what was read: what the quiet index
(migrator/cache.py) and the records of repeated runs (rerun.py) rest on."""

from __future__ import annotations

import os

# A file changed this close before a run may change again within its timestamps' granularity (a
# clock tick, a second, two seconds on FAT) and keep its signature: what it held is not vouched for.
RACY_NS = 3_000_000_000
# Where a write moves the ctime. On Windows st_ctime is the creation time: an edit that keeps the
# size and sets the mtime back would keep all four, so nothing is vouched for there (speed only).
CTIME_MOVES = os.name != "nt"


def signature(path: str) -> list[int]:
    """[mtime_ns, ctime_ns, size, inode] of a file or folder (links followed); raises OSError.
    Any write to a file moves its ctime, which no user call sets back: a file whose four still
    agree holds the bytes it held then (a folder: the names it held), once ``settled``."""
    st = os.stat(path)
    return [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino]


def signature_or_none(path: str) -> list[int] | None:
    """``signature``, or None where the path cannot be looked at."""
    try:
        return signature(path)
    except OSError:
        return None


def settled(found: list[int], started_ns: int) -> bool:
    """Whether a signature taken after ``started_ns`` (time.time_ns) can vouch for what was read:
    nothing changed the file within RACY_NS before (git's "racy clean" rule), on a system whose
    ctime every write moves."""
    return CTIME_MOVES and max(found[0], found[1]) < started_ns - RACY_NS
