"""Python client for Arbor, durable tree-native memory for AI agents.

    from arbor_client import Arbor
    memory = Arbor("http://127.0.0.1:7300", token="arbor_…")
    memory.add("Dana prefers morning meetings.")
    print(memory.retrieve("when does Dana like to meet?")["text"])
"""

from .client import Arbor, AsyncArbor
from .errors import (
    ArborError,
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    PreconditionFailed,
    Unauthorized,
    Unavailable,
)
from .memory import ArborChatMemory

__all__ = [
    "Arbor",
    "ArborChatMemory",
    "ArborError",
    "AsyncArbor",
    "Conflict",
    "Forbidden",
    "InvalidRequest",
    "NotFound",
    "PayloadTooLarge",
    "PreconditionFailed",
    "Unauthorized",
    "Unavailable",
]
