"""The node side of one Connect stream as the harness's sink: one Event per sink call, blocking calls
answered by correlated ControllerFrames (docs/protocol.md §4.3, §4.4, §4.10). Invariants: a reply is
accepted only with the turn's execution_id and the id the call minted; request/reply pairs never
interleave (one lock per turn); the first failure is sticky, so every later call raises the same error
(§4.9); a gated call is answered by a park (``ApprovalParked``, sticky: the turn must unwind) or by the
decision followed by a receipt that must match it; a call after the turn ended, or after it was
cancelled, fails.

``AsyncSink`` is what an ``async def run`` receives; ``Sink`` is the same sink for a plain ``def run``,
which runs in a worker thread and blocks on each call.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from typing import Any, Awaitable, Callable, Mapping, Optional, Sequence, TypeVar, Union

from . import _proto
from .errors import ApprovalParked, ApprovalRef, Cancelled, HarnessError, ProtocolViolation, StatusCode
from .types import (
    AskAnswer,
    Mediation,
    Message,
    ModelRequest,
    ModelResponse,
    ResultCode,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
)

T = TypeVar("T")

ASK_TOOL = "harnesshost.ask"

#: What the reply queue carries besides frames: the end of the host's side of the stream.
STREAM_ENDED = object()


class Cancellation:
    """The turn's cancellation, readable from the event loop and from a worker thread alike."""

    def __init__(self) -> None:
        self._loop_event = asyncio.Event()
        self._thread_event = threading.Event()
        self.reason = ""

    def cancel(self, reason: str) -> None:
        if self._thread_event.is_set():
            return
        self.reason = reason
        self._thread_event.set()
        self._loop_event.set()

    def is_set(self) -> bool:
        return self._thread_event.is_set()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks a worker thread until the turn is cancelled (or ``timeout`` seconds pass)."""
        return self._thread_event.wait(timeout)

    async def wait_async(self) -> None:
        await self._loop_event.wait()


class AsyncSink:
    """The sink of an ``async def run(start, sink)`` harness."""

    def __init__(
        self,
        execution_id: str,
        session: str,
        send: Callable[[Any], Awaitable[None]],
        replies: "asyncio.Queue[Any]",
        cancellation: Cancellation,
    ) -> None:
        self._execution_id = execution_id
        self._session = session
        self._send_event = send
        self._replies = replies
        self.cancelled = cancellation
        self._lock = asyncio.Lock()
        self._failure: Optional[HarnessError] = None
        self._closed = False
        self._asks = 0

    @property
    def failure(self) -> Optional[HarnessError]:
        """The sticky failure, if a sink call failed."""
        return self._failure

    @property
    def parked(self) -> Optional[ApprovalRef]:
        """The gate the host parked the turn at, if it did."""
        return self._failure.ref if isinstance(self._failure, ApprovalParked) else None

    def close(self) -> None:
        """After the turn: every later call fails."""
        self._closed = True

    # -- sink calls ---------------------------------------------------------------------------------

    async def output(self, text: str) -> None:
        """Says ``text`` as the assistant (EVENT_OUTPUT; journaled as OUTPUT)."""
        await self._exclusive(lambda: self._send("EVENT_OUTPUT", message=Message("assistant", text).to_proto()))

    async def model(
        self,
        model: Union[str, ModelRequest],
        messages: Sequence[Message] = (),
        *,
        params: Optional[Mapping[str, str]] = None,
        tools: Sequence[ToolDefinition] = (),
    ) -> ModelResponse:
        """Asks the host's model and waits for its answer (EVENT_MODEL_CALL). The host journals the
        completion as OUTPUT: do not repeat it with ``output``."""
        request = model if isinstance(model, ModelRequest) else ModelRequest(model, tuple(messages), params or {}, tuple(tools))

        async def op() -> ModelResponse:
            correlation = secrets.token_hex(8)
            await self._send("EVENT_MODEL_CALL", model=request.to_proto(correlation))
            frame = await self._receive()
            if frame.WhichOneof("frame") != "model" or frame.model.model_call_id != correlation:
                raise ProtocolViolation("model result correlation mismatch")
            result = frame.model
            message = Message.from_proto(result.message) if result.HasField("message") else Message("assistant", "")
            usage = Usage.from_proto(result.usage) if result.HasField("usage") else None
            return ModelResponse(message, usage)

        return await self._exclusive(op)

    async def tool_call(self, call: ToolCall) -> ToolResult:
        """A tool call the host runs (``CONTROLLER_MEDIATED``) or runs after an operator's approval
        (``REQUIRES_APPROVAL``: with no decision yet the turn parks, raising ``ApprovalParked``; let it
        propagate). Waits for the result. A tool the harness runs itself is reported with ``report``."""
        if call.mediation is Mediation.IN_HARNESS_REPORTED:
            raise self._latch(
                HarnessError(
                    f"tool call {call.id}: an IN_HARNESS_REPORTED tool is run by the harness and reported with sink.report",
                    StatusCode.INVALID_ARGUMENT,
                )
            )

        async def op() -> ToolResult:
            await self._send("EVENT_TOOL_CALL", tool=call.to_proto())
            frame = await self._receive()
            if call.mediation is Mediation.REQUIRES_APPROVAL:
                return await self._gated(call, frame)
            if frame.WhichOneof("frame") != "tool" or frame.tool.id != call.id:
                raise ProtocolViolation("tool result correlation mismatch")
            return ToolResult.from_proto(frame.tool)

        return await self._exclusive(op)

    async def approval_tool_call(self, call: ToolCall) -> ToolResult:
        """``tool_call`` with ``mediation = REQUIRES_APPROVAL``: an operator decides before the host runs it."""
        return await self.tool_call(
            ToolCall(call.id, call.tool, call.args, call.idempotency_key, Mediation.REQUIRES_APPROVAL)
        )

    async def report(self, result: ToolResult) -> None:
        """Records the result of a tool the harness ran itself (EVENT_TOOL_RESULT)."""
        await self._exclusive(lambda: self._send("EVENT_TOOL_RESULT", result=result.to_proto()))

    async def usage(self, usage: Usage) -> None:
        """Reports token usage (EVENT_USAGE)."""
        await self._exclusive(lambda: self._send("EVENT_USAGE", usage=usage.to_proto()))

    async def ask(
        self, question: str, choices: Sequence[str] = (), allow_free_text: Optional[bool] = None
    ) -> AskAnswer:
        """Asks the operator (docs/protocol.md §12.6): a gated ``harnesshost.ask`` call ``ask-<n>``. The
        turn parks until the answer is committed and the host resumes it; then this returns the answer."""
        if question == "":
            raise self._latch(HarnessError("ask: the question is empty", StatusCode.INVALID_ARGUMENT))
        free = allow_free_text if allow_free_text is not None else len(choices) == 0
        if len(choices) == 0 and not free:
            raise self._latch(
                HarnessError("ask: a question without choices must allow free text", StatusCode.INVALID_ARGUMENT)
            )
        index = self._asks
        self._asks += 1
        call = ToolCall(
            id=f"ask-{index}",
            tool=ASK_TOOL,
            args={"question": question, "choices": list(choices), "allow_free_text": free},
            idempotency_key=f"{self._execution_id}/ask-{index}",
            mediation=Mediation.REQUIRES_APPROVAL,
        )
        result = await self.tool_call(call)
        answer = (result.output or {}).get("answer")
        if not result.is_error and isinstance(answer, str):
            return AskAnswer(answer, False)
        return AskAnswer("", True)

    # -- the protocol underneath --------------------------------------------------------------------

    async def _gated(self, call: ToolCall, frame: Any) -> ToolResult:
        def mismatch(why: str) -> ProtocolViolation:
            return ProtocolViolation(f"approval correlation mismatch: {why}")

        if self._session and frame.session and frame.session != self._session:
            raise mismatch("session")
        which = frame.WhichOneof("frame")
        if which == "park":
            ref = frame.park
            if ref.execution_id != self._execution_id or ref.tool_call_id != call.id or ref.request_seq <= 0:
                raise mismatch("park tuple")
            raise ApprovalParked(ApprovalRef(ref.execution_id, ref.tool_call_id, ref.request_seq))
        if which != "approval" or frame.approval.tool_call_id != call.id or frame.approval.request_seq <= 0:
            raise mismatch("decision")
        decision = frame.approval
        following = await self._receive()
        if following.WhichOneof("frame") != "tool":
            raise mismatch("receipt expected after the decision")
        receipt = ToolResult.from_proto(following.tool)
        if (
            receipt.id != call.id
            or receipt.approval_request_seq != decision.request_seq
            or receipt.approval_decision_seq <= 0
            or not _receipt_matches(receipt, decision.approved)
        ):
            raise mismatch("receipt does not match the decision")
        return receipt

    async def _exclusive(self, op: Callable[[], Awaitable[T]]) -> T:
        async with self._lock:
            self._check()
            try:
                return await op()
            except asyncio.CancelledError:
                self._latch(Cancelled(self.cancelled.reason or "turn cancelled"))
                raise
            except BaseException as err:
                raise self._latch(err) from err

    def _check(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._closed:
            raise self._latch(HarnessError("sink used after the turn ended", StatusCode.FAILED_PRECONDITION))
        if self.cancelled.is_set():
            raise self._latch(Cancelled(self.cancelled.reason))

    async def _send(self, kind: str, **body: Any) -> None:
        event = _proto.message_class("Event")(
            execution_id=self._execution_id, kind=_proto.enum_number("EventKind", kind), **body
        )
        await self._send_event(event)

    async def _receive(self) -> Any:
        """The next reply frame; Cancelled when the turn is cancelled first."""
        get = asyncio.ensure_future(self._replies.get())
        stop = asyncio.ensure_future(self.cancelled.wait_async())
        try:
            await asyncio.wait({get, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not get.done():
                get.cancel()
        if not get.done() or get.cancelled():
            raise Cancelled(self.cancelled.reason)
        item = get.result()
        if item is STREAM_ENDED:
            raise ProtocolViolation("controller closed the stream while the harness awaited a reply")
        if isinstance(item, BaseException):
            raise HarnessError(f"controller stream failed: {item}", StatusCode.INTERNAL)
        if item.execution_id != self._execution_id:
            raise ProtocolViolation("result execution_id mismatch")
        return item

    def _latch(self, err: BaseException) -> HarnessError:
        if self._failure is not None:
            return self._failure
        failure = err if isinstance(err, HarnessError) else HarnessError(str(err) or type(err).__name__)
        self._failure = failure
        return failure


def _receipt_matches(receipt: ToolResult, approved: bool) -> bool:
    if not approved:
        return receipt.is_error and receipt.code is ResultCode.APPROVAL_DENIED
    return (not receipt.is_error and receipt.code is ResultCode.UNSPECIFIED) or (
        receipt.is_error and receipt.code is ResultCode.EXECUTOR_ERROR
    )


class Sink:
    """The sink of a plain ``def run(start, sink)`` harness: the same calls as ``AsyncSink``, each
    blocking the harness's worker thread until the host answers."""

    def __init__(self, inner: AsyncSink, loop: asyncio.AbstractEventLoop) -> None:
        self._inner = inner
        self._loop = loop
        self.cancelled = inner.cancelled

    def _call(self, coro: Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await coro

        return asyncio.run_coroutine_threadsafe(wrapped(), self._loop).result()

    def output(self, text: str) -> None:
        self._call(self._inner.output(text))

    def model(self, model: Union[str, ModelRequest], messages: Sequence[Message] = (), **options: Any) -> ModelResponse:
        """``AsyncSink.model``, blocking (``params=``, ``tools=`` as there)."""
        return self._call(self._inner.model(model, messages, **options))

    def tool_call(self, call: ToolCall) -> ToolResult:
        return self._call(self._inner.tool_call(call))

    def approval_tool_call(self, call: ToolCall) -> ToolResult:
        return self._call(self._inner.approval_tool_call(call))

    def report(self, result: ToolResult) -> None:
        self._call(self._inner.report(result))

    def usage(self, usage: Usage) -> None:
        self._call(self._inner.usage(usage))

    def ask(self, question: str, choices: Sequence[str] = (), allow_free_text: Optional[bool] = None) -> AskAnswer:
        return self._call(self._inner.ask(question, choices, allow_free_text))
