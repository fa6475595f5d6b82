"""`Arbor` and `AsyncArbor`: the HTTP API of `arbor serve --http`, one method per endpoint.

Every request runs in the scope the server gives the token (a tenant's conversation or
project); nothing here can name a namespace. Requests are built once (`_Call`) and sent by the
sync or async transport, so both clients say exactly the same to the server."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union, cast

import httpx

from .errors import ArborError, Unavailable, error_for
from .types import (
    BatchResult,
    CompactPack,
    Corrected,
    Forgotten,
    Message,
    Node,
    PendingItem,
    Reviewed,
    SaveResult,
    SearchHit,
    Status,
)

API = "/api/v1/memory"
DEFAULT_URL = "http://127.0.0.1:7300"


@dataclass
class _Call:
    """One request: what to send and which part of the answer to return."""

    method: str
    path: str
    body: Optional[Dict[str, Any]] = None
    params: Dict[str, Any] = field(default_factory=dict)
    headers: Dict[str, str] = field(default_factory=dict)
    key: Optional[str] = None  # return answer[key] instead of the whole answer


def _without_none(fields: Mapping[str, Any]) -> Dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


def _save_fields(
    text: str,
    kind: Optional[str],
    title: Optional[str],
    labels: Optional[Sequence[str]],
    valid_from: Optional[str],
    observed_at: Optional[str],
    message_id: Optional[str],
) -> Dict[str, Any]:
    return _without_none(
        {
            "text": text,
            "kind": kind,
            "title": title,
            "labels": list(labels) if labels is not None else None,
            "valid_from": valid_from,
            "observed_at": observed_at,
            "message_id": message_id,
        }
    )


class _Calls:
    """The requests, shared by both clients."""

    @staticmethod
    def add(text: str, **fields: Any) -> _Call:
        return _Call("POST", "/upsert", _save_fields(text, **fields))

    @staticmethod
    def add_batch(items: Iterable[Mapping[str, Any]]) -> _Call:
        return _Call("POST", "/upsert_batch", {"items": [dict(item) for item in items]})

    @staticmethod
    def add_messages(messages: Iterable[Mapping[str, Any]], observed_at: Optional[str]) -> _Call:
        body = _without_none({"messages": [dict(m) for m in messages], "observed_at": observed_at})
        return _Call("POST", "/messages", body)

    @staticmethod
    def search(query: str, limit: Optional[int]) -> _Call:
        return _Call("POST", "/search", _without_none({"query": query, "limit": limit}), key="hits")

    @staticmethod
    def retrieve(query: str, full: bool, **options: Any) -> _Call:
        body = _without_none({"query": query, "format": "full" if full else "compact", **options})
        return _Call("POST", "/retrieve", body)

    @staticmethod
    def get(id: str) -> _Call:
        return _Call("GET", "/get", params={"id": id})

    @staticmethod
    def correct(id: str, version: int, text: str, title: Optional[str]) -> _Call:
        body = _without_none({"id": id, "version": version, "text": text, "title": title})
        return _Call("POST", "/correct", body)

    @staticmethod
    def forget(id: str) -> _Call:
        return _Call("POST", "/forget", {"id": id})

    @staticmethod
    def pending() -> _Call:
        return _Call("GET", "/review", key="items")

    @staticmethod
    def review(id: str, decision: str) -> _Call:
        return _Call("POST", f"/review/{decision}", {"id": id})

    @staticmethod
    def status() -> _Call:
        return _Call("GET", "/status")


def _headers(token: Optional[str]) -> Dict[str, str]:
    headers = {"accept": "application/json", "user-agent": "arbor-client-python/0.1"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    return headers


def _answer(call: _Call, response: httpx.Response) -> Any:
    """The answer's JSON (or the part `call` names), or the error it carries as an exception."""
    try:
        value = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        # Not Arbor's answer (a proxy's error page, say): the status says what happened.
        code = _CODE_BY_STATUS.get(response.status_code, "invalid_response")
        raise error_for(code, f"HTTP {response.status_code} without an Arbor error body", response.status_code) from None
    if response.is_error:
        detail = value.get("error", {}) if isinstance(value, dict) else {}
        code = str(detail.get("code", "error"))
        message = str(detail.get("message", f"HTTP {response.status_code}"))
        raise error_for(code, message, response.status_code)
    return value[call.key] if call.key else value


_CODE_BY_STATUS = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    412: "precondition_failed",
    413: "payload_too_large",
    422: "unprocessable",
    502: "unavailable",
    503: "unavailable",
    504: "unavailable",
}


def _unreachable(error: httpx.TransportError) -> ArborError:
    return Unavailable("unavailable", f"no answer from the server: {error}", None)


class Arbor:
    """A client of one Arbor server, as one token.

    >>> memory = Arbor("http://127.0.0.1:7300", token="arbor_…")
    >>> memory.add("Dana prefers morning meetings.")
    >>> print(memory.retrieve("when does Dana like to meet?")["text"])
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        token: Optional[str] = None,
        *,
        timeout: float = 30.0,
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        self._base = base_url.rstrip("/") + API
        self._http = http_client or httpx.Client(timeout=timeout)
        self._headers = _headers(token)

    def _send(self, call: _Call) -> Any:
        try:
            response = self._http.request(
                call.method, self._base + call.path, json=call.body, params=call.params or None, headers=self._headers
            )
        except httpx.TransportError as error:
            raise _unreachable(error) from error
        return _answer(call, response)

    def add(
        self,
        text: str,
        *,
        kind: Optional[str] = None,
        title: Optional[str] = None,
        labels: Optional[Sequence[str]] = None,
        valid_from: Optional[str] = None,
        observed_at: Optional[str] = None,
        message_id: Optional[str] = None,
    ) -> SaveResult:
        """Saves what happened; Arbor decides what to keep, files it, and replaces what it
        updates. `result["message"]` says whether it is retrievable now or waits for a person."""
        fields = dict(kind=kind, title=title, labels=labels, valid_from=valid_from)
        fields.update(observed_at=observed_at, message_id=message_id)
        return cast(SaveResult, self._send(_Calls.add(text, **fields)))

    def add_batch(self, items: Iterable[Mapping[str, Any]]) -> BatchResult:
        """Up to 100 saves (each a dict as `add` takes it) in one write; a refused item refuses
        them all."""
        return cast(BatchResult, self._send(_Calls.add_batch(items)))

    def add_messages(self, messages: Iterable[Union[Message, Mapping[str, Any]]], *, observed_at: Optional[str] = None) -> BatchResult:
        """A conversation's messages as an OpenAI-style client holds them."""
        return cast(BatchResult, self._send(_Calls.add_messages(messages, observed_at)))

    def search(self, query: str, *, limit: Optional[int] = None) -> List[SearchHit]:
        """Current memories matching `query`, best first."""
        return cast(List[SearchHit], self._send(_Calls.search(query, limit)))

    def retrieve(
        self,
        query: str,
        *,
        max_tokens: Optional[int] = None,
        max_results: Optional[int] = None,
        as_of: Optional[str] = None,
        full: bool = False,
    ) -> CompactPack:
        """What memory holds for a question: each memory once, and `text` for a model's context
        (`full=True`: the explained pack instead)."""
        options = dict(max_tokens=max_tokens, max_results=max_results, as_of=as_of)
        return cast(CompactPack, self._send(_Calls.retrieve(query, full, **options)))

    def get(self, id: str) -> Node:
        """A memory (`leaf-…`) or summary (`sum-…`) by id, with its text and version."""
        return cast(Node, self._send(_Calls.get(id)))

    def correct(self, id: str, *, version: int, text: str, title: Optional[str] = None) -> Corrected:
        """A new version of a memory, bound to the version you read (else `PreconditionFailed`)."""
        return cast(Corrected, self._send(_Calls.correct(id, version, text, title)))

    def forget(self, id: str) -> Forgotten:
        """Forgets a memory, every version of it, for good."""
        return cast(Forgotten, self._send(_Calls.forget(id)))

    def pending(self) -> List[PendingItem]:
        """What waits for a person (an operator's token)."""
        return cast(List[PendingItem], self._send(_Calls.pending()))

    def confirm(self, id: str) -> Reviewed:
        """Confirms a candidate (an operator's token)."""
        return cast(Reviewed, self._send(_Calls.review(id, "confirm")))

    def reject(self, id: str) -> Reviewed:
        """Rejects a candidate (an operator's token)."""
        return cast(Reviewed, self._send(_Calls.review(id, "reject")))

    def status(self) -> Status:
        """What this token is bound to, and how much it can read."""
        return cast(Status, self._send(_Calls.status()))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Arbor":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncArbor:
    """`Arbor` for asyncio: the same methods, awaited."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        token: Optional[str] = None,
        *,
        timeout: float = 30.0,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        self._base = base_url.rstrip("/") + API
        self._http = http_client or httpx.AsyncClient(timeout=timeout)
        self._headers = _headers(token)

    async def _send(self, call: _Call) -> Any:
        try:
            response = await self._http.request(
                call.method, self._base + call.path, json=call.body, params=call.params or None, headers=self._headers
            )
        except httpx.TransportError as error:
            raise _unreachable(error) from error
        return _answer(call, response)

    async def add(
        self,
        text: str,
        *,
        kind: Optional[str] = None,
        title: Optional[str] = None,
        labels: Optional[Sequence[str]] = None,
        valid_from: Optional[str] = None,
        observed_at: Optional[str] = None,
        message_id: Optional[str] = None,
    ) -> SaveResult:
        fields = dict(kind=kind, title=title, labels=labels, valid_from=valid_from)
        fields.update(observed_at=observed_at, message_id=message_id)
        return cast(SaveResult, await self._send(_Calls.add(text, **fields)))

    async def add_batch(self, items: Iterable[Mapping[str, Any]]) -> BatchResult:
        return cast(BatchResult, await self._send(_Calls.add_batch(items)))

    async def add_messages(self, messages: Iterable[Union[Message, Mapping[str, Any]]], *, observed_at: Optional[str] = None) -> BatchResult:
        return cast(BatchResult, await self._send(_Calls.add_messages(messages, observed_at)))

    async def search(self, query: str, *, limit: Optional[int] = None) -> List[SearchHit]:
        return cast(List[SearchHit], await self._send(_Calls.search(query, limit)))

    async def retrieve(
        self,
        query: str,
        *,
        max_tokens: Optional[int] = None,
        max_results: Optional[int] = None,
        as_of: Optional[str] = None,
        full: bool = False,
    ) -> CompactPack:
        options = dict(max_tokens=max_tokens, max_results=max_results, as_of=as_of)
        return cast(CompactPack, await self._send(_Calls.retrieve(query, full, **options)))

    async def get(self, id: str) -> Node:
        return cast(Node, await self._send(_Calls.get(id)))

    async def correct(self, id: str, *, version: int, text: str, title: Optional[str] = None) -> Corrected:
        return cast(Corrected, await self._send(_Calls.correct(id, version, text, title)))

    async def forget(self, id: str) -> Forgotten:
        return cast(Forgotten, await self._send(_Calls.forget(id)))

    async def pending(self) -> List[PendingItem]:
        return cast(List[PendingItem], await self._send(_Calls.pending()))

    async def confirm(self, id: str) -> Reviewed:
        return cast(Reviewed, await self._send(_Calls.review(id, "confirm")))

    async def reject(self, id: str) -> Reviewed:
        return cast(Reviewed, await self._send(_Calls.review(id, "reject")))

    async def status(self) -> Status:
        return cast(Status, await self._send(_Calls.status()))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncArbor":
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
