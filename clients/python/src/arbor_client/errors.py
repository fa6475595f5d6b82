"""Errors as exceptions, one class per stable code the server answers with
(`{"error": {"code", "message"}}`); every one is an `ArborError`."""

from __future__ import annotations

from typing import Dict, Optional, Type


class ArborError(Exception):
    """A request Arbor refused or could not answer. `code` is the server's stable code
    (`not_found`, `precondition_failed`, …); `status` the HTTP status, when there was one."""

    def __init__(self, code: str, message: str, status: Optional[int] = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status


class InvalidRequest(ArborError):
    """`invalid_request`, `unprocessable`: the request breaks a rule; the message says which."""


class Unauthorized(ArborError):
    """`unauthorized`: no token, or one unknown or revoked."""


class Forbidden(ArborError):
    """`forbidden`: a layer this token reads but does not write, or an operator's action."""


class NotFound(ArborError):
    """`not_found`: no such memory in this token's scope (the two are indistinguishable)."""


class Conflict(ArborError):
    """`conflict`: the memory cannot change that way (e.g. it is history)."""


class PreconditionFailed(ArborError):
    """`precondition_failed`: the memory changed since the version you read; read it again."""


class PayloadTooLarge(ArborError):
    """`payload_too_large`."""


class Unavailable(ArborError):
    """`unavailable`, `request_timeout`, or no answer at all: retry later."""


_BY_CODE: Dict[str, Type[ArborError]] = {
    "invalid_request": InvalidRequest,
    "unprocessable": InvalidRequest,
    "unsupported_media_type": InvalidRequest,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "conflict": Conflict,
    "precondition_failed": PreconditionFailed,
    "payload_too_large": PayloadTooLarge,
    "unavailable": Unavailable,
    "request_timeout": Unavailable,
}


def error_for(code: str, message: str, status: Optional[int]) -> ArborError:
    """The exception for a stable code; an unknown code is a plain `ArborError`."""
    return _BY_CODE.get(code, ArborError)(code, message, status)
