from __future__ import annotations

import json

import httpx
import pytest

from assistant.providers.llm import LLMReply, get_llm_provider
from assistant.providers.llm.local import MODEL, LocalLLM
from assistant.providers.llm.openai import OpenAILLM
from assistant.providers.openai_http import OpenAIClient
from core.http.errors import ProviderError, ProviderUnavailable

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "  Hello from the API.  "}}],
}


class Recorder:
    """An httpx MockTransport that answers from a script and keeps the requests it saw."""

    def __init__(self, *responses: httpx.Response | Exception):
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


def _llm(recorder: Recorder, waits: list[float], **options) -> OpenAILLM:
    client = OpenAIClient(
        api_key="sk-test",
        base_url="https://llm.example/v1/",
        max_retries=options.pop("max_retries", 3),
        transport=recorder.transport,
        sleep=waits.append,
    )
    return OpenAILLM(client=client, model="gpt-4o-mini")


def test_openai_sends_the_exact_chat_completion_request():
    recorder, waits = Recorder(httpx.Response(200, json=COMPLETION)), []

    reply = _llm(recorder, waits).complete(
        system="Be brief.", messages=[{"role": "user", "content": "Hi"}], max_tokens=50
    )

    assert reply == LLMReply(text="Hello from the API.", model="gpt-4o-mini-2024-07-18")
    [request] = recorder.requests
    assert request.method == "POST"
    assert str(request.url) == "https://llm.example/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        "max_tokens": 50,
    }
    assert waits == []


def test_openai_asks_for_json_when_told_to():
    recorder = Recorder(httpx.Response(200, json=COMPLETION))

    _llm(recorder, []).complete(system="s", messages=[{"role": "user", "content": "{}"}], json_mode=True)

    assert json.loads(recorder.requests[0].content)["response_format"] == {"type": "json_object"}


def test_openai_retries_a_429_then_succeeds():
    recorder, waits = (
        Recorder(httpx.Response(429, json={"error": {"message": "slow down"}}), httpx.Response(200, json=COMPLETION)),
        [],
    )

    reply = _llm(recorder, waits).complete(system="s", messages=[{"role": "user", "content": "Hi"}])

    assert reply.text == "Hello from the API."
    assert len(recorder.requests) == 2
    assert waits == [0.5]  # the first backoff step


def test_openai_honours_a_short_retry_after_and_caps_long_ones():
    recorder, waits = (
        Recorder(
            httpx.Response(503, headers={"Retry-After": "2"}),
            httpx.Response(503, headers={"Retry-After": "3600"}),
            httpx.Response(200, json=COMPLETION),
        ),
        [],
    )

    _llm(recorder, waits).complete(system="s", messages=[{"role": "user", "content": "Hi"}])

    assert waits == [2.0, 8.0]


def test_openai_gives_up_after_the_retries_with_a_provider_error():
    recorder, waits = Recorder(httpx.Response(500, json={"error": {"message": "boom"}})), []

    with pytest.raises(ProviderError) as caught:
        _llm(recorder, waits, max_retries=3).complete(system="s", messages=[{"role": "user", "content": "Hi"}])

    assert caught.value.code == "provider_error"
    assert len(recorder.requests) == 4  # one try and three retries
    assert waits == [0.5, 1.0, 2.0]


def test_openai_network_failure_is_provider_unavailable_after_retries():
    recorder, waits = Recorder(httpx.ConnectError("refused")), []

    with pytest.raises(ProviderUnavailable):
        _llm(recorder, waits, max_retries=2).complete(system="s", messages=[{"role": "user", "content": "Hi"}])

    assert len(recorder.requests) == 3


def test_openai_does_not_retry_a_refusal_and_does_not_leak_its_message():
    recorder = Recorder(httpx.Response(401, json={"error": {"message": "Incorrect API key provided: sk-te***"}}))

    with pytest.raises(ProviderError) as caught:
        _llm(recorder, []).complete(system="s", messages=[{"role": "user", "content": "Hi"}])

    assert len(recorder.requests) == 1
    assert "sk-te" not in caught.value.message


@pytest.mark.parametrize(
    "body", [{"choices": []}, {"choices": [{"message": {"content": ""}}]}, {"nothing": True}, ["not", "an", "object"]]
)
def test_openai_unusable_answers_are_provider_errors(body):
    recorder = Recorder(httpx.Response(200, json=body))

    with pytest.raises(ProviderError):
        _llm(recorder, []).complete(system="s", messages=[{"role": "user", "content": "Hi"}])


def test_openai_without_a_key_is_unavailable(settings):
    settings.LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = ""

    with pytest.raises(ProviderUnavailable):
        get_llm_provider()


def test_the_default_provider_is_the_local_model(settings):
    assert settings.LLM_PROVIDER == "local"
    assert isinstance(get_llm_provider(), LocalLLM)


def test_local_chat_is_deterministic_says_so_and_uses_the_users_facts():
    system = (
        "You are helpful.\n\nContext:\n- name: alice@example.com\n- credits: 7\n"
        "- image models: local-canvas-1 (1 credit)"
    )
    messages = [{"role": "user", "content": "How many credits do I have?"}]

    first = LocalLLM().complete(system=system, messages=messages)
    second = LocalLLM().complete(system=system, messages=messages)

    assert first == second
    assert first.model == MODEL
    assert first.text.startswith("(Local model)")
    assert "You have 7 credits" in first.text
    assert "local-canvas-1 (1 credit)" in first.text


def test_local_chat_greets_for_the_users_brands_and_otherwise_reflects_the_message():
    system = "Context:\n- brands: Acme (acme.example, retail)"

    hello = LocalLLM().complete(system=system, messages=[{"role": "user", "content": "Hello!"}])
    other = LocalLLM().complete(system=system, messages=[{"role": "user", "content": "Sustainable packaging ideas"}])

    assert "Hello! I can help you for Acme (acme.example, retail)" in hello.text
    assert "sustainable" in other.text and "packaging" in other.text


def test_local_tool_tasks_answer_json_built_from_the_inputs():
    inputs = {"brand_name": "Northwind", "objective": "leads", "audience": "cafe owners", "channels": ["linkedin"]}

    reply = LocalLLM().complete(
        system="Task: creative_brief\nWrite a brief.", messages=[{"role": "user", "content": json.dumps(inputs)}]
    )

    brief = json.loads(reply.text)
    assert brief["key_message"] == "Talk to Northwind: the expertise cafe owners are looking for."
    assert brief["deliverables"] == [
        {
            "channel": "linkedin",
            "format": "Sponsored content",
            "description": "A single-image post and a document ad for decision makers",
        }
    ]
    assert brief["kpis"] == ["Cost per lead", "Lead volume", "Lead-to-qualified rate"]
