"""labkit's narrower versions of two detect-secrets filters, loaded by the library by module path.

detect-secrets drops a reported value that looks like a UUID or starts with
``$``, whichever plugin reported it. Both are right for the generic detectors
(a quoted UUID is usually an id; ``$PASSWORD`` is a reference) and wrong for a
value *assigned to a secret's name*: ``api_key = "8c4b...-...-..."`` is how
several services issue API keys, and ``password = "$up3r$ecret!"`` is a
password. These two keep the library's decision except in those cases.

(A module of its own: the library's cache reset clears every cached function
of a filter's module, and :mod:`labkit.boundary.secretscan` keeps caches it should not lose.)
"""

from __future__ import annotations

import re

PATHS = (
    "labkit.boundary.secret_filters.is_uuid_unless_assigned",
    "labkit.boundary.secret_filters.is_variable_reference",
)
#: The stock filters these replace.
REPLACED = (
    "detect_secrets.filters.heuristic.is_potential_uuid",
    "detect_secrets.filters.heuristic.is_prefixed_with_dollar_sign",
)

# $NAME, ${...}, $(...), and a name followed by attribute, member or index access ($cfg->db, $a['b']).
_REFERENCE = re.compile(
    r"\$(?:\{[^}]*\}|\([^)]*\)|[A-Za-z_][A-Za-z0-9_]*(?:(?:->|\.|::)[A-Za-z_][A-Za-z0-9_]*|\[[^\]]*\])*)"
)


def is_uuid_unless_assigned(secret: str, plugin) -> bool:
    """The library's UUID filter, except for the keyword plugin (a UUID assigned to a secret's name)."""
    from detect_secrets.filters.heuristic import is_potential_uuid

    return type(plugin).__name__ != "KeywordDetector" and is_potential_uuid(secret)


def is_variable_reference(secret: str) -> bool:
    """Instead of "starts with ``$``": the whole value is a variable reference (``$X``, ``${X}``, ``$(cmd)``)."""
    return bool(secret) and secret[0] == "$" and bool(_REFERENCE.fullmatch(secret))
