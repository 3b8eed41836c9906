"""What the migrator decides about a site or a registration, as values: a :class:`Refusal` is
returned by the rule that decides it (a check, a settle rule) and carried as it is; its words are
one of its code's messages in the table of codes (``Refusal.of``), and a refusal that gives
another's reason passes that reason's sentence and details on as fields. A hint is a field of its
own (``with_hint``): the diagnostic shows it after the message, never inside it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..codes import say
from ..report import Diagnostic


@dataclass(frozen=True)
class Hint:
    """What else would work, beside a refusal's message: ``text`` a short clause (the diagnostic's
    line shows it in parentheses), ``details`` what it adds to the details."""

    name: str  # "helper": GRL102's private-helper hint; "runtime": what --use-runtime would do
    text: str
    details: str = ""


@dataclass(frozen=True)
class Refusal:
    """A refusal: the GRL code, its message (one sentence) and details, both said from the table
    of codes (``of``), its hints, and whether it already says what ``--use-runtime`` does with the
    block (then no runtime hint is added)."""

    code: str
    message: str
    details: str = ""
    hints: tuple[Hint, ...] = ()
    says_runtime: bool = False

    @classmethod
    def of(cls, code: str, key: str, /, *, hints: tuple[Hint, ...] = (), says_runtime: bool = False,
           **fields: object) -> Refusal:
        """The refusal that says ``code``'s message ``key`` (codes.TABLE) over ``fields``."""
        message, details = say(code, key, **fields)
        return cls(code, message, details, hints, says_runtime)

    def passed_on(self) -> dict[str, Any]:
        """This refusal as the fields of one that gives it as its reason (GRL110's "kept as it
        is: {why}"): its sentence (``why``) and details, its hints, its word on --use-runtime."""
        return {"why": self.message, "details": self.details, "hints": self.hints, "says_runtime": self.says_runtime}

    def with_hint(self, name: str, text: str) -> Refusal:
        """This refusal with the hint ``name`` (replaced where it had one)."""
        kept = tuple(h for h in self.hints if h.name != name)
        return replace(self, hints=(*kept, Hint(name, text)))

    def hint(self, name: str) -> str | None:
        return next((h.text for h in self.hints if h.name == name), None)

    def diagnostic(self, position: tuple[int, int], *more: Hint) -> Diagnostic:
        """The diagnostic a user reads at ``position``: the message, each hint (its own and
        ``more``) as a field, and every details after the message's own."""
        hints = (*self.hints, *more)
        said = " ".join(part for part in (self.details, *(h.details for h in hints)) if part)
        return Diagnostic.at(position, self.code, self.message, details=said or None,
                             hints=tuple(h.text for h in hints))
