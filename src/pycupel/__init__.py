"""pycupel: decide what goes into a language model's context window.

Candidate items and a token budget go in; the best subset that fits comes out, ordered for the
model's attention, with a reason for every inclusion and exclusion. Implements the Cupel
specification (classify, score, deduplicate, sort, slice, place).
"""

from pycupel.errors import CupelError
from pycupel.model import (
    ContextBudget,
    ContextItem,
    ContextKind,
    ContextSource,
    OverflowStrategy,
    ScoredItem,
    compute_effective_budget,
)

__version__ = "0.1.0"

__all__ = [
    "ContextBudget",
    "ContextItem",
    "ContextKind",
    "ContextSource",
    "CupelError",
    "OverflowStrategy",
    "ScoredItem",
    "__version__",
    "compute_effective_budget",
]
