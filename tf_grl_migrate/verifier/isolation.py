"""Where the user's code runs: a child the worker forks for each request, cut off as far as the
kernel allows without privileges (Linux). (Why: docs/design.md, "verifier/isolation.py".)"""

from __future__ import annotations

import ctypes
import json
import os
import signal

CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWPID = 0x10000000, 0x40000000, 0x20000000
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
NPROC = 512  # processes and threads the request may have (TensorFlow's thread pools fit)
ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "LD_LIBRARY_PATH", "SYSTEMROOT", "PYTHONHASHSEED")


def scrubbed_environment(folder: str, extra: dict) -> dict:
    """The environment a worker starts with: what TensorFlow and Python need to start, nothing
    inherited beyond that (no tokens, no cloud credentials)."""
    env = {k: os.environ[k] for k in ENVIRONMENT if k in os.environ}
    env.update({"HOME": folder, "TMPDIR": folder, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "-1",
                "PYTHONDONTWRITEBYTECODE": "1", "TF_ENABLE_ONEDNN_OPTS": "0", "PYTHONNOUSERSITE": "1"})
    env.update(extra)
    return env


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - not a Linux-like system
        return None


def _die_with_parent(expected_parent: int | None) -> None:
    libc = _libc()
    if libc is not None and hasattr(libc, "prctl"):
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if expected_parent is not None and os.getppid() != expected_parent:  # it died before this could see it
        os._exit(1)


def adopt_orphans() -> bool:
    """Make the calling worker a subreaper: a process a request's code starts and leaves behind
    (double fork, ``setsid``, a cleared parent-death signal) comes to it when its parent ends,
    never to init, so the worker's sweep (``descendants``) finds it. Whether the kernel agreed."""
    libc = _libc()
    return libc is not None and hasattr(libc, "prctl") and libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (its children, theirs, ...), read from /proc; empty where
    there is no /proc."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # ended meanwhile
        fields = stat[stat.rfind(b")") + 2:].split()  # after the command name, which may hold anything
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _namespaces() -> str | None:
    """Enter new user, network and PID namespaces; None when done, else why not."""
    libc = _libc()
    if libc is None or not hasattr(libc, "unshare"):
        return "no unshare() on this system"
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID) != 0:
        return f"unshare: {os.strerror(ctypes.get_errno())}"
    try:
        with open("/proc/self/setgroups", "w") as handle:
            handle.write("deny")
        with open("/proc/self/uid_map", "w") as handle:
            handle.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as handle:
            handle.write(f"{gid} {gid} 1")
    except OSError as exc:
        return f"user namespace map: {exc.strerror or exc}"
    return None


# A seccomp filter (classic BPF) the request's process installs on itself: socket(AF_UNIX) and
# socketpair(AF_UNIX) fail with EPERM (no ssh agent, Docker or D-Bus socket reachable by path),
# and so does every system call of another ABI (x32, a 32-bit program it runs) and io_uring
# (whose operations pass no filter). Per architecture: (audit arch, socket, socketpair, io_uring_setup).
_SYSCALLS = {"x86_64": (0xC000003E, 41, 53, 425), "aarch64": (0xC00000B7, 198, 199, 425)}
_LD, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
_DENY, _ALLOW = 0x00050000 | 1, 0x7FFF0000  # SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_ALLOW
PR_SET_SECCOMP, SECCOMP_MODE_FILTER, PR_SET_NO_NEW_PRIVS = 22, 2, 38


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def no_local_sockets() -> str | None:
    """Install the filter above on the calling process (and all it starts); None when done,
    else why not."""
    import platform
    import socket

    numbers = _SYSCALLS.get(platform.machine())
    libc = _libc()
    if numbers is None or libc is None or not hasattr(libc, "prctl"):
        return f"no socket filter for {platform.machine() or 'this machine'}"
    arch, make, pair, uring = numbers
    program = [(_LD, 0, 0, 4), (_JEQ, 0, 7, arch),  # another ABI: denied
               (_LD, 0, 0, 0), (_JGE, 5, 0, 0x40000000), (_JEQ, 4, 0, uring),  # x32, io_uring: denied
               (_JEQ, 1, 0, make), (_JEQ, 0, 3, pair),  # neither socket nor socketpair: allowed
               (_LD, 0, 0, 16), (_JEQ, 0, 1, socket.AF_UNIX),  # the family (first argument)
               (_RET, 0, 0, _DENY), (_RET, 0, 0, _ALLOW)]
    filters = (_SockFilter * len(program))(*(_SockFilter(*step) for step in program))
    fprog = _SockFprog(len(program), filters)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.prctl(
            PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f"seccomp: {os.strerror(ctypes.get_errno())}"
    return None


def probe() -> dict:
    """What isolation this machine gives a request: a child tries the namespaces and the limits."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read)
        why = _namespaces()
        sockets = no_local_sockets()
        os.write(write, json.dumps([why, sockets]).encode()[:1000])
        os._exit(0)
    os.close(write)
    chunks = []
    while True:
        chunk = os.read(read, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    try:
        why, sockets = json.loads(b"".join(chunks))
    except ValueError:
        why, sockets = "the probe did not answer", "the probe did not answer"
    return {"namespaces": not why, "why": why or None, "socket_filter": not sockets, "socket_filter_why": sockets}


def enter(answer_fd: int, folder: str, memory_cap: int, namespaces: bool) -> None:
    """Cut the calling child off (see the module's docstring). Returns in the process that runs
    the request; with namespaces that is a grandchild, the PID namespace's init, and the child
    between waits for it and exits with it."""
    parent = os.getppid()
    os.setsid()
    _die_with_parent(parent)
    isolated = namespaces and _namespaces() is None
    if isolated:
        pid = os.fork()
        if pid != 0:  # the child between: waits for the request's process, then ends with it
            os.close(answer_fd)
            _close_all_but(-1)
            os.waitpid(pid, 0)
            os._exit(0)
        _die_with_parent(None)  # its parent is outside its PID namespace: getppid() says 0
    _limits(memory_cap, isolated)
    no_local_sockets()  # where the probe found it unavailable, the run's one line said so
    _close_all_but(answer_fd)
    os.chdir(folder)
    import tempfile

    tempfile.tempdir = folder
    os.environ["TMPDIR"] = folder


def _limits(memory_cap: int, isolated: bool) -> None:
    """Hard limits (in a user namespace even root cannot raise them). Processes are limited only
    there: elsewhere the kernel counts every process of the user on the machine."""
    import resource

    for limit, value in ((resource.RLIMIT_AS, memory_cap), (resource.RLIMIT_NPROC, NPROC if isolated else 0),
                         (resource.RLIMIT_CORE, 0)):
        if not value and limit != resource.RLIMIT_CORE:
            continue
        try:
            _soft, hard = resource.getrlimit(limit)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (cap, cap))
        except (ValueError, OSError):
            pass


def _close_all_but(keep: int) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    top = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 4096
    if keep >= 3:
        os.closerange(3, keep)
        os.closerange(keep + 1, top)
    else:
        os.closerange(3, top)
