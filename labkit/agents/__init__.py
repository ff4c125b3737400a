"""The agent surfaces: the MCP server and its client helpers, and the audit ledger."""
