"""A content-addressed cache of migration results, so a repeated run skips libcst's analysis.
Why it is built so: docs/design.md, "migrator/cache.py"."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's own costs ~2 ms, and a repeated run (rerun.py) imports this module
if TYPE_CHECKING:
    from typing import Any

    from ..report import Diagnostic

FORMAT = 2  # 2: each diagnostic carries its hints


def default_dir() -> str:
    explicit = os.environ.get("TF_GRL_MIGRATE_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tf-grl-migrate")


def new_hash(data: bytes = b"") -> Any:
    try:  # what hashlib.blake2b is, without hashlib's load of OpenSSL (~3 ms of every warm run)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter without the builtin module
        from hashlib import blake2b
    return blake2b(data, digest_size=20)


def fingerprint() -> str:
    digest = new_hash(f"format {FORMAT}; python {sys.version_info[:3]}".encode())
    here = _package_dir()
    # every module and data file of the package, not a hand-kept list: a new module that decides
    # results (the safety net) or a regenerated table (the op table) can never give stale hits
    # (its subpackages too: migrator/idioms/, knowledge/)
    for name in _package_files(here):
        with open(os.path.join(here, name), "rb") as handle:
            digest.update(name.encode() + b"\0" + handle.read())
    digest.update(_libcst_version().encode())
    return digest.hexdigest()[:20]


def tool_files() -> list[str]:
    """What ``fingerprint`` reads, as absolute paths, with the package's folders (where a new
    module would appear) and libcst's files: the files a run's results rest on besides the
    user's."""
    here = _package_dir()
    folders, files = _package_tree(here)
    return [*folders, *(os.path.join(here, name) for name in files),
            *(path for path in _libcst_files() if os.path.exists(path))]


def _package_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tf_grl_migrate/


def _package_files(here: str) -> list[str]:
    """Paths (relative, with ``/``) of the package's modules and data files, subpackages included."""
    return _package_tree(here)[1]


def _package_tree(here: str) -> tuple[list[str], list[str]]:
    """(the package's folders, absolute; ``_package_files``), in one walk."""
    folders, found = [], []
    for root, dirs, files in os.walk(here):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        folders.append(root)
        rel = os.path.relpath(root, here).replace(os.sep, "/")
        found += [n if rel == "." else f"{rel}/{n}" for n in files if n.endswith((".py", ".json", ".txt"))]
    return folders, sorted(found)


def _libcst_files() -> list[str]:
    """libcst's module file and its version file (where libcst has one), found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("libcst")
    if spec is None or not spec.origin:
        return []
    return [spec.origin, os.path.join(os.path.dirname(spec.origin), "_version.py")]


def _libcst_version() -> str:
    """libcst's version without importing it (that costs ~0.15 s, which a fully cached run avoids)."""
    found = _libcst_files()
    if not found:
        return "libcst missing"
    try:
        with open(found[1], "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        stat = os.stat(found[0])
        return f"{found[0]} {stat.st_mtime_ns} {stat.st_size}"


class Cache:
    """Picklable (a directory and a fingerprint), so process-pool workers store what they compute."""

    def __init__(self, directory: str | None = None):
        self.root = directory or default_dir()
        self._directory: str | None = None

    @property
    def directory(self) -> str:
        """``root/<fingerprint>``; worked out on first use (a run without candidate files never does)."""
        if self._directory is None:
            self._directory = os.path.join(self.root, fingerprint())
        return self._directory

    def key(self, data: bytes, use_runtime: bool, kind: str) -> str:
        """``kind`` names what ``data`` is: a ``.py`` file's raw bytes, or the glued cells' text."""
        digest = new_hash(data)
        digest.update(f"\0{kind}\0{'use_runtime' if use_runtime else 'inline'}".encode())
        return digest.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key + ".json")

    def get(self, key: str) -> tuple[str | None, list[Diagnostic]] | None:
        """``(new_text, diagnostics)`` or None."""
        import json

        from ..report import Diagnostic

        try:
            with open(self._path(key), encoding="utf-8") as handle:
                data = json.load(handle)
            if data["format"] != FORMAT or data["key"] != key:
                return None
            diagnostics = [Diagnostic(int(line), int(col), str(code), str(message), None,
                                      None if details is None else str(details), tuple(map(str, hints)))
                           for line, col, code, message, details, hints in data["diagnostics"]]
            new_text = data["code"]
            if new_text is not None and not isinstance(new_text, str):
                return None
            return new_text, diagnostics
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def get_data(self, key: str) -> Any:
        """Other plain data stored under ``key`` (a module's facts), or None."""
        import json

        try:
            with open(self._path(key), encoding="utf-8") as handle:
                data = json.load(handle)
            return data["data"] if data["format"] == FORMAT and data["key"] == key else None
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put_data(self, key: str, value: object) -> None:
        import json

        from .files import replace_atomically

        path = self._path(key)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            replace_atomically(path, json.dumps({"format": FORMAT, "key": key, "data": value}).encode("utf-8"))
        except (OSError, UnicodeEncodeError):
            pass

    # -- quiet files: what a warm scan need not read again ------------------------------------
    # path -> signature of a file that held neither an override marker nor a star-import when
    # last read (by this version of the tool: the index lives in its folder).
    def quiet(self) -> dict:
        import json

        try:
            with open(os.path.join(self.directory, "quiet.json"), encoding="utf-8") as handle:
                data = json.load(handle)
            return data["files"] if data.get("format") == FORMAT and isinstance(data.get("files"), dict) else {}
        except (OSError, ValueError, AttributeError):
            return {}

    def put_quiet(self, files: dict) -> None:
        import json

        from .files import replace_atomically

        try:
            os.makedirs(self.directory, exist_ok=True)
            replace_atomically(os.path.join(self.directory, "quiet.json"),
                               json.dumps({"format": FORMAT, "files": files}).encode("utf-8"))
        except (OSError, UnicodeEncodeError):
            pass

    def put(self, key: str, text: str, new_text: str, diagnostics: list[Diagnostic]) -> None:
        import json

        from .files import replace_atomically

        data = {
            "format": FORMAT,
            "key": key,
            "code": None if new_text == text else new_text,
            "diagnostics": [[d.line, d.col, d.code, d.message, d.details, list(d.hints)] for d in diagnostics],
        }
        path = self._path(key)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            replace_atomically(path, json.dumps(data, ensure_ascii=False).encode("utf-8"))
        except (OSError, UnicodeEncodeError):
            pass  # a read-only or full disk only costs speed
