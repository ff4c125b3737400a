from __future__ import annotations

from ._common import add_json_flag


def add_parser(sub) -> None:
    p = sub.add_parser("experiment", help="run one experiment on fresh isolated repositories")
    p.add_argument("name", metavar="NAME")
    add_json_flag(p)
    p.set_defaults(handler=run)


def run(args) -> dict:
    from labkit.experiments import run_experiment

    return run_experiment(args.name)
