"""The boundary: opening a root once, git against a private config, descriptor reads, path rules,
secret detection, the output gate, errors."""
