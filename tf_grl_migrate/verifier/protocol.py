"""What travels between the main process and the workers, typed, and read strictly.

A request is plain data (``Request``). A worker answers with *values*, never a verdict: the TF1
side the forward values, gradients and variable values it computed (``Ran``), the TF2 side those
of each mode it ran or the error each raised (``Values``), either side a reason it could not run
(``Unverifiable``). The main process decides (``verdict.py``). Every answer is decoded against a
fixed schema: a missing field, a wrong type, an array whose values do not fill its shape, an
oversized answer is a :class:`ProtocolError` (the site is then not verifiable, and the worker
that said it is not used again). No TensorFlow here.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

MAX_ANSWER_BYTES = 64 << 20  # an answer longer than this is refused unread
MAX_ELEMENTS = 1 << 22  # per array


Entry = dict[str, Any]  # a probe's entry (probes.py), as JSON: what to call, and how
Param = dict[str, Any]  # one parameter of a way of calling: its "kind" ("tensor", "tensors", "value", ...), "name"
Setting = dict[str, Any]  # a value for each number parameter (and "__grl_new__": no __init__)
MODES = ("eager", "tf.function")  # what the TF2 side runs, in this order, each at every setting


class ProtocolError(ValueError):
    """An answer that is not one the protocol allows."""


class Status(str, Enum):
    """A site's outcome."""

    VERIFIED = "verified"
    DIFFERS = "differs"
    NOT_VERIFIABLE = "not_verifiable"


class Kind(str, Enum):
    """What a request asks a worker to run."""

    TF1 = "tf1"  # the original under TF1 semantics: the reference values
    TF1_SAME = "tf1_same"  # the migrated text under TF1 semantics, called as the reference was
    TF2 = "tf2"  # the migrated text under TF2: eagerly and in tf.function


@dataclass(frozen=True)
class Request:
    kind: Kind
    path: str  # absolute: its folder is where the project's modules it imports are found
    source: str
    entry: dict  # the probe's entry (probes.py): what to call, and how
    shapes: list  # input shapes to try, in order (TF1); TF2 takes the reference's
    roots: list = field(default_factory=list)
    migrated: dict = field(default_factory=dict)  # TF2: absolute path -> its migrated text (the worker writes
    # it into the child's own folder, and the child reads it as absolute path -> that file)
    written: list | None = None  # TF2 of the tool's migration: the lines the tool wrote
    reference: dict | None = None  # TF1_SAME / TF2: how the reference ran (``Ran.plan()``): no outputs
    first_variant: int = 0  # TF1: the first way of calling to try (a later one, where TF2 could not run an earlier)

    def to_json(self) -> dict:
        data = asdict(self)
        data["kind"] = self.kind.value
        return data

    @classmethod
    def from_json(cls, data: dict) -> Request:
        return cls(**{**data, "kind": Kind(data["kind"])})


@dataclass(frozen=True)
class Array:
    """A float array: its shape and its values, flat, as float64 (float32 values travel exactly)."""

    shape: tuple
    values: tuple

    @property
    def size(self) -> int:
        return len(self.values)

    def to_json(self) -> dict:
        return {"shape": list(self.shape), "values": list(self.values)}


@dataclass(frozen=True)
class RunValues:
    """One call under TF1 semantics at one setting of the number parameters."""

    setting: dict
    y: tuple  # Arrays: the callable's float outputs
    g: tuple  # Arrays: the gradients of the loss with respect to each input
    variables: tuple  # Arrays: every global variable's initial value (TF2 starts its own from them)
    deterministic: bool
    drawn: tuple  # op types that draw random numbers


@dataclass(frozen=True)
class Ran:
    """The TF1 side ran: the way of calling (``variant``), whether the instance was made without
    ``__init__`` (``new``), the input shape, one RunValues per setting; a note for the report."""

    variant: int
    new: bool
    shape: tuple
    results: tuple
    note: str | None = None

    def plan(self) -> dict:
        """How it ran, without its outputs: what the TF2 side is told."""
        return {"variant": self.variant, "new": self.new, "shape": list(self.shape),
                "settings": [r.setting for r in self.results],
                "variables": [[v.to_json() for v in r.variables] for r in self.results],
                "y_shapes": [[list(y.shape) for y in r.y] for r in self.results]}


@dataclass(frozen=True)
class ModeValues:
    """The TF2 side, one mode (``eager`` | ``tf.function``) at one setting."""

    mode: str
    setting: int  # index into the reference's settings
    y: tuple
    g: tuple
    variables: int  # how many variables the migrated code made


@dataclass(frozen=True)
class ModeError:
    """The TF2 side raised in one mode: the error, and the lines of the module (``lines``) and of
    a block under test (``block_lines``) its traceback passed through, for the verdict to tell
    whose code failed."""

    mode: str
    setting: int
    error: str
    lines: tuple = ()
    block_lines: tuple = ()
    missing: str | None = None  # a module that is not installed, where that is why


@dataclass(frozen=True)
class Values:
    """The TF2 side: what each mode gave. ``defined``: the module defines the entry's name."""

    runs: tuple  # ModeValues | ModeError
    defined: bool = True
    note: str | None = None


@dataclass(frozen=True)
class Unverifiable:
    """A side that could not run the callable at all, and why (a module not installed, random
    numbers drawn, every shape raised, script code needed). ``transient``: the machine's doing,
    not the code's (no answer in time, a worker that died): another run may get an answer, so
    the outcome is never stored (``driver.verify_cached``)."""

    reason: str
    transient: bool = False


Answer = (Ran, Values, Unverifiable)


# -- decoding ------------------------------------------------------------------------------------


def _need(data: Any, key: str, kind: Any, where: str) -> Any:  # data: decoded JSON, anything
    if not isinstance(data, dict) or key not in data:
        raise ProtocolError(f"{where}: no {key!r}")
    value = data[key]
    if kind is float:
        return _number(value, f"{where}: {key!r}")
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ProtocolError(f"{where}: {key!r} is not an integer")
        return value
    if not isinstance(value, kind):
        raise ProtocolError(f"{where}: {key!r} is not {kind.__name__ if isinstance(kind, type) else kind}")
    return value


def _optional_text(data: dict, key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ProtocolError(f"{where}: {key!r} is not text")
    return value


def shape_of(shape: Sequence[Any], index: int) -> list[int]:
    """Input ``index``'s shape in a probe's ``shape``: one for every input, or a pair, the first
    input's and the others' (probes.SHAPES: an image and a convolution's filters)."""
    if shape and isinstance(shape[0], (list, tuple)):
        return list(shape[0] if index == 0 else shape[1])
    return list(shape)


def _dims(shape: list) -> bool:
    return all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)


def _array(data: Any, where: str) -> Array:
    shape = _need(data, "shape", list, where)
    values = _need(data, "values", list, where)
    if not _dims(shape):
        raise ProtocolError(f"{where}: a bad shape")
    if math.prod(shape) != len(values) or len(values) > MAX_ELEMENTS:
        raise ProtocolError(f"{where}: {len(values)} values do not fill shape {shape}")
    return Array(tuple(shape), tuple(_number(v, f"{where}: an array value") for v in values))


def _arrays(data: Any, key: str, where: str) -> tuple:
    return tuple(_array(a, f"{where}.{key}[{i}]") for i, a in enumerate(_need(data, key, list, where)))


def _setting(data: Any, where: str) -> dict:
    setting = _need(data, "setting", dict, where)
    for k, v in setting.items():
        if not isinstance(k, str) or not isinstance(v, (int, float, bool)):
            raise ProtocolError(f"{where}: a bad setting")
        if not isinstance(v, bool):
            _number(v, f"{where}: a setting")
    return setting


def _lines(data: dict, key: str, where: str) -> tuple:
    found = data.get(key, [])
    if not isinstance(found, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in found):
        raise ProtocolError(f"{where}: {key!r} is not a list of line numbers")
    return tuple(found)


def loads(line: bytes) -> Any:
    """The JSON value of one line a worker wrote; ProtocolError for anything that is not JSON
    (nested past the parser's depth, numbers past its range, bytes that are not UTF-8)."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise ProtocolError(f"not JSON ({type(exc).__name__})") from None


def decode(kind: Kind, data: Any) -> Ran | Values | Unverifiable:
    """The typed answer to a request of ``kind``; ProtocolError for anything else, whatever
    ``data`` is (the parser is total: no other exception leaves it)."""
    try:
        return _decode(kind, data)
    except ProtocolError:
        raise
    except Exception as exc:  # noqa: BLE001 - a malformed answer, however it is malformed
        raise ProtocolError(f"a malformed answer ({type(exc).__name__})") from None


def _number(value: Any, where: str) -> float:
    """A JSON number as a float: an integer too large for one is refused, not an OverflowError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProtocolError(f"{where}: not a number")
    if isinstance(value, int) and abs(value) > _LARGEST:
        raise ProtocolError(f"{where}: an integer past the float range")
    return float(value)


_LARGEST = int(sys.float_info.max)


def _decode(kind: Kind, data: Any) -> Ran | Values | Unverifiable:
    if not isinstance(data, dict) or len(data) != 1:
        raise ProtocolError("an answer is one object with one key")
    (tag, body), = data.items()
    if tag == "unverifiable":
        reason = _need(body, "reason", str, tag)
        transient = body.get("transient", False)
        if not isinstance(transient, bool):
            raise ProtocolError("unverifiable: a bad 'transient'")
        return Unverifiable(reason[:2000], transient)
    if tag == "ran" and kind in (Kind.TF1, Kind.TF1_SAME):
        results = []
        for i, r in enumerate(_need(body, "results", list, tag)):
            where = f"ran.results[{i}]"
            drawn = _need(r, "drawn", list, where)
            if not all(isinstance(d, str) for d in drawn):
                raise ProtocolError(f"{where}: a bad 'drawn'")
            results.append(RunValues(_setting(r, where), _arrays(r, "y", where), _arrays(r, "g", where),
                                     _arrays(r, "variables", where), _need(r, "deterministic", bool, where),
                                     tuple(drawn)))
        if not results:
            raise ProtocolError("ran: no results")
        shape = _need(body, "shape", list, tag)
        if not (_dims(shape) or (len(shape) == 2 and all(isinstance(s, list) and _dims(s) for s in shape))):
            raise ProtocolError("ran: a bad shape")  # one for every input, or a pair (probes.SHAPES)
        return Ran(_need(body, "variant", int, tag), _need(body, "new", bool, tag), tuple(shape), tuple(results),
                   _optional_text(body, "note", tag))
    if tag == "values" and kind is Kind.TF2:
        runs: list[ModeError | ModeValues] = []
        for i, r in enumerate(_need(body, "runs", list, tag)):
            where = f"values.runs[{i}]"
            mode = _need(r, "mode", str, where)
            if mode not in MODES:
                raise ProtocolError(f"{where}: a bad mode")
            setting = _need(r, "setting", int, where)
            if "error" in r:
                runs.append(ModeError(mode, setting, _need(r, "error", str, where)[:2000], _lines(r, "lines", where),
                                      _lines(r, "block_lines", where), _optional_text(r, "missing", where)))
            else:
                runs.append(ModeValues(mode, setting, _arrays(r, "y", where), _arrays(r, "g", where),
                                       _need(r, "variables", int, where)))
        return Values(tuple(runs), _need(body, "defined", bool, tag), _optional_text(body, "note", tag))
    raise ProtocolError(f"an answer {tag!r} to a {kind.value} request")


# -- encoding (the worker's side) -----------------------------------------------------------------


def encode(answer: Ran | Values | Unverifiable) -> bytes:
    """The JSON bytes of an answer (NaN and infinities as JSON's extensions, which ``decode`` reads)."""
    data: dict[str, Any]
    if isinstance(answer, Unverifiable):
        data = {"unverifiable": {"reason": answer.reason, "transient": answer.transient}}
    elif isinstance(answer, Ran):
        data = {
            "ran": {
                "variant": answer.variant,
                "new": answer.new,
                "shape": list(answer.shape),
                "note": answer.note,
                "results": [
                    {
                        "setting": r.setting,
                        "y": [a.to_json() for a in r.y],
                        "g": [a.to_json() for a in r.g],
                        "variables": [a.to_json() for a in r.variables],
                        "deterministic": r.deterministic,
                        "drawn": list(r.drawn),
                    }
                    for r in answer.results
                ],
            }
        }
    elif isinstance(answer, Values):
        runs: list[dict[str, Any]] = []
        for r in answer.runs:
            if isinstance(r, ModeError):
                runs.append({"mode": r.mode, "setting": r.setting, "error": r.error, "lines": list(r.lines),
                             "block_lines": list(r.block_lines), "missing": r.missing})
            else:
                runs.append({"mode": r.mode, "setting": r.setting, "y": [a.to_json() for a in r.y],
                             "g": [a.to_json() for a in r.g], "variables": r.variables})
        data = {"values": {"runs": runs, "defined": answer.defined, "note": answer.note}}
    else:
        raise TypeError(f"not an answer: {type(answer).__name__}")
    return json.dumps(data).encode("utf-8")
