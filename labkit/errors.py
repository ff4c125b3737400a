"""The one error type labkit raises across its public surface.

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


# Error codes shared across commands (see CONTRACT.md).
INVALID_ARGUMENT = "invalid_argument"
INVALID_PATH = "invalid_path"
PATH_OUTSIDE_WORKSPACE = "path_outside_workspace"
SENSITIVE_PATH = "sensitive_path"
NOT_A_REPOSITORY = "not_a_repository"
GIT_FAILED = "git_failed"
GIT_TIMEOUT = "git_timeout"
GIT_NOT_FOUND = "git_not_found"
OUTPUT_TOO_LARGE = "output_too_large"
ENGINE_UNAVAILABLE = "engine_unavailable"
