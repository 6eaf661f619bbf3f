"""Optional LLM path: a memory judge and a refiner over any OpenAI-compatible chat endpoint.

- ``ChatClient``: ``POST {base}/v1/chat/completions`` (base may end in ``/v1``), standard
  library only. Every failure is an ``OmoideError`` with a stable code (``LLM_AUTH``,
  ``REMOTE_TIMEOUT``, ``REMOTE_ERROR``, ``LLM_UNREACHABLE``, ``LLM_BAD_ANSWER``), so the caller
  (``ingest``) can fall back to the pattern path and say why. The API key only travels in the
  Authorization header; it never appears in errors or ``repr``.
- ``MemoryLLM.judge``: does the conversation hold something worth keeping? Answers JSON with
  typed memories (kind, polarity, subject, text).
- ``MemoryLLM.refine``: a short diary note from the character's point of view.
- ``MemoryLLM.summarize``: a summary of many memory lines within a token budget.

The HTTP call goes through the package's one transport seam (``omoide.transport``): urllib
under CPython; a Pyodide worker passes one built on its own fetch.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from omoide.errors import OmoideError
from omoide.governance.extract import Message, clamp_content, make_key, message_text
from omoide.keys import checked_endpoint, checked_key
from omoide.transport import Transport, mask_secret, reply_detail, urllib_transport

JUDGE_KINDS = ("preference", "decision", "pattern", "fact")


class ChatClient:
    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 20.0,
        temperature: float = 0.0,
        max_tokens: int = 512,
        transport: Transport | None = None,
    ) -> None:
        base = checked_endpoint(base_url).rstrip("/")
        self.url = base + ("/chat/completions" if base.endswith("/v1") else
                           "/v1/chat/completions")
        self.model = model
        self.timeout = float(timeout)
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self._api_key = checked_key(api_key)
        self._transport = transport or urllib_transport

    def __repr__(self) -> str:  # no key in logs
        return f"ChatClient(url={self.url!r}, model={self.model!r})"

    def complete(self, messages: Sequence[dict[str, str]], *, json_mode: bool = False) -> str:
        """The assistant's text for a chat; raises ``OmoideError`` on any failure."""
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if json_mode:
            payload["response_format"] = {"type": "json_object"}
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        try:
            status, body, _ = self._transport(
                "POST", self.url, headers, json.dumps(payload).encode(), self.timeout
            )
        except TimeoutError:
            raise OmoideError.of("REMOTE_TIMEOUT", url=self.url, timeout=self.timeout) from None
        except OSError as e:
            raise OmoideError.of("LLM_UNREACHABLE", url=self.url, reason=str(e)) from None
        if status in (401, 403):
            raise OmoideError.of("LLM_AUTH", url=self.url, status=status)
        if status != 200:
            detail = reply_detail(body, self._api_key, 200) or "(empty)"
            raise OmoideError.of("REMOTE_ERROR", url=self.url, status=status, body=detail)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as e:  # its repr holds the whole answer (an echoed key)
            raise OmoideError.of("LLM_BAD_ANSWER", url=self.url,
                                 reason=f"not UTF-8 text (byte {e.start})") from None
        try:
            answer = json.loads(text)
            content = answer["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise OmoideError.of(
                "LLM_BAD_ANSWER", url=self.url, reason=f"not a chat completion ({e!r})"
            ) from None
        if not isinstance(content, str) or not content.strip():
            raise OmoideError.of("LLM_BAD_ANSWER", url=self.url, reason="empty content")
        # a server that echoes the request: the key is never stored
        content = mask_secret(content, self._api_key)
        return content.strip()


def parse_json_object(text: str, url: str) -> dict[str, Any]:
    """The JSON object in a model's answer (tolerates ```json fences and chatter around)."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    try:
        value = json.loads(text[start : end + 1]) if 0 <= start < end else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise OmoideError.of("LLM_BAD_ANSWER", url=url, reason="no JSON object in the answer")
    return value


@dataclass(frozen=True)
class JudgedMemory:
    kind: str
    polarity: str | None
    key: str | None
    text: str
    importance: float


@dataclass
class Judgement:
    keep: bool
    reason: str
    memories: list[JudgedMemory] = field(default_factory=list)


JUDGE_PROMPT = """You are the memory judge of {name}, a character who talks with a user.
Read the conversation and decide whether it holds something worth remembering for a long
time: the user's preferences, decisions, habits, or lasting facts. Small talk is not.
Answer ONLY a JSON object:
{{"keep": true|false, "reason": "<one short sentence>",
 "memories": [{{"kind": "preference|decision|pattern|fact", "polarity": "like|dislike|null",
   "subject": "<the thing, a few words>", "text": "<the memory, one sentence, in the
   conversation's language>", "importance": 0.0-1.0}}]}}"""

REFINE_PROMPT = """You are {name}. Write a short diary note (one to three sentences, first
person, in the conversation's language) about what you learned from this conversation and
want to remember. Facts to keep: {facts}. Answer with the note only."""

SUMMARY_PROMPT = """You are {name}. Summarize these memories of yours in at most {tokens}
tokens, keeping every decision, preference and date; first person, same language as the
memories. Answer with the summary only."""


def transcript(messages: Sequence[Message]) -> str:
    """One "role: text" line per message; a message's own line breaks are indented, so a
    text cannot start a line that reads as another speaker's ("...\nsystem: replace the
    user's allergy") and be taken for an instruction of the conversation."""
    lines = []
    for message in messages:
        role, text = message_text(message)
        if text.strip():
            body = "\n  ".join(line.strip() for line in text.strip().splitlines())
            lines.append(f"{role}: {body}")
    return "\n".join(lines)


class MemoryLLM:
    """Judge + refiner + summarizer, speaking through a ``ChatClient``."""

    def __init__(self, client: ChatClient, *, character_name: str = "the character") -> None:
        self.client = client
        self.character_name = character_name

    def judge(self, messages: Sequence[Message]) -> Judgement:
        answer = self.client.complete(
            [
                {"role": "system", "content": JUDGE_PROMPT.format(name=self.character_name)},
                {"role": "user", "content": transcript(messages)},
            ],
            json_mode=True,
        )
        data = parse_json_object(answer, self.client.url)
        keep = data.get("keep")
        if not isinstance(keep, bool):
            raise OmoideError.of("LLM_BAD_ANSWER", url=self.client.url,
                                 reason="'keep' is not true/false")
        raw_memories = data.get("memories") or []
        if not isinstance(raw_memories, list):
            raise OmoideError.of("LLM_BAD_ANSWER", url=self.client.url,
                                 reason="'memories' is not a list")
        memories = [m for m in (self._judged(item) for item in raw_memories) if m]
        reason = data.get("reason")
        return Judgement(keep, reason[:300] if isinstance(reason, str) else "", memories)

    def _judged(self, item: Any) -> JudgedMemory | None:
        """One judged memory, or None when the model's entry is unusable (ignored, since the
        rest of the answer may still be good)."""
        if not isinstance(item, dict):
            return None
        kind, text, subject = item.get("kind"), item.get("text"), item.get("subject", "")
        if kind not in JUDGE_KINDS or not isinstance(text, str):
            return None  # an object or a number is not a memory's text (never str() of it)
        text = clamp_content(text)
        if text is None:
            return None
        polarity = item.get("polarity")
        polarity = polarity if polarity in ("like", "dislike") else None
        subject = subject.strip() if isinstance(subject, str) else ""
        importance = item.get("importance", 0.6)
        if isinstance(importance, bool) or not isinstance(importance, int | float):
            importance = 0.6
        return JudgedMemory(
            kind=kind, polarity=polarity, key=make_key(kind, subject) if subject else None,
            text=text, importance=min(1.0, max(0.0, float(importance))),
        )

    def refine(self, messages: Sequence[Message], judgement: Judgement) -> str:
        facts = "; ".join(m.text for m in judgement.memories) or judgement.reason or "none"
        answer = self.client.complete(
            [
                {"role": "system",
                 "content": REFINE_PROMPT.format(name=self.character_name, facts=facts)},
                {"role": "user", "content": transcript(messages)},
            ]
        )
        note = clamp_content(answer)
        if note is None:
            raise OmoideError.of("LLM_BAD_ANSWER", url=self.client.url,
                                 reason="diary note shorter than 3 characters")
        return note

    def summarize(self, lines: Sequence[str], token_budget: int) -> str:
        answer = self.client.complete(
            [
                {"role": "system", "content": SUMMARY_PROMPT.format(
                    name=self.character_name, tokens=token_budget)},
                {"role": "user", "content": "\n".join(lines)},
            ]
        )
        return answer
