"""The shapes of Arbor's answers, as the server's OpenAPI document (`/openapi.json`) states
them. Results are plain dicts typed with these, so they print, serialize and compare as JSON."""

from __future__ import annotations

import sys
from typing import List, Optional

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:  # pragma: no cover - older Pythons
    from typing_extensions import NotRequired, TypedDict


class Saved(TypedDict):
    """What one chunk of a saved text became."""

    chunk: int
    outcome: str  # created, superseding, noop_duplicate or not_admitted
    leaf_id: Optional[str]
    status: Optional[str]  # active, or candidate (waiting for a person)
    replaces: Optional[str]
    tree_id: Optional[str]
    namespace: str
    reason: Optional[str]


class SaveResult(TypedDict):
    message: str  # one sentence an agent can pass on
    chunks: List[Saved]


class BatchItem(TypedDict):
    index: int
    saved: NotRequired[SaveResult]
    skipped: NotRequired[str]  # why nothing was saved: a prompt, a message with no text
    error: NotRequired["ErrorDetail"]


class BatchResult(TypedDict):
    results: List[BatchItem]


class ErrorDetail(TypedDict):
    code: str
    message: str


class CompactMemory(TypedDict):
    id: str  # leaf-… or sum-…: what to cite, read or correct
    version: NotRequired[int]
    date: str  # YYYY-MM-DD
    until: NotRequired[str]
    text: str
    why: str


class Degradation(TypedDict):
    part: str
    reason: str


class CompactPack(TypedDict):
    answer: str  # found or nothing_relevant
    memories: NotRequired[List[CompactMemory]]
    notes: NotRequired[List[str]]
    degraded: NotRequired[List[Degradation]]
    more: NotRequired[int]
    text: str  # the few lines a model reads


class SearchHit(TypedDict):
    id: str
    node: str  # leaf or summary
    version: Optional[int]
    namespace: str
    tree_id: str
    title: str
    text: str
    observed_at: str
    score: float
    why: str


class Node(TypedDict):
    id: str
    node: str
    version: Optional[int]
    lineage: Optional[str]
    namespace: str
    tree_id: str
    kind: Optional[str]
    title: str
    status: str
    observed_at: Optional[str]
    sensitivity: Optional[str]
    actor: Optional[str]
    source: Optional[str]
    supersedes: Optional[str]
    superseded_by: Optional[str]
    body: Optional[str]


class Corrected(TypedDict):
    leaf_id: str
    version: int
    status: str
    replaces: str
    replaced_version: int
    namespace: str
    tree_id: str


class Forgotten(TypedDict):
    leaf_id: str
    namespace: str
    versions: int
    fingerprint: str


class PendingItem(TypedDict):
    id: str
    namespace: str
    tree_id: str
    kind: str
    title: str
    summary: str
    sensitivity: str
    actor: str
    source: str
    created_at: str
    would_supersede: List[str]
    conflict: NotRequired[str]


class Reviewed(TypedDict):
    leaf_id: str
    namespace: str
    status: str
    superseded: List[str]


class Status(TypedDict):
    version: str
    read_chain: List[str]
    write_namespace: str
    store_backend: str
    index_backend: str
    embedder: str
    trees: int
    active_leaves: int


class Message(TypedDict):
    """A chat message as OpenAI-style clients hold it; other keys are accepted and ignored."""

    role: str  # user, assistant, tool, system, developer
    content: NotRequired[object]  # a string, content parts, or None
    id: NotRequired[str]
