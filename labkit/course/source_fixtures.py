"""The synthetic world of the pinned-source lab: two repositories and a deployment table.

``build_world()`` makes, in a temp folder::

    deployments.json          the config (repos + deployment table)
    repos/frontend            Python: api.py, checkout.py        (v1, v2 commits)
    repos/backend             Python: router.py, rules.py, pricing.py (v1, v2 commits)

The backend's v1 asks the customer to confirm a new price when the *rule
version* changed; v2 asks only when the *total* changed. store-001 runs v1
throughout September; store-002 moves to v2 in the middle of the month, the
frontend a few days before the backend. Both working trees are left dirty on
purpose (an uncommitted edit to ``pricing.py`` and an untracked scratch file),
so a reader that opened the checkout instead of git objects would be caught.

The backend also holds entries a reader must refuse even when a careless
allowed-files list names them: a symlink, a folder, a submodule, a file over
32 KiB and a ``.env``. The lab's own config does not list them; tests write
configs that do (``PinnedWorld.write_config``).

Commit ids are deterministic (fixed identity and dates in ``IsolatedRepo``), so
a checker that rebuilds the world sees the same ids as the learner.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from labkit.course.repo_builder import IsolatedRepo

BRAND = "demo-brand"
STORE_1 = f"{BRAND}/store-001"
STORE_2 = f"{BRAND}/store-002"
INCIDENT_AT = "2026-09-18T14:00:00+08:00"
#: The synthetic request: the customer saw 3,200 cents under rule r1; the rule now is r2, still 3,200.
REQUEST = {"quote_version": "r1", "quoted_total_cents": 3200}
CONFIG_NAME = "deployments.json"

ALLOWED = {
    "frontend": ["api.py", "checkout.py"],
    "backend": ["pricing.py", "router.py", "rules.py"],
}
#: Backend entries that exist at both commits but must never be read as files.
HAZARDS = {
    "symlink": "current_pricing.py",
    "tree": "docs",
    "submodule": "vendor/sdk",
    "large": "generated_rates.py",
    "sensitive": ".env",
}

# ---------------------------------------------------------------------------
# Source files (synthetic, public; written for this lab)

RULES_PY = '''"""The pricing rule the backend applies right now (synthetic data)."""

ACTIVE_RULE = {"version": "r2", "total_cents": 3200}


def active_rule():
    """A copy of the rule in force."""
    return dict(ACTIVE_RULE)
'''

ROUTER_PY = '''"""Routes API paths to their handlers (backend)."""
import pricing
import rules

ROUTES = {"/checkout/quote": pricing.quote}


def handle(path, body):
    """Answer one API request."""
    handler = ROUTES.get(path)
    if handler is None:
        return {"code": "NOT_FOUND"}
    return handler(body, rules.active_rule())
'''

_PRICING = '''"""Checkout quote check (backend, {version}).

The page sends back the quote the customer saw. This decides whether the
customer has to confirm a new price before paying.
"""


def quote(body, rule):
    """Compare the quote the customer saw with the rule in force."""
    if {condition}:
        return {{"code": "PRICE_CHANGED", "total_cents": rule["total_cents"]}}
    return {{"code": "OK", "total_cents": rule["total_cents"]}}
'''
CONDITIONS = {
    "v1": 'body["quote_version"] != rule["version"]',
    "v2": 'body["quoted_total_cents"] != rule["total_cents"]',
}
PRICING_PY = {v: _PRICING.format(version=v, condition=c) for v, c in CONDITIONS.items()}

API_PY = '''"""Client for the checkout API (frontend)."""

QUOTE_PATH = "/checkout/quote"


def request_quote(cart, send):
    """Ask the backend whether the quote the customer saw still holds."""
    payload = {
        "quote_version": cart["quote_version"],
        "quoted_total_cents": cart["quoted_total_cents"],
    }
    return send(QUOTE_PATH, payload)
'''

_CHECKOUT = '''"""Turns the backend's quote answer into a page action (frontend, {version})."""
from api import request_quote

PRICE_NOTICE = "Price updated, please confirm again"


def confirm(cart, send):
    """What the checkout page does after asking for a quote."""
    result = request_quote(cart, send)
    if result["code"] == "PRICE_CHANGED":
        return {{"action": "show_notice", "text": PRICE_NOTICE,
                "code": result["code"], "total_cents": result["total_cents"]}}
    return {{"action": "show_quote", "text": {quote_text},
            "code": result["code"], "total_cents": result["total_cents"]}}
'''
CHECKOUT_PY = {
    "v1": _CHECKOUT.format(version="v1", quote_text='"Please confirm your order"'),
    "v2": _CHECKOUT.format(version="v2", quote_text='"Total: %.2f" % (result["total_cents"] / 100)'),
}

DIRTY_PRICING = PRICING_PY["v2"].replace(
    "    if body", "    # WORK IN PROGRESS, never deployed: trying a looser rule\n    if False and body"
)
SCRATCH_PY = "# local notes, not committed\nprint('debugging checkout')\n"


def _source_files(repo: str, version: str) -> dict[str, str]:
    if repo == "frontend":
        return {"api.py": API_PY, "checkout.py": CHECKOUT_PY[version]}
    return {"rules.py": RULES_PY, "router.py": ROUTER_PY, "pricing.py": PRICING_PY[version]}


def condition_line(version: str) -> int:
    """1-based line of the backend ``if`` that decides PRICE_CHANGED in ``version``."""
    for number, line in enumerate(PRICING_PY[version].split("\n"), start=1):
        if line.strip().startswith("if ") and CONDITIONS[version] in line:
            return number
    raise ValueError(version)  # pragma: no cover - the sources above define it


def _large_module() -> str:
    rows = [f"RATE_{i:04d} = {i * 7 % 1000}  # generated, do not edit\n" for i in range(1200)]
    return '"""Generated rate table (far over the 32 KiB read budget)."""\n' + "".join(rows)


#: The deployment table: (target, repo, release, from, until). Half-open [from, until).
TABLE = [
    (STORE_1, "frontend", "v1", "2026-09-01T00:00:00+08:00", "2026-10-01T00:00:00+08:00"),
    (STORE_1, "frontend", "v2", "2026-10-01T00:00:00+08:00", None),
    (STORE_1, "backend", "v1", "2026-09-01T00:00:00+08:00", "2026-10-01T00:00:00+08:00"),
    (STORE_1, "backend", "v2", "2026-10-01T00:00:00+08:00", None),
    (STORE_2, "frontend", "v1", "2026-09-01T00:00:00+08:00", "2026-09-12T10:00:00+08:00"),
    (STORE_2, "frontend", "v2", "2026-09-12T10:00:00+08:00", None),
    (STORE_2, "backend", "v1", "2026-09-01T00:00:00+08:00", "2026-09-15T00:00:00+08:00"),
    (STORE_2, "backend", "v2", "2026-09-15T00:00:00+08:00", None),
]


@dataclass
class PinnedWorld:
    base: Path
    config_path: Path
    repos: dict[str, IsolatedRepo]
    commits: dict[str, dict[str, str]]  # repo -> release -> commit
    owned: bool = True
    extra_configs: list[Path] = field(default_factory=list)

    def release_of(self, repo: str, commit: str) -> str | None:
        for release, sha in self.commits[repo].items():
            if sha == commit:
                return release
        return None

    def deployments(self, table=None) -> list[dict]:
        rows = TABLE if table is None else table
        return [
            {
                "target": t,
                "repo": r,
                "commit": self.commits[r][rel] if rel in self.commits[r] else rel,
                "release": rel,
                "from": f,
                "until": u,
            }
            for t, r, rel, f, u in rows
        ]

    def config_data(self, allowed: dict[str, list[str]] | None = None, table=None) -> dict:
        allowed = {**ALLOWED, **(allowed or {})}
        return {
            "repos": {name: {"path": f"repos/{name}", "allowedFiles": list(allowed[name])} for name in self.repos},
            "deployments": self.deployments(table),
        }

    def write_config(
        self, name: str, *, allowed: dict[str, list[str]] | None = None, table=None, data: dict | None = None
    ) -> Path:
        """Write another config next to the lab's (tests use it for careless or broken tables)."""
        path = self.base / name
        path.write_text(json.dumps(data if data is not None else self.config_data(allowed, table), indent=2), "utf-8")
        self.extra_configs.append(path)
        return path

    def cleanup(self) -> None:
        if self.owned:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> PinnedWorld:
        return self

    def __exit__(self, *exc) -> None:
        self.cleanup()


def _add_gitlink(repo: IsolatedRepo, rel: str, commit: str) -> None:
    """A submodule entry (gitlink) without cloning, so no absolute path enters the history."""
    repo.write(".gitmodules", f'[submodule "{rel}"]\n\tpath = {rel}\n\turl = ../sdk-source\n')
    repo.abspath(rel).mkdir(parents=True, exist_ok=True)  # an uninitialised submodule: empty folder
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{commit},{rel}")


def _build_repo(base: Path, name: str, sdk: IsolatedRepo) -> tuple[IsolatedRepo, dict[str, str]]:
    repo = IsolatedRepo(base / "repos" / name)
    commits: dict[str, str] = {}
    repo.write_many(_source_files(name, "v1"))
    if name == "backend":
        repo.write("docs/notes.md", "# Backend notes\n\nQuote rules live in pricing.py.\n")
        repo.write(HAZARDS["large"], _large_module())
        repo.write(HAZARDS["sensitive"], "PAYMENT_API_TOKEN=fake-token-for-the-lab\n")
        repo.symlink(HAZARDS["symlink"], "pricing.py")
        _add_gitlink(repo, HAZARDS["submodule"], sdk.head())
        repo.commit("backend v1: confirm again when the rule version changes")
    else:
        repo.commit("frontend v1: checkout page and quote client")
    commits["v1"] = repo.head()
    repo.tag("v1")
    repo.write_many(_source_files(name, "v2"))
    repo.commit(
        f"{name} v2: "
        + ("confirm again only when the total changed" if name == "backend" else "show the total on the confirmation")
    )
    commits["v2"] = repo.head()
    repo.tag("v2")
    # Leave the checkout dirty on purpose: readers must not see this.
    if name == "backend":
        repo.write("pricing.py", DIRTY_PRICING)
    repo.write("scratch.py", SCRATCH_PY)
    return repo, commits


def build_world(base: str | Path | None = None) -> PinnedWorld:
    """Build the two repositories and ``deployments.json`` (in a new temp folder by default)."""
    owned = base is None
    root = Path(tempfile.mkdtemp(prefix="labkit-pinned-")) if owned else Path(base)
    root.mkdir(parents=True, exist_ok=True)
    sdk = IsolatedRepo(root / "sdk-source")
    sdk.write("sdk.py", "def ping():\n    return 'pong'\n")
    sdk.commit("sdk")
    repos, commits = {}, {}
    for name in ("frontend", "backend"):
        repos[name], commits[name] = _build_repo(root, name, sdk)
    world = PinnedWorld(base=root, config_path=root / CONFIG_NAME, repos=repos, commits=commits, owned=owned)
    world.config_path.write_text(json.dumps(world.config_data(), indent=2), "utf-8")
    return world
