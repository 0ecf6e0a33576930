"""Policy replay over logged traffic: what each request would have looked like, and cost,
under each policy.

Logs are JSON Lines or Parquet, one logged request per line or row
(:mod:`pycupel.replay.schema`). For every request and policy the replay computes the tokens
before and after fitting, the messages kept and dropped by role and kind, whether the fitted
history is valid, the predicted input cost with prompt caching, the evidence recall when the
request is labelled, and the time the fit took (:mod:`pycupel.replay.compute`). The rows go to
one Parquet file (:mod:`pycupel.replay.output`), a terminal summary and an HTML report
(:mod:`pycupel.replay.report`).

Engines: ``local`` (a process pool, streaming) and ``ray`` (Ray Data), with identical rows.
Needs ``pip install 'pycupel[replay]'`` (pyarrow) and, for Ray, ``'pycupel[ray]'``.

    >>> from pycupel import presets
    >>> from pycupel.replay import ReplayConfig, ReplayPolicy
    >>> config = ReplayConfig(policies=(ReplayPolicy("chat", presets.chat()),), budget=4_000)
    >>> config.on_error
    'fail'
"""

from pycupel.replay.compute import (
    FORMAT_PRICES,
    NONDETERMINISTIC_COLUMNS,
    ReplayConfig,
    ReplayPolicy,
)
from pycupel.replay.run import ReplayResult, replay_logs
from pycupel.replay.schema import FORMAT_NAMES, LoggedRequest

__all__ = [
    "FORMAT_NAMES",
    "FORMAT_PRICES",
    "NONDETERMINISTIC_COLUMNS",
    "LoggedRequest",
    "ReplayConfig",
    "ReplayPolicy",
    "ReplayResult",
    "replay_logs",
]
