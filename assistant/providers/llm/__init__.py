"""Chat completion behind one small interface.

    provider = get_llm_provider()
    reply = provider.complete(system="...", messages=[{"role": "user", "content": "..."}])
    reply.text, reply.model

`local` (the default) runs here: deterministic templates that compose replies and copy from the
inputs and the user's data, and say that they come from the local model. `openai` calls an
OpenAI-compatible chat-completions API (OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL).

Prompts may carry a `Task: <name>` line (a free tool asking for JSON) and a `Context:` block of
`- key: value` lines (facts about the user); the local model reads both, a remote one reads them
as plain instructions.
"""

from __future__ import annotations

from django.conf import settings

from assistant.providers.llm.base import ChatMessage, LLMProvider, LLMReply
from assistant.providers.llm.local import LocalLLM
from assistant.providers.llm.openai import OpenAILLM

__all__ = ["ChatMessage", "LLMProvider", "LLMReply", "get_llm_provider"]


def get_llm_provider(name: str | None = None) -> LLMProvider:
    name = name or settings.LLM_PROVIDER
    if name == "openai":
        return OpenAILLM.from_settings()
    return LocalLLM()
