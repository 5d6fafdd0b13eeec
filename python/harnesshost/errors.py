"""The SDK's errors. Invariant: every failure a sink call or a turn can raise is a ``HarnessError``
carrying a gRPC status code, and that code is what the node puts in ``END{FAILED}.error.code``
(docs/protocol.md §4.6); anything else a harness raises ends the turn INTERNAL.
"""

from __future__ import annotations

from dataclasses import dataclass

from grpc import StatusCode

__all__ = ["StatusCode", "HarnessError", "Cancelled", "ProtocolViolation", "ApprovalParked", "ApprovalRef"]


class HarnessError(Exception):
    """A failure with a gRPC status code. Raise it from ``run`` to end the turn FAILED with that code."""

    def __init__(self, message: str, code: StatusCode = StatusCode.INTERNAL) -> None:
        super().__init__(message)
        self.code = code

    @property
    def code_number(self) -> int:
        number: int = self.code.value[0]
        return number

    def __str__(self) -> str:
        return f"{self.code.name}: {self.args[0]}"


class Cancelled(HarnessError):
    """The turn was cancelled: the host went away, sent a cancel frame, or the node is shutting down."""

    def __init__(self, message: str = "turn cancelled") -> None:
        super().__init__(message, StatusCode.CANCELLED)


class ProtocolViolation(HarnessError):
    """The other end broke the Harness protocol (a reply of the wrong kind, a correlation mismatch, …)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, StatusCode.INTERNAL)


@dataclass(frozen=True)
class ApprovalRef:
    """A gate: (execution id, tool call id, seq of its APPROVAL_REQUEST) (docs/protocol.md §12.1)."""

    execution_id: str
    tool_call_id: str
    request_seq: int


class ApprovalParked(HarnessError):
    """The host parked the turn at an approval gate or a question: let it propagate out of ``run``. The
    node answers EVENT_PARKED; the host continues the turn after the operator decides (§4.10)."""

    def __init__(self, ref: ApprovalRef) -> None:
        super().__init__(
            f"turn parked at approval gate {ref.execution_id}:{ref.tool_call_id}:{ref.request_seq}",
            StatusCode.ABORTED,
        )
        self.ref = ref
