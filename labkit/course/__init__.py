"""Everything that exists for teaching: labs, checkers, experiments, plots,
widgets, the notebook runner, starters, grading and the report.

The evidence tools (search, diff, review, codesearch, source, ledger, mcp, the
git runner and path rules) never import this package.
"""
