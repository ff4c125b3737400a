"""An agent in the loop: scripted policies review through labkit's MCP tools, and a bench scores them.

- :mod:`.protocol`: what a policy sees (:class:`TaskView`, :class:`ToolResult`) and answers
  (:class:`Call`, :class:`Answer`, :class:`Citation`);
- :mod:`.tasks`: the task format and the committed set (``data/agent-tasks.jsonl``, made by
  :mod:`.taskgen`); :mod:`.worlds`: the repositories tasks run in;
- :mod:`.harness`: one fresh ``labkit mcp serve --ledger`` per episode (forked from a warm
  :mod:`.server_pool`), the policy in the loop, citations checked from the ledger alone
  (:mod:`labkit.agents.ledger.citations`), outcomes and the policy x defect table;
- :mod:`.policies`: ``careful`` and the ``naive-*`` habits;
- :mod:`.seed_server`: the seed-faithful server that removes one guarantee at a time;
- :mod:`.worker`: a policy from source, in a process of its own that never holds a gold answer.

``labkit eval agent`` and the ``agent-bench`` experiment run it; lab 12 is the capstone.
"""

__all__ = ["INSUFFICIENT", "WITHHELD", "Answer", "Call", "Citation", "TaskView", "ToolInfo", "ToolResult"]


def __getattr__(name: str):
    # Lazily: ``labkit eval``'s parser imports this package's cli module on every start.
    if name in __all__:
        from labkit.course.agents import protocol

        return getattr(protocol, name)
    raise AttributeError(name)
