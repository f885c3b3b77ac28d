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
