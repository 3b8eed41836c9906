"""A verification worker: ``python -m tf_grl_migrate.verifier.zygote MEMORY_CAP``.

Started by the main process (``pool.py``) with ``--verify`` / ``--verify-against`` only. It
imports TensorFlow once and never runs the user's code itself: for each request (one JSON line on
stdin) it forks a child, which cuts itself off (``isolation.py``), becomes TF1 or TF2
(``tf1.py``, ``tf2.py``), runs the request and writes its answer to a pipe of its own. The worker
waits for that answer up to the request's time, kills the child's process group whatever
happened, and writes one line: ``{"id": ..., "answer": ...}`` or ``{"id": ..., "failure": why}``.
A child that runs past its time, dies, or writes something too long or not JSON is a failure of
that request only: every request gets a fresh child of an untouched worker, so nothing one file's
code did reaches the next. The worker ends when its stdin closes (the tool ended, or was killed),
killing any child it still has.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time

from .protocol import MAX_ANSWER_BYTES, ProtocolError, loads

MAX_REQUEST_BYTES = 256 << 20


def _child(request: dict, answer_fd: int, folder: str, cap: int, namespaces: bool) -> None:  # pragma: no cover
    """In the forked child: cut off, become TF1 or TF2, answer. Never returns."""
    try:
        from . import isolation

        isolation.enter(answer_fd, folder, cap, namespaces)
        data = _answer(request)
    except BaseException as exc:  # noqa: BLE001 - the child must answer something, then end
        from .protocol import Unverifiable, encode

        data = encode(Unverifiable(f"the worker's child failed before it could run the request: "
                                   f"{type(exc).__name__}: {str(exc)[:200]}", transient=True))
    try:
        view = memoryview(data)
        while view:
            written = os.write(answer_fd, view)
            view = view[written:]
    finally:
        os._exit(0)


def _answer(request: dict) -> bytes:
    from .calling import describe
    from .protocol import Kind, Request, Unverifiable, encode

    req = Request.from_json(request)
    _no_network()
    try:
        side = importlib.import_module(f"{__package__}.{'tf2' if req.kind is Kind.TF2 else 'tf1'}")
        side.setup()
        return encode(side.answer(req))
    except Exception as exc:  # noqa: BLE001 - the user's code, any error
        return encode(Unverifiable("the definitions could not be loaded: " + describe(exc)))


def _no_network() -> None:
    """A second belt where namespaces are not available: Python's sockets refuse to connect."""
    import socket

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("verification runs without network access")

    for owner, name in ((socket.socket, "connect"), (socket.socket, "connect_ex"), (socket, "create_connection")):
        setattr(owner, name, refuse)


class _Requests:
    """Lines of stdin, read from the descriptor itself (so that ``serve`` can watch it too: the
    tool ending closes it, and a child still running is then killed at once)."""

    def __init__(self, fd: int = 0):
        self.fd, self.buffer, self.ended = fd, b"", False

    def fill(self) -> None:
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            self.ended = True
        self.buffer += chunk
        if len(self.buffer) > MAX_REQUEST_BYTES:
            raise ValueError("a request longer than the protocol allows")

    def line(self) -> bytes | None:
        while b"\n" not in self.buffer:
            if self.ended:
                return None
            self.fill()
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


REQUESTS = _Requests()


def _own_copies(request: dict, folder: str) -> dict:
    """The request with the run's migrated modules (``migrated``: path -> text, as the main
    process sent them) written into the child's own folder: no child reads a file another child
    could have written."""
    files = {}
    for i, (path, text) in enumerate(sorted((request.get("migrated") or {}).items())):
        target = os.path.join(folder, "migrated", str(i), os.path.basename(path))
        os.makedirs(os.path.dirname(target))
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
        files[path] = target
    return {**request, "migrated": files}


def serve(message: dict, cap: int, namespaces: bool, root: str) -> dict:
    """One request: a child runs it; its answer, or why there is none."""
    rid, timeout, request = message["id"], float(message["timeout"]), message["request"]
    folder = tempfile.mkdtemp(prefix="request-", dir=root)
    request = _own_copies(request, folder)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        _child(request, write, folder, cap, namespaces)
    os.close(write)
    chunks, size, why = [], 0, None
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                why = f"timed out after {timeout:g} s (--verify-timeout)"
                break
            ready, _, _ = select.select([read, REQUESTS.fd], [], [], left)
            if REQUESTS.fd in ready:
                REQUESTS.fill()
                if REQUESTS.ended:  # the tool ended while the child ran: end both now
                    _kill_group(pid)
                    os._exit(0)
            if read not in ready:
                continue
            chunk = os.read(read, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                why = f"the answer was longer than {MAX_ANSWER_BYTES >> 20} MB"
                break
            chunks.append(chunk)
    finally:
        os.close(read)
        _kill_group(pid)
        _, status = os.waitpid(pid, 0)
        _sweep()
        shutil.rmtree(folder, ignore_errors=True)
    if why is not None:
        return {"id": rid, "failure": why}
    if not chunks:
        return {"id": rid, "failure": f"the child ended without an answer ({_ended(status)}: out of memory, a crash "
                                      "in TensorFlow, or the code under test ended the process)"}
    try:
        return {"id": rid, "answer": loads(b"".join(chunks))}  # the one parser (nesting, huge numbers)
    except ProtocolError:
        return {"id": rid, "failure": "the child's answer is not JSON"}


def _kill_group(pid: int) -> None:
    """The child's process group (its own session: it and what it started), else the child."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _sweep() -> None:
    """Nothing the request started outlives it: every process still below this worker (one
    request at a time: all are the request's) is killed and reaped, those that left the child's
    process group (``setsid``) or its parent (adopted here, a subreaper) too. Killing a PID
    namespace's init ends the whole namespace."""
    from .isolation import descendants

    for _ in range(100):  # a process forking as fast as it can is outrun within a few rounds
        found = descendants(os.getpid())
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:  # reap the ones that are (or became) this worker's children
            try:
                reaped, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if reaped == 0:
                time.sleep(0.001)
                break


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.WEXITSTATUS(status)}"


# What the worker and its children import after the user's code may have run (lazily, inside
# functions): imported here first, so that a module of that name in the user's tree, or one a
# child wrote, is never what they get.
LATE_IMPORTS = ("ctypes", "resource", "socket", "symtable", "tempfile", "traceback", "importlib.util",
                "importlib.abc")  # numpy, keras and TensorFlow: imported by main() itself, first
OWN_MODULES = ("calling", "isolation", "loading", "protocol", "script", "tf1", "tf2")


def _start_folder_off_the_path() -> None:
    """``python -m`` puts the start folder (the run's shared temporary folder, which every child
    can write) first on ``sys.path``: it goes, before anything is imported."""
    here = os.path.abspath(os.getcwd())
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != here]


def _import_ahead() -> None:
    for name in LATE_IMPORTS:
        importlib.import_module(name)
    for name in OWN_MODULES:
        importlib.import_module(f"{__package__}.{name}")


def main(argv: list[str] | None = None) -> int:
    _start_folder_off_the_path()
    argv = sys.argv[1:] if argv is None else argv
    cap = int(argv[0]) if argv else 0
    answers = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # TensorFlow's and the user's prints never reach the protocol
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - held for the worker's life

    def say(data: dict) -> None:
        answers.write(json.dumps(data).encode("utf-8") + b"\n")

    try:
        import keras  # noqa: F401  (imported once here: every child has it)
        import numpy  # noqa: F401
        import tensorflow as tf
    except Exception as exc:  # noqa: BLE001
        say({"hello": 0, "error": f"TensorFlow could not be imported: {type(exc).__name__}: {exc}"[:500]})
        return 1
    try:
        _import_ahead()
    except Exception as exc:  # noqa: BLE001
        say({"hello": 0, "error": f"the verifier's modules could not be imported: {type(exc).__name__}: {exc}"[:500]})
        return 1
    from . import isolation

    isolation.adopt_orphans()
    found = isolation.probe()
    say({"hello": 1, "tensorflow": tf.__version__, "isolation": found})
    root = os.getcwd()
    while True:
        try:
            line = REQUESTS.line()
        except ValueError:
            return 1
        if line is None:
            return 0  # the tool ended (or was killed): nothing of ours is left running
        try:
            message = json.loads(line)
            answer = serve(message, cap, found["namespaces"], root)
        except (ValueError, KeyError, TypeError) as exc:
            answer = {"id": None, "failure": f"a request the worker cannot read: {exc}"}
        say(answer)


if __name__ == "__main__":
    raise SystemExit(main())
