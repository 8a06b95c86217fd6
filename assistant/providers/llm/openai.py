"""OpenAI-compatible chat completions (`POST {OPENAI_BASE_URL}/chat/completions`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from assistant.providers.llm.base import ChatMessage, LLMReply
from assistant.providers.openai_http import OpenAIClient
from core.http.errors import ProviderError


class OpenAILLM:
    def __init__(self, *, client: OpenAIClient, model: str, credit_cost: int = 0):
        self.client = client
        self.model = model
        self.credit_cost = credit_cost  # a remote model is paid per call, so each message costs its user

    @classmethod
    def from_settings(cls, **client_options: Any) -> OpenAILLM:
        return cls(
            client=OpenAIClient.from_settings(**client_options),
            model=settings.OPENAI_MODEL,
            credit_cost=settings.ASSISTANT_MESSAGE_CREDITS,
        )

    def complete(
        self, *, system: str, messages: list[ChatMessage], max_tokens: int = 800, json_mode: bool = False
    ) -> LLMReply:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}]
            + [{"role": m["role"], "content": m["content"]} for m in messages],
            "max_tokens": max_tokens,
        }
        if json_mode:
            payload["response_format"] = {"type": "json_object"}
        body = self.client.post_json("/chat/completions", payload)
        try:
            text = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ProviderError("The language model answered without a message.") from exc
        if not isinstance(text, str) or not text.strip():
            raise ProviderError("The language model answered with an empty message.")
        model = body.get("model") if isinstance(body.get("model"), str) else self.model
        return LLMReply(text=text.strip(), model=model)
