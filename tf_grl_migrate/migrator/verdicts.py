"""What the migrator decides about a site or a registration, as values: a :class:`Refusal` is
returned by the rule that decides it (a check, a settle rule) and carried as it is; nothing
edits another rule's message. A hint composes into a refusal by name (``with_hint``), where the
message marks its place, or after it."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Hint:
    name: str  # "helper": GRL102's private-helper hint; "runtime": what --use-runtime would do
    text: str


@dataclass(frozen=True)
class Refusal:
    """A refusal: the GRL code, the message, the hints that compose into it, and whether it
    already says what ``--use-runtime`` does with the block (then no runtime hint is added)."""

    code: str
    message: str
    hints: tuple = ()  # of Hint
    says_runtime: bool = False

    def text(self) -> str:
        """The message a user reads: each hint where ``place(name)`` marks it, else after it."""
        out = self.message
        for hint in self.hints:
            mark = place(hint.name)
            out = out.replace(mark, hint.text) if mark in out else out + hint.text
        return out

    def with_hint(self, name: str, text: str) -> Refusal:
        """This refusal with the hint ``name`` (replaced where it had one)."""
        kept = tuple(h for h in self.hints if h.name != name)
        return replace(self, hints=(*kept, Hint(name, text)))

    def hint(self, name: str) -> str | None:
        return next((h.text for h in self.hints if h.name == name), None)


def place(name: str) -> str:
    """Where a hint goes in a message (a mark no message holds otherwise)."""
    return f"\0{name}\0"
