"""Workspace files as tools: ``read_file``."""
