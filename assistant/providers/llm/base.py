"""The chat-completion providers' interface: `complete(system=..., messages=[...])` gives back an LLMReply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypedDict


class ChatMessage(TypedDict):
    role: str  # "user" | "assistant"
    content: str


@dataclass(frozen=True)
class LLMReply:
    text: str
    model: str


class LLMProvider(Protocol):
    # Credits an assistant message costs the user with this provider (docs/decisions.md#what-a-message-costs).
    credit_cost: int

    def complete(
        self, *, system: str, messages: list[ChatMessage], max_tokens: int = 800, json_mode: bool = False
    ) -> LLMReply:
        """Raises core.http.errors.ProviderError (bad answer) or ProviderUnavailable (cannot be reached)."""
        ...
