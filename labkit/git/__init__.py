"""The git evidence: status, the diff, its pager and snapshots, and git's raw listing parsed once."""
