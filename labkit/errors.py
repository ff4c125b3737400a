"""The one error type labkit raises across its public surface.

Codes are the contract's strings (``invalid_argument``, ``not_a_repository``,
``git_timeout`` ...), written where they are raised so a reader sees them.

Every failure a user can trigger carries a stable ``code`` from the contract
and a message written for people: relative paths only, no raw git stderr.
"""
from __future__ import annotations


class LabkitError(Exception):
    """A failure with a stable, machine-readable code."""

    def __init__(self, code: str, message: str, *, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    def to_json(self) -> dict:
        return {"error": {"code": self.code, "message": self.message}}

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"LabkitError({self.code!r}, {self.message!r})"
