"""Scorers: one relevance score per item (see :mod:`pycupel.scorers.base` for the contract)."""

from pycupel.scorers.base import BaseScorer, FunctionScorer, ItemScorer, Scorer, as_scorer

__all__ = ["BaseScorer", "FunctionScorer", "ItemScorer", "Scorer", "as_scorer"]
