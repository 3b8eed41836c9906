"""The main process's side of the workers: start them (``zygote.py``, with a scrubbed
environment, in a session of their own), hand each request a random id, and read the answer
strictly: one line, a JSON object with exactly ``id`` and ``answer`` (or ``failure``), the id the
one just given, the answer the protocol's (``protocol.decode``). Anything else (a line too long,
not JSON, another id, a late or doubled answer, silence past the time) is no answer: the request is
not verifiable, saying why, and a worker that broke the protocol is killed and never asked again.
Nothing here imports TensorFlow."""

from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
from typing import Any

from . import isolation
from .protocol import MAX_ANSWER_BYTES, ProtocolError, Request, Unverifiable, decode, loads

MEMORY_CAP = 8 << 30  # bytes of address space a request may map (TensorFlow alone maps ~1 GiB)
START_TIMEOUT = 180.0  # TensorFlow's import
MARGIN = 30.0  # past a request's own time (the worker kills the child at that time and says so)


def _package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Worker:
    """One worker process; started on first use; killed and started afresh after anything that
    is not a well-formed answer of its own."""

    def __init__(self, python: str, folder: str, cap: int = MEMORY_CAP):
        self.python, self.folder, self.cap = python, folder, cap
        self.proc: subprocess.Popen | None = None
        self.lines: queue.Queue = queue.Queue()
        self.broken: str | None = None  # why it could not start: every request gets that answer, none starts it again
        self.hello: dict | None = None

    def start(self) -> bool:
        env = isolation.scrubbed_environment(self.folder, {"PYTHONPATH": os.pathsep.join(
            p for p in [_package_root(), os.environ.get("PYTHONPATH", "")] if p)})
        try:
            self.proc = subprocess.Popen(
                [self.python, "-m", "tf_grl_migrate.verifier.zygote", str(self.cap)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=self.folder, env=env,
                start_new_session=True)
        except OSError as exc:
            self.broken = f"the verification worker could not be started with {self.python}: {exc.strerror or exc}"
            return False
        self.lines = queue.Queue()
        reader = threading.Thread(target=self._read_lines, args=(self.proc, self.lines), daemon=True)
        reader.start()
        hello = self._next(START_TIMEOUT)
        if not isinstance(hello, dict) or hello.get("hello") != 1 or not isinstance(hello.get("tensorflow"), str):
            why = hello.get("error") if isinstance(hello, dict) and isinstance(hello.get("error"), str) else None
            self.stop()
            self.broken = why or "the verification worker did not start (is TensorFlow installed for this Python?)"
            return False
        self.hello = hello
        return True

    @staticmethod
    def _read_lines(proc: subprocess.Popen, lines: queue.Queue) -> None:
        stdout = proc.stdout
        assert stdout is not None  # started with stdout=PIPE
        while True:
            try:
                line = stdout.readline(MAX_ANSWER_BYTES + 4096)
            except (OSError, ValueError):
                line = b""
            lines.put(line)
            if not line:
                return

    def _next(self, timeout: float | None) -> dict | str | None:
        """The next line as JSON: a dict, or a str saying why there is none (None: no line in time)."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return None
        if not line:
            return "the worker ended unexpectedly"
        if not line.endswith(b"\n"):
            return "the worker wrote a line longer than the protocol allows"
        try:
            return loads(line)
        except ProtocolError:
            return "the worker wrote something that is not JSON"

    def ask(self, request: Request, timeout: float) -> Any:
        """The typed answer to ``request``, or Unverifiable saying why there is none (never raises)."""
        if self.broken is None and (self.proc is None or self.proc.poll() is not None):
            self.start()
        if self.broken is not None:
            return _no_answer(self.broken)
        rid = secrets.token_hex(16)
        stdin = self.proc.stdin if self.proc is not None else None
        if stdin is None:
            return _no_answer("the verification worker is not running")
        try:
            stdin.write(json.dumps({"id": rid, "timeout": timeout, "request": request.to_json()}).encode()
                                  + b"\n")
            stdin.flush()
        except (OSError, ValueError):
            self.stop()
            return _no_answer("the worker ended unexpectedly")
        message = self._next(timeout + MARGIN)
        if message is None:
            self.stop()
            return _no_answer(f"timed out after {timeout:g} s (--verify-timeout)")
        if isinstance(message, str):
            self.stop()
            return _no_answer(message)
        if not (isinstance(message, dict) and message.get("id") == rid and len(message) == 2
                and ("answer" in message or "failure" in message)):
            self.stop()  # another request's answer, a forged one, a doubled one: this worker is done
            return _no_answer("the worker's answer broke the protocol (not the answer to this request)")
        if "failure" in message:
            failure = message["failure"]
            return _no_answer(failure if isinstance(failure, str) else "the worker failed")
        try:
            return decode(request.kind, message["answer"])  # the worker's verdict, Unverifiable or not
        except ProtocolError as exc:
            return _no_answer(f"the answer is not one the protocol allows ({exc})")

    def stop(self) -> None:
        if self.proc is not None:
            try:
                if self.proc.stdin is not None:
                    self.proc.stdin.close()
            except (OSError, ValueError):
                pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError, OSError):
                pass
            try:
                self.proc.kill()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self.proc = None


def isolation_line(workers: list) -> str | None:
    """One line on what the workers' children are cut off from (from the first worker that said)."""
    for worker in workers:
        if worker.hello and isinstance(worker.hello.get("isolation"), dict):
            found = worker.hello["isolation"]
            gaps, whys = [], []
            if not found.get("namespaces"):
                gaps.append("reach the network, signal the tool's processes and read their environment (/proc)")
                whys.append(f"no network and PID namespaces: {_said(found.get('why'))}")
            if not found.get("socket_filter"):
                gaps.append("connect to local Unix sockets (an ssh agent, a Docker socket)")
                whys.append(f"no socket filter: {_said(found.get('socket_filter_why'))}")
            if not gaps:
                return None  # the documented isolation: nothing to add
            return (f"verification ran with less isolation here ({'; '.join(whys)}): the code under test could "
                    f"{', and '.join(gaps)}; run untrusted code in a container")
    return None


def _said(why: object) -> str:
    return why[:120] if isinstance(why, str) and why else "unknown"


def python_default() -> str:
    return sys.executable


def _no_answer(why: str) -> Unverifiable:
    """No answer from the worker: the machine's doing (a timeout, a crash, a broken pipe), which
    another run may not meet."""
    return Unverifiable(why, transient=True)
