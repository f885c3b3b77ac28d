"""At most one runner per thread: file locks beside a SQLite checkpoint file.

A thread is locked with a one-byte POSIX record lock (`fcntl.lockf`) in `FILE.lock`, at
an offset derived from the thread id. The kernel releases it when the process ends in
any way (SIGKILL included), so a crashed run never leaves a stale lock. POSIX locks
belong to the process, not to a file descriptor: within one process, a registry of held
thread ids keeps two threads apart, and each lock file is open once per process while
any of its locks is held (closing any descriptor of it would drop every lock the process
holds on it); the last release closes it. PostgreSQL stores use advisory locks instead
(`wikireact.storage.postgres.threads`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
from pathlib import Path

_registry_lock = threading.Lock()
_files: dict[str, int] = {}
"""The open descriptor of each lock file in which this process holds a lock."""
_held: set[tuple[str, str]] = set()


def _offset(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()[:7], "big")


def _descriptor(lock_path: str) -> int:
    fd = _files.get(lock_path)
    if fd is None:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        _files[lock_path] = fd
    return fd


def try_lock(lock_path: Path, key: str) -> bool:
    """Take the lock on `key` in `lock_path` if free; return whether it was taken."""
    path = str(lock_path.resolve())
    with _registry_lock:
        if (path, key) in _held:
            return False
        fd = _descriptor(path)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _offset(key))
        except OSError:
            _close_if_unused(path)
            return False
        _held.add((path, key))
        return True


def unlock(lock_path: Path, key: str) -> None:
    """Release a lock taken by `try_lock`."""
    path = str(lock_path.resolve())
    with _registry_lock:
        if (path, key) not in _held:
            return
        _held.discard((path, key))
        fcntl.lockf(_files[path], fcntl.LOCK_UN, 1, _offset(key))
        _close_if_unused(path)


def _close_if_unused(path: str) -> None:
    """Close `path`'s descriptor once no lock in it is held (no lock is dropped by closing then)."""
    if any(held_path == path for held_path, _ in _held):
        return
    fd = _files.pop(path, None)
    if fd is not None:
        os.close(fd)


def held_files() -> set[str]:
    """Return the lock files this process holds a descriptor of (each holds a lock)."""
    with _registry_lock:
        return set(_files)
