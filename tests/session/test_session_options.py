"""Every adapter's ``Session`` passes the engine's options through ``SessionOptions``, and
the store's (``store``, ``key``, ``on_conflict``) to its ``ChatSession``."""

from __future__ import annotations

import importlib
import inspect

import pytest

from pycupel.errors import SessionConfigError
from pycupel.session import EngineOptions, SessionCore, SessionOptions
from pycupel.session.chat import SESSION_DEFAULTS
from pycupel.session.options import STORE_OPTIONS

ADAPTERS = ["openai", "anthropic", "responses", "gemini", "langchain"]


def _keywords(function: object) -> set[str]:
    return {
        parameter.name
        for parameter in inspect.signature(function).parameters.values()  # type: ignore[arg-type]
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }


def test_session_options_are_exactly_the_engine_options_and_the_stores() -> None:
    """An option added to the engine and not to ``EngineOptions`` (or the reverse) fails
    here: it would otherwise be out of reach of every adapter's Session."""
    engine = set(EngineOptions.__optional_keys__) | set(EngineOptions.__required_keys__)
    assert engine == _keywords(SessionCore.__init__) - {"budget"}
    options = set(SessionOptions.__optional_keys__) | set(SessionOptions.__required_keys__)
    assert options == engine | STORE_OPTIONS
    assert not SessionOptions.__required_keys__


@pytest.mark.parametrize("name", ADAPTERS)
def test_every_adapter_session_takes_each_option_and_validates_it(name: str) -> None:
    session_class = importlib.import_module(f"pycupel.adapters.{name}").Session
    # The signature lists every engine option by name, with its default.
    parameters = inspect.signature(session_class).parameters
    options = set(SessionOptions.__optional_keys__)
    assert {"budget", "overhead"} | options <= _keywords(session_class.__init__)
    defaults = inspect.signature(SessionCore.__init__).parameters
    for option in options - STORE_OPTIONS:
        assert parameters[option].default == defaults[option].default, option
    for option in STORE_OPTIONS:
        assert parameters[option].default == SESSION_DEFAULTS[option], option
    # Passed through: the engine validates each one and names it.
    for option, bad in [("compact_at", 1.5), ("grid", 0), ("recall_share", -0.1)]:
        with pytest.raises(SessionConfigError, match=option):
            session_class(budget=2_000, **{option: bad})
    for option, bad in [("on_conflict", "wait"), ("key", "conversation-1"), ("store", object())]:
        with pytest.raises(SessionConfigError, match=option):
            session_class(budget=2_000, **{option: bad})
    with pytest.raises(TypeError, match="compact_att"):
        session_class(budget=2_000, compact_att=0.5)
