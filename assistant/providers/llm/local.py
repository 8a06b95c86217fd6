"""The local language model: deterministic templates, no network.

It reads what a remote model would read (the system prompt's `Task:` line and `Context:` facts,
and the conversation) and composes from it: the same input always gives the same output. Free
tools get the JSON they ask for; chat replies say that they come from the local model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from assistant.providers.llm.base import ChatMessage, LLMReply
from assistant.providers.llm.local_tools import brief_suggestions, creative_brief, keywords, taglines

MODEL = "local-template-1"


class LocalLLM:
    model = MODEL
    credit_cost = 0  # it runs here and costs nothing per message

    def complete(
        self, *, system: str, messages: list[ChatMessage], max_tokens: int = 800, json_mode: bool = False
    ) -> LLMReply:
        task = _task(system)
        last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        composer = _TASKS.get(task)
        if composer is not None:
            text = json.dumps(composer(_json_input(last)), ensure_ascii=False)
        else:
            text = _chat(last, _facts(system), messages)[: max_tokens * 4]  # ~4 characters a token
        return LLMReply(text=text, model=MODEL)


# --- Reading the prompt -------------------------------------------------------------------------


def _task(system: str) -> str:
    match = re.search(r"^Task:\s*(\w+)", system, re.MULTILINE)
    return match.group(1) if match else "chat"


def _facts(system: str) -> dict[str, str]:
    block = system.split("Context:", 1)[1] if "Context:" in system else ""
    return dict(re.findall(r"^- ([\w ]+):\s*(.+)$", block, re.MULTILINE))


def _json_input(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# --- Chat ---------------------------------------------------------------------------------------

_CAPABILITIES = (
    "generate images with AllModelChat (POST /api/v1/allmodelchat/generate/image), project ad spend "
    "with the ad simulator (POST /api/v1/ads/simulate), and draft briefs and taglines with the free tools"
)


def _chat(message: str, facts: dict[str, str], messages: list[ChatMessage]) -> str:
    text = message.casefold()
    brands = facts.get("brands", "")
    intro = "(Local model)"
    if re.search(r"\b(credit|credits|balance)\b", text):
        return (
            f"{intro} You have {facts.get('credits', 'an unknown number of')} credits. "
            f"Image models: {facts.get('image models', 'see GET /api/v1/allmodelchat/models')}. "
            "Credits are taken when a generation starts and given back if the provider fails."
        )
    if re.search(r"\b(image|picture|draw|illustration|visual)\b", text):
        return (
            f"{intro} To make an image, send your prompt to POST /api/v1/allmodelchat/generate/image. "
            f"The default model is {facts.get('default image model', 'the local renderer')}; "
            f"you have {facts.get('credits', 'some')} credits. A good prompt names the subject, the mood and "
            "the brand colours."
        )
    if re.search(r"\b(budget|ads?|roas|cpc|ctr|spend|campaign)\b", text):
        return (
            f"{intro} The ad simulator projects clicks, conversions and revenue at several daily budgets from your "
            "current budget, CPC, CTR, conversion rate and order value, with diminishing returns above today's "
            "spend. Try three scenarios around your current budget (half, same, double) and compare revenue "
            "minus spend."
        )
    if re.search(r"\b(tagline|slogan|headline)\b", text):
        topic = " ".join(keywords(message, 2)) or "your brand"
        lines = [f"{topic.title()}, done right.", f"Made for {topic}.", f"Where {topic} gets better."]
        return f"{intro} Three tagline ideas: " + " / ".join(lines)
    if re.search(r"\b(brief|strategy|plan)\b", text):
        return (
            f"{intro} For a creative brief, POST /api/v1/brief/generate with your brand name or website, an "
            "objective, the audience and the channels; you get a key message, tone, deliverables per channel "
            "and KPIs."
        )
    if re.fullmatch(r"\W*(hi|hello|hey|good (morning|afternoon|evening))\b.*", text):
        about = f" for {brands}" if brands and not brands.startswith("none yet") else ""
        return f"{intro} Hello! I can help you{about} {_CAPABILITIES}. What are you working on?"
    topics = keywords(message)
    earlier = sum(1 for m in messages if m["role"] == "user") - 1
    about = f" about {', '.join(topics)}" if topics else ""
    history = f" This is message {earlier + 1} of our conversation." if earlier > 0 else ""
    return (
        f"{intro} I read your message{about}.{history} I am the built-in template model, so I answer best "
        f"about what this platform does: I can help you {_CAPABILITIES}."
    )


_TASKS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "creative_brief": creative_brief,
    "brief_suggestions": brief_suggestions,
    "taglines": taglines,
}
