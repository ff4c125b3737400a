"""Context scale: how much code an agent reads to review one change.

- :mod:`.fixtures` builds the projects (real git repositories with a committed
  change and generated noise files);
- :mod:`.pyast` reads Python source with :mod:`ast` (changed functions, calls,
  imports) for strategy D;
- :mod:`.strategies` runs strategies A, B, C and D and measures each one;
- :mod:`.experiment` runs them across project sizes (``labkit experiment
  context-scale``).
"""
