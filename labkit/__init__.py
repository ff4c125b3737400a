"""labkit: trustworthy code evidence for AI coding agents, as teaching labs."""

__version__ = "0.1.0"
