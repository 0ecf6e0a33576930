"""Policies: named, immutable, file-backed descriptions of a pipeline.

* :class:`Policy`, :class:`ScorerSpec`, :class:`SlicerSpec`, :class:`CurveSpec`,
  :class:`QuotaSpec`, :class:`CountQuotaSpec`, :class:`StepWindowSpec` — the model
  (:mod:`pycupel.policy.model`);
* :func:`load_policy`, :func:`loads_policy`, :func:`save_policy`, :func:`dumps_policy` —
  JSON and TOML files (:mod:`pycupel.policy.files`);
* :func:`build_pipeline` / :meth:`Policy.build` — a policy plus a budget gives a pipeline;
* :func:`policy_json_schema` — the JSON Schema of the file format.

The reference presets live in :mod:`pycupel.presets`.
"""

from pycupel.policy.build import build_pipeline, build_placer, build_scorer, build_slicer
from pycupel.policy.files import (
    DEFAULT_MAX_BYTES,
    dumps_policy,
    load_policy,
    loads_policy,
    save_policy,
)
from pycupel.policy.model import (
    CountQuotaSpec,
    CurveSpec,
    Policy,
    QuotaSpec,
    ScorerSpec,
    SlicerSpec,
    StepWindowSpec,
)
from pycupel.policy.schema import policy_json_schema

__all__ = [
    "DEFAULT_MAX_BYTES",
    "CountQuotaSpec",
    "CurveSpec",
    "Policy",
    "QuotaSpec",
    "ScorerSpec",
    "SlicerSpec",
    "StepWindowSpec",
    "build_pipeline",
    "build_placer",
    "build_scorer",
    "build_slicer",
    "dumps_policy",
    "load_policy",
    "loads_policy",
    "policy_json_schema",
    "save_policy",
]
