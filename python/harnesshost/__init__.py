"""harnesshost's Python SDK: write a harness as ``run(start, sink)`` and serve it as a gRPC harness node.

A harness declares a ``Descriptor`` (id, version, tier, fork-safety, models) and a ``run`` — a
coroutine function receiving an ``AsyncSink``, or a plain function receiving a blocking ``Sink`` —
and ``serve(harness, listen=...)`` speaks ``agentsessions.v1.Harness`` (Describe, Connect) for it.
Invariant: this package promises what the TypeScript SDK's node promises (docs/protocol.md §4): one
Event per sink call, correlated and serialised blocking calls, sticky failures, approval parks, one
END per turn, cancellation reaching ``run``. docs/python.md is the guide.
"""

from .errors import ApprovalParked, ApprovalRef, Cancelled, HarnessError, ProtocolViolation, StatusCode
from .fresh import fresh_bytes, fresh_random, fresh_uuid
from .harness import Harness
from .node import (
    HARNESS_MAX_RECEIVE_BYTES,
    BackgroundNode,
    HarnessServicer,
    Node,
    listen_address,
    serve,
    serve_async,
    serve_in_thread,
)
from .sink import AsyncSink, Cancellation, Sink
from .types import (
    AskAnswer,
    Descriptor,
    HistoryEvent,
    Identity,
    Mediation,
    Message,
    ModelRequest,
    ModelResponse,
    ResultCode,
    StartInfo,
    Tier,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
    text_of,
)

__version__ = "0.1.0"

__all__ = [
    "ApprovalParked",
    "ApprovalRef",
    "AskAnswer",
    "AsyncSink",
    "BackgroundNode",
    "Cancellation",
    "Cancelled",
    "Descriptor",
    "HARNESS_MAX_RECEIVE_BYTES",
    "Harness",
    "HarnessError",
    "HarnessServicer",
    "HistoryEvent",
    "Identity",
    "Mediation",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "Node",
    "ProtocolViolation",
    "ResultCode",
    "Sink",
    "StartInfo",
    "StatusCode",
    "Tier",
    "ToolCall",
    "ToolDefinition",
    "ToolResult",
    "Usage",
    "fresh_bytes",
    "fresh_random",
    "fresh_uuid",
    "listen_address",
    "serve",
    "serve_async",
    "serve_in_thread",
    "text_of",
]
