"""What a harness author writes against: the descriptor, the turn's start, messages, model requests,
tool calls and results, as plain typed values. Invariant: every value converts to exactly one
agentsessions.v1 message and back (``to_proto``/``from_proto``), and a tool call's arguments are
JSON-safe before they reach the wire (a value Struct cannot hold exactly is refused, not rounded).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Tuple

from google.protobuf import json_format

from . import _proto
from .errors import HarnessError, StatusCode

JsonValue = Any
"""A JSON value: None, bool, int (|n| ≤ 2^53), finite float, str, list or str-keyed dict of them."""

MAX_SAFE_INTEGER = 2**53 - 1


class Tier(enum.Enum):
    """The resumability a harness declares (docs/protocol.md §3, §7)."""

    STATELESS_REPLAY = "RESUMABILITY_STATELESS_REPLAY"
    REQUIRES_MEMORY_SNAPSHOT = "RESUMABILITY_REQUIRES_MEMORY_SNAPSHOT"


class Mediation(enum.Enum):
    """Who runs a tool call: the host (``CONTROLLER_MEDIATED``), the host after an operator's approval
    (``REQUIRES_APPROVAL``), or the harness itself, which then reports the result
    (``IN_HARNESS_REPORTED``)."""

    CONTROLLER_MEDIATED = "MEDIATION_CONTROLLER_MEDIATED"
    REQUIRES_APPROVAL = "MEDIATION_REQUIRES_APPROVAL"
    IN_HARNESS_REPORTED = "MEDIATION_IN_HARNESS_REPORTED"


class ResultCode(enum.Enum):
    """ToolResult.code: set by the host on an approval gate's receipt."""

    UNSPECIFIED = "CODE_UNSPECIFIED"
    APPROVAL_DENIED = "APPROVAL_DENIED"
    EXECUTOR_ERROR = "EXECUTOR_ERROR"


def _result_code_number(code: ResultCode) -> int:
    number: int = _proto.POOL.FindEnumTypeByName(f"{_proto.PACKAGE}.ToolResult.Code").values_by_name[code.value].number
    return number


def _result_code_of(number: int) -> ResultCode:
    values = _proto.POOL.FindEnumTypeByName(f"{_proto.PACKAGE}.ToolResult.Code").values_by_number
    name = values[number].name if number in values else "CODE_UNSPECIFIED"
    return ResultCode(name)


@dataclass(frozen=True)
class Descriptor:
    """A harness's static self-description, answered to Describe (docs/protocol.md §3).

    ``version`` is the replay-compatibility version: bump it whenever the harness would behave
    differently on the same journal."""

    id: str
    version: str
    tier: Tier = Tier.STATELESS_REPLAY
    fork_safe: bool = False
    models: Sequence[str] = ()
    tools: Sequence[str] = ()

    def to_proto(self) -> Any:
        return _proto.message_class("HarnessDescriptor")(
            id=self.id,
            version=self.version,
            models=list(self.models),
            tools=[{"name": t} for t in self.tools],
            capabilities={
                "resumability": _proto.enum_number("Resumability", self.tier.value),
                "fork_safe": self.fork_safe,
            },
        )


@dataclass(frozen=True)
class Message:
    """A conversation message: its role and its text (the concatenated text parts).

    ``proto`` keeps the agentsessions.v1.Message it came from (None for one built here)."""

    role: str
    text: str
    proto: Any = field(default=None, compare=False, repr=False)

    @staticmethod
    def from_proto(message: Any) -> "Message":
        return Message(role=message.role, text=text_of(message), proto=message)

    def to_proto(self) -> Any:
        if self.proto is not None:
            return self.proto
        return _proto.message_class("Message")(role=self.role, parts=[{"text": {"text": self.text}}])


def text_of(message: Any) -> str:
    """The concatenated text parts of an agentsessions.v1.Message ("" for None)."""
    if message is None:
        return ""
    return "".join(p.text.text for p in message.parts if p.WhichOneof("part") == "text")


@dataclass(frozen=True)
class Identity:
    """The session's creator as recorded at creation: provenance only, never enforced (§4.2)."""

    principal: str
    issuer: str = ""
    subject: str = ""


@dataclass(frozen=True)
class HistoryEvent:
    """One prior journal event of the session: its kind name (``"INPUT"``, ``"OUTPUT"``, …), the message
    it carries when it carries one, and the raw agentsessions.v1.Event."""

    kind: str
    message: Optional[Message]
    proto: Any = field(compare=False, repr=False)


@dataclass(frozen=True)
class StartInfo:
    """One turn's Start (docs/protocol.md §4.2). ``history`` is every event before this turn for a
    stateless harness and always empty for a memory-tier one (never rebuild RAM state from it)."""

    session_uid: str
    execution_id: str
    config: bytes
    history: Tuple[HistoryEvent, ...]
    inputs: Tuple[Message, ...]
    resume_from_seq: int
    identity: Optional[Identity] = None
    request_id: str = ""

    def conversation(self) -> Tuple[Message, ...]:
        """The user inputs and assistant outputs of earlier turns, in order, then this turn's inputs."""
        earlier = tuple(e.message for e in self.history if e.kind in ("INPUT", "OUTPUT") and e.message is not None)
        return earlier + self.inputs


@dataclass(frozen=True)
class Usage:
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    def to_proto(self) -> Any:
        return _proto.message_class("Usage")(
            model=self.model,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            reasoning_tokens=self.reasoning_tokens,
        )

    @staticmethod
    def from_proto(u: Any) -> "Usage":
        return Usage(u.model, u.input_tokens, u.output_tokens, u.reasoning_tokens)


@dataclass(frozen=True)
class ToolDefinition:
    """A tool the model may call: name, description and a JSON schema of its input."""

    name: str
    description: str = ""
    input_schema: Optional[Mapping[str, JsonValue]] = None


@dataclass(frozen=True)
class ModelRequest:
    """A model call (docs/protocol.md §14). ``params`` are provider parameters as strings."""

    model: str
    messages: Sequence[Message]
    params: Mapping[str, str] = field(default_factory=dict)
    tools: Sequence[ToolDefinition] = ()

    def to_proto(self, correlation_id: str) -> Any:
        call = _proto.message_class("ModelCall")(
            model=self.model,
            params=dict(self.params),
            id=correlation_id,
            messages=[m.to_proto() for m in self.messages],
        )
        for t in self.tools:
            tool = call.tools.add(name=t.name, description=t.description)
            if t.input_schema is not None:
                tool.input_schema.update(check_json(dict(t.input_schema), f"tool {t.name} input_schema"))
        return call


@dataclass(frozen=True)
class ModelResponse:
    """The host's answer to a model call: the assistant message (its text in ``text``) and the usage
    the provider reported, if any (live calls only)."""

    message: Message
    usage: Optional[Usage] = None

    @property
    def text(self) -> str:
        return self.message.text


@dataclass(frozen=True)
class ToolCall:
    """A tool call (docs/protocol.md §6 I3, §12.1). ``idempotency_key`` must be non-empty and derived from
    what the journal fixes (e.g. ``f"{start.execution_id}:call-1"``): after a crash the host runs the
    call again with the same key, so the executor can de-duplicate, and replay checks it."""

    id: str
    tool: str
    args: Mapping[str, JsonValue]
    idempotency_key: str
    mediation: Mediation = Mediation.CONTROLLER_MEDIATED

    def to_proto(self) -> Any:
        call = _proto.message_class("ToolCall")(
            id=self.id,
            tool=self.tool,
            mediation=_proto.enum_number("Mediation", self.mediation.value),
            idempotency_key=self.idempotency_key,
        )
        call.args.update(check_json(dict(self.args), f"tool call {self.id} args"))
        return call


@dataclass(frozen=True)
class ToolResult:
    """A tool's result: ``output`` (a JSON object) or ``is_error`` with ``error``. On an approval gate's
    receipt ``code`` says whether the operator denied it, and ``approval_request_seq`` /
    ``approval_decision_seq`` name the records of the gate."""

    id: str
    output: Optional[Mapping[str, JsonValue]] = None
    is_error: bool = False
    error: str = ""
    code: ResultCode = ResultCode.UNSPECIFIED
    approval_request_seq: int = 0
    approval_decision_seq: int = 0

    @property
    def denied(self) -> bool:
        return self.code is ResultCode.APPROVAL_DENIED

    def to_proto(self) -> Any:
        result = _proto.message_class("ToolResult")(
            id=self.id, is_error=self.is_error, error=self.error, code=_result_code_number(self.code)
        )
        if self.output is not None:
            result.output.update(check_json(dict(self.output), f"tool result {self.id} output"))
        return result

    @staticmethod
    def from_proto(r: Any) -> "ToolResult":
        output = _plain(json_format.MessageToDict(r.output)) if r.HasField("output") else None
        return ToolResult(
            id=r.id,
            output=output,
            is_error=r.is_error,
            error=r.error,
            code=_result_code_of(r.code),
            approval_request_seq=r.approval_request_seq,
            approval_decision_seq=r.approval_decision_seq,
        )


@dataclass(frozen=True)
class AskAnswer:
    """The operator's answer to ``sink.ask``: its text, or ``declined`` when the question was declined."""

    text: str
    declined: bool


def _plain(value: JsonValue) -> JsonValue:
    """A Struct's JSON with integral numbers as ints (a Struct holds every number as a double)."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def check_json(value: JsonValue, where: str) -> JsonValue:
    """Returns ``value`` when it is JSON that a protobuf Struct holds exactly; raises INVALID_ARGUMENT
    naming the first offending path otherwise."""

    def walk(v: JsonValue, path: str) -> None:
        if v is None or isinstance(v, (bool, str)):
            return
        if isinstance(v, int):
            if abs(v) > MAX_SAFE_INTEGER:
                raise HarnessError(f"{where}: {path} is {v}, beyond ±2^53-1 (JSON numbers are doubles)", StatusCode.INVALID_ARGUMENT)
            return
        if isinstance(v, float):
            if not math.isfinite(v):
                raise HarnessError(f"{where}: {path} is {v}, not a JSON number", StatusCode.INVALID_ARGUMENT)
            return
        if isinstance(v, (list, tuple)):
            for i, item in enumerate(v):
                walk(item, f"{path}[{i}]")
            return
        if isinstance(v, Mapping):
            for k, item in v.items():
                if not isinstance(k, str):
                    raise HarnessError(f"{where}: {path} has a key {k!r} that is not a string", StatusCode.INVALID_ARGUMENT)
                walk(item, f"{path}.{k}")
            return
        raise HarnessError(f"{where}: {path} is a {type(v).__name__}, not JSON", StatusCode.INVALID_ARGUMENT)

    walk(value, "$")
    return value
