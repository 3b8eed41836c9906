"""What the migrator decides about a site or a registration, as values: a :class:`Refusal` is
returned by the rule that decides it (a check, a settle rule) and carried as it is; nothing
edits another rule's message. A hint is a field of its own (``with_hint``): the diagnostic shows
it after the message, never inside it."""

from __future__ import annotations

from dataclasses import dataclass, replace

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
    """A refusal: the GRL code, the message (``"sentence\\ndetails"``), its hints, and whether it
    already says what ``--use-runtime`` does with the block (then no runtime hint is added)."""

    code: str
    message: str
    hints: tuple[Hint, ...] = ()
    says_runtime: bool = False

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
        sentence, _, details = self.message.partition("\n")
        said = " ".join(part for part in (details.strip(), *(h.details for h in hints)) if part)
        return Diagnostic.at(position, self.code, sentence, details=said or None, hints=tuple(h.text for h in hints))
