"""Replay engines: ``local`` (a process pool on this machine) and ``ray`` (Ray Data).

Both run the same two steps (:mod:`pycupel.replay.tasks`) and return the same rows in the same
order; ``engines.ray`` imports Ray only when it runs.
"""

ENGINES = ("local", "ray")

__all__ = ["ENGINES"]
