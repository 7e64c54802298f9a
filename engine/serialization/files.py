"""The files behind ``engine.save`` and ``engine.load``: what is read, and the temporary file of a save.

NOTE [ Files from outside ]
1. ``load`` reads only a regular file: a path (or a file object's descriptor) that
   is a device (``/dev/zero``), a FIFO or a socket is refused before one byte is read,
   as reading one would never end. The whole file is read once; every record read
   after that is a slice of it bounded by its declared size
   (NOTE [ Checking the zip directory ] in archive.py).
2. A save's temporary file is named ``.<target>.glassgrad-<pid>-<12 hex>.tmp``, in the
   target's folder (NOTE [ Atomic save ] in __init__.py).
3. A save killed before it could remove its temporary file (SIGKILL, power loss)
   leaves it behind. The next save into that folder removes such files: only names
   that match rule 2 exactly, only regular files (never a link), and only when the
   process that wrote one is gone or the file is older than :data:`STALE_AFTER_S`
   (a process id can be reused). A save running now in another process keeps its file.
"""
from __future__ import annotations

import errno
import os
import re
import stat
import time

STALE_AFTER_S = 24 * 3600     # a temporary file this old is stale whoever wrote it (rule 3)
_TMP_NAME = re.compile(r"\..+\.glassgrad-(\d+)-[0-9a-f]{12}\.tmp\Z", re.DOTALL)


def temp_name(target: str) -> str:
    """The path of a new temporary file for ``target`` (rule 2)."""
    parent, base = os.path.split(target)
    return os.path.join(parent, f".{base}.glassgrad-{os.getpid()}-{os.urandom(6).hex()}.tmp")


def remove_stale(folder: str, now: float | None = None) -> list:
    """Remove the temporary files killed saves left in ``folder`` (rule 3); returns their paths."""
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _TMP_NAME.match(entry.name)
        if m is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if _alive(int(m.group(1))) and now - st.st_mtime < STALE_AFTER_S:
            continue
        try:
            os.unlink(entry.path)
            removed.append(entry.path)
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True     # a process we may not signal, or a platform without kill: assume it runs
    return True


def read_path(path: str) -> bytes:
    """The bytes of the regular file at ``path`` (rule 1). Opened non-blocking, so a FIFO
    without a writer is refused instead of waiting for one."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        check_regular(mode, path)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def read_object(f) -> bytes:
    """Everything a binary file object holds; one backed by a device or FIFO is refused (rule 1)."""
    fileno = getattr(f, "fileno", None)
    if callable(fileno):
        try:
            fd = fileno()
        except (OSError, ValueError, AttributeError, TypeError):  # io.BytesIO and friends have none
            fd = None
        if isinstance(fd, int) and not isinstance(fd, bool):
            name = getattr(f, "name", None)
            check_regular(os.fstat(fd).st_mode, name if isinstance(name, str) else f"file descriptor {fd}")
    data = f.read()
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("engine.load needs a file opened in binary mode ('rb')")
    return bytes(data)


def check_regular(mode: int, what: str) -> None:
    if stat.S_ISREG(mode):
        return
    kind = ("a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else
            "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else
            "a directory" if stat.S_ISDIR(mode) else "not a regular file")
    raise RuntimeError(f"engine.load: {what} is {kind}, not a regular file; a checkpoint is read only from "
                       "a regular file (reading this one would not end at the checkpoint's size)")
