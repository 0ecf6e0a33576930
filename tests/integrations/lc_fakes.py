"""LangChain test doubles that the framework itself provides, and a recorder of model inputs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool


class ToolCallingFakeModel(GenericFakeChatModel):
    """langchain-core's fake chat model, accepting tools (agents bind them before calling)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ToolCallingFakeModel:  # type: ignore[override]
        return self


class ModelInputRecorder(BaseCallbackHandler):
    """Every message list a chat model was started with, in order."""

    def __init__(self) -> None:
        self.inputs: list[list[BaseMessage]] = []

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        self.inputs.extend(list(batch) for batch in messages)


@tool
def station_log(station: str) -> str:
    """Read a weather station's hourly log (long)."""
    return "\n".join(f"{station} hour {hour}: 14 C, wind 12 km/h, dry" for hour in range(24))


@tool
def station_alert(station: str) -> str:
    """The current alert of a weather station (short)."""
    return f"{station}: no alert"


def tool_script(stations: Sequence[str]) -> list[AIMessage]:
    """A model that reads every station's log, then its alert, then answers."""
    script: list[AIMessage] = []
    for number, station in enumerate(stations):
        script.append(
            AIMessage(
                "",
                tool_calls=[
                    {"name": "station_log", "args": {"station": station}, "id": f"log{number}"},
                    {"name": "station_alert", "args": {"station": station}, "id": f"al{number}"},
                ],
            )
        )
    script.append(AIMessage(f"All {len(stations)} stations are dry and calm."))
    return script
