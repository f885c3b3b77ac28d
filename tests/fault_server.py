"""A local HTTP server on 127.0.0.1 that answers through a handler and injects faults.

`FaultServer(respond, faults)` serves every request with `respond(method, path, query,
body) -> (status, headers, body)`, except the requests whose number the `faults`
schedule maps to a fault: 429 (with or without Retry-After), 500/503, a reply slower
than the client's timeout, truncated JSON, or HTML instead of JSON.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlparse

from support import TOOLS_RUN

Reply = tuple[int, dict[str, str], bytes]
FAULTS = ["429-retry-after", "429", "500", "503", "slow", "truncated", "html"]


class FaultServer:
    def __init__(
        self,
        respond: Callable[[str, str, dict[str, str], bytes], Reply],
        faults: Callable[[int], str | None],
        slow_s: float = 2.0,
    ) -> None:
        self.respond, self.faults, self.slow_s = respond, faults, slow_s
        self.count = 0
        self.injected: dict[str, int] = {}
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with server._lock:
                    server.count += 1
                    fault = server.faults(server.count)
                    if fault:
                        server.injected[fault] = server.injected.get(fault, 0) + 1
                url = urlparse(self.path)
                status, headers, payload = server.respond(
                    method, url.path, dict(parse_qsl(url.query, keep_blank_values=True)), body
                )
                headers = {"Content-Type": "application/json", **headers}
                if fault == "429-retry-after":
                    status, headers, payload = (
                        429,
                        {"Retry-After": "0.2", "Content-Type": "application/json"},
                        b'{"error": {"message": "rate limited"}}',
                    )
                elif fault == "429":
                    status, payload = 429, b'{"error": {"message": "rate limited"}}'
                elif fault in ("500", "503"):
                    status, payload = int(fault), b'{"error": {"message": "server error"}}'
                elif fault == "slow":
                    time.sleep(server.slow_s)
                elif fault == "truncated":
                    payload = payload[: len(payload) // 2]
                elif fault == "html":
                    headers, payload = (
                        {"Content-Type": "text/html"},
                        b"<html><body>502 Bad Gateway</body></html>",
                    )
                try:
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def every_third_of_ten(kinds: list[str]) -> Callable[[int], str | None]:
    """30% of requests fault (numbers ending in 2, 5, 8), cycling through `kinds`; never two in a row."""

    def schedule(n: int) -> str | None:
        if n % 10 not in (2, 5, 8):
            return None
        fault_number = (n // 10) * 3 + (2, 5, 8).index(n % 10)
        return kinds[fault_number % len(kinds)]

    return schedule


def json_reply(data: Any) -> Reply:
    return 200, {}, json.dumps(data).encode()


def chat_completion(message: dict[str, Any], finish_reason: str, prompt_tokens: int) -> Reply:
    """An OpenAI-compatible (Groq) chat completion of one `message`, 10 reply tokens."""
    return json_reply(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "qwen/qwen3.6-27b",
            "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": 10,
                "total_tokens": prompt_tokens + 10,
            },
        }
    )


def groq_tool_reply(
    method: str, path: str, query: dict[str, str], body: bytes
) -> tuple[int, dict, bytes]:
    """An OpenAI-compatible chat completion answering with TOOLS_RUN's tool calls by step."""
    request = json.loads(body)
    assert path == "/openai/v1/chat/completions"
    assert [t["function"]["name"] for t in request["tools"]] == ["search", "lookup", "finish"]
    messages = request["messages"]
    start = max(
        i for i, m in enumerate(messages) if str(m.get("content")).startswith("Question: Were")
    )
    episode = messages[start + 1 :]
    for asked, answered in zip(episode[0::2], episode[1::2], strict=True):
        assert asked["role"] == "assistant" and answered["role"] == "tool"
        assert answered["tool_call_id"] == asked["tool_calls"][0]["id"]
        assert answered["content"].endswith("»")
    step = len(episode) // 2
    planned = TOOLS_RUN[step]
    assert isinstance(planned, dict)
    call = {
        "id": f"call_groq_{step}",
        "type": "function",
        "function": {"name": planned["tool"], "arguments": json.dumps(planned["args"])},
    }
    message = {"role": "assistant", "content": planned["content"], "tool_calls": [call]}
    return chat_completion(message, "tool_calls", 100 + step)
