"""A harness node: ``agentsessions.v1.Harness`` (Describe, Connect) served with grpc.aio for one
harness. Invariants (docs/protocol.md §4): a stream whose first frame is not a Start with an
execution_id, or whose resume_from_seq is outside [0, 2^53-1], is refused INVALID_ARGUMENT before the
harness runs or any Event is sent; a Start for a session whose turn is still running is refused
ABORTED; once a turn starts the stream ends with exactly one END (COMPLETED, FAILED with a gRPC code,
or CANCELED) unless the host went away first — or, when the host parked the turn, exactly one
EVENT_PARKED naming the gate and no END; a cancelled call (the host's cancel, a cancel frame, the
node closing) reaches ``run``. Connect frames up to 64 MiB are accepted (§2.3).

The node serves no ``harnesshost.v1.Actors``: it is stateless-only on the ``remote`` runtime (§8.7)
and reaches the memory tier on the ``vm`` runtime, which snapshots the whole guest.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Dict, Optional, Set, TextIO, Union

import grpc
from grpc import aio

from . import _proto
from .errors import ApprovalParked, Cancelled, HarnessError, StatusCode
from .harness import Harness, is_async
from .sink import STREAM_ENDED, AsyncSink, Cancellation, Sink
from .types import MAX_SAFE_INTEGER, HistoryEvent, Identity, Message, StartInfo

log = logging.getLogger("harnesshost")

#: A full Start.history carries a session's whole prior journal, so Connect frames may reach this size.
HARNESS_MAX_RECEIVE_BYTES = 64 * 1024 * 1024
#: The port the vm runtime's guest (and any container) tells the harness to listen on.
HARNESS_PORT_ENV = "HARNESS_PORT"
REQUEST_ID_HEADER = "x-request-id"
VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
#: How long ``close`` lets in-flight calls finish before cutting them (seconds).
CLOSE_GRACE_S = 2.0
#: Events a turn may have sent that the host has not read yet; the next sink call waits.
EVENT_BUFFER = 16
#: Worker threads for plain-function ``run``s: that many turns of one node run at once; more wait.
SYNC_RUN_THREADS = 32



def start_info_of(frame: Any, metadata: Any = ()) -> StartInfo:
    """The turn's StartInfo from the first ControllerFrame; INVALID_ARGUMENT when it is not a valid Start."""
    if frame is None or frame.WhichOneof("frame") != "start":
        raise HarnessError("first ControllerFrame must be Start", StatusCode.INVALID_ARGUMENT)
    if frame.execution_id == "":
        raise HarnessError("Start requires an execution_id", StatusCode.INVALID_ARGUMENT)
    start = frame.start
    if start.resume_from_seq < 0 or start.resume_from_seq > MAX_SAFE_INTEGER:
        raise HarnessError(f"resume_from_seq out of range: {start.resume_from_seq}", StatusCode.INVALID_ARGUMENT)
    identity = None
    if start.HasField("identity"):
        p = start.identity.principal
        identity = Identity(p.principal, p.issuer, p.subject)
    request_id = ""
    for key, value in metadata or ():
        if key == REQUEST_ID_HEADER and isinstance(value, str) and VALID_REQUEST_ID.match(value):
            request_id = value
    history = tuple(
        HistoryEvent(
            kind=_proto.enum_name("EventKind", e.kind).removeprefix("EVENT_"),
            message=Message.from_proto(e.message) if e.WhichOneof("body") == "message" else None,
            proto=e,
        )
        for e in start.history
    )
    return StartInfo(
        session_uid=frame.session,
        execution_id=frame.execution_id,
        config=bytes(start.config),
        history=history,
        inputs=tuple(Message.from_proto(m) for m in start.inputs),
        resume_from_seq=int(start.resume_from_seq),
        identity=identity,
        request_id=request_id,
    )


def _event(execution_id: str, kind: str, **body: Any) -> Any:
    return _proto.message_class("Event")(
        execution_id=execution_id, kind=_proto.enum_number("EventKind", kind), **body
    )


def _message(err: BaseException) -> str:
    return str(err.args[0]) if isinstance(err, HarnessError) else (str(err) or type(err).__name__)


def end_event(execution_id: str, failure: Optional[BaseException], cancelled: bool) -> Any:
    """The turn's END: COMPLETED, CANCELED for the turn's own cancellation, FAILED with a code otherwise."""
    if failure is None:
        return _event(execution_id, "EVENT_END", end={"state": "COMPLETED"})
    if cancelled and isinstance(failure, (Cancelled, asyncio.CancelledError)):
        code = StatusCode.CANCELLED.value[0]
        return _event(execution_id, "EVENT_END", end={"state": "CANCELED", "error": {"code": code, "description": _message(failure)}})
    code = failure.code_number if isinstance(failure, HarnessError) else StatusCode.INTERNAL.value[0]
    return _event(execution_id, "EVENT_END", end={"state": "FAILED", "error": {"code": code, "description": _message(failure)}})


@dataclass(eq=False)
class _Turn:
    start: StartInfo
    cancellation: Cancellation
    sink: AsyncSink
    tasks: Set["asyncio.Task[Any]"] = field(default_factory=set)


class HarnessServicer:
    """Describe and Connect for one harness object (every session of the node shares it)."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self._running: Dict[str, _Turn] = {}  # session uid -> _Turn ("" sessions are not tracked: throwaway, §4.9.4)
        self._turns: Set[_Turn] = set()
        # Made up front, so the modules a plain run needs are loaded before the first turn (an image
        # build's probe sees only what serving and Describe load).
        self._workers = ThreadPoolExecutor(max_workers=SYNC_RUN_THREADS, thread_name_prefix="harnesshost-run")

    async def describe(self, _request: Any, _context: Any) -> Any:
        return self.harness.describe().to_proto()

    def cancel_all(self, reason: str) -> None:
        for turn in list(self._turns):
            turn.cancellation.cancel(reason)

    def shutdown(self) -> None:
        """Cancels running turns; worker threads of plain runs end when their runs return."""
        self.cancel_all("harness node shutting down")
        self._workers.shutdown(wait=False)

    async def connect(self, requests: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:
        frames = requests.__aiter__()
        try:
            first = await frames.__anext__()
        except StopAsyncIteration:
            first = None
        try:
            start = start_info_of(first, context.invocation_metadata())
        except HarnessError as err:
            await context.abort(err.code, _message(err))
            return
        if start.session_uid != "" and start.session_uid in self._running:
            await context.abort(StatusCode.ABORTED, f"session {start.session_uid} is mid-turn on this node")
            return
        # Bounded: a harness that emits faster than the host reads waits at its sink call (and lets
        # the event loop run) instead of filling memory.
        events: "asyncio.Queue[Any]" = asyncio.Queue(maxsize=EVENT_BUFFER)
        replies: "asyncio.Queue[Any]" = asyncio.Queue()
        cancellation = Cancellation()
        sink = AsyncSink(start.execution_id, start.session_uid, events.put, replies, cancellation)
        turn = _Turn(start, cancellation, sink)
        if start.session_uid != "":
            self._running[start.session_uid] = turn
        self._turns.add(turn)
        pump = asyncio.ensure_future(_pump(frames, replies, cancellation))
        running = asyncio.ensure_future(self._run(turn))
        get: "Optional[asyncio.Future[Any]]" = None
        try:
            while True:
                get = asyncio.ensure_future(events.get())
                await asyncio.wait({get, running}, return_when=asyncio.FIRST_COMPLETED)
                if get.done():
                    yield get.result()
                    continue
                get.cancel()  # not done: it took nothing
                while not events.empty():
                    yield events.get_nowait()
                yield running.result()
                return
        finally:
            # Normal end, or the host went away (the handler is cancelled): either way the turn is over.
            cancellation.cancel("the host went away")
            running.cancel()
            pump.cancel()
            if get is not None:
                get.cancel()
            self._turns.discard(turn)
            if self._running.get(start.session_uid) is turn:
                del self._running[start.session_uid]

    async def _run(self, turn: _Turn) -> Any:
        """Runs the harness; the Event that ends the stream (END or EVENT_PARKED)."""
        start, sink, cancellation = turn.start, turn.sink, turn.cancellation
        failure: Optional[BaseException] = None
        try:
            if is_async(self.harness):
                await _cancellable(self.harness.run(start, sink), cancellation)
            else:
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(self._workers, self.harness.run, start, Sink(sink, loop))
        except asyncio.CancelledError as err:
            failure = Cancelled(cancellation.reason) if cancellation.is_set() else err
            if not cancellation.is_set():
                raise
        except BaseException as err:  # the harness's failure ends the turn FAILED, never the node
            failure = err
        finally:
            sink.close()
        if failure is None:
            failure = sink.failure
        parked = sink.parked
        if parked is not None:
            return _event(
                start.execution_id,
                "EVENT_PARKED",
                parked={"execution_id": parked.execution_id, "tool_call_id": parked.tool_call_id, "request_seq": parked.request_seq},
            )
        if failure is not None and not isinstance(failure, ApprovalParked):
            log.warning(
                "turn failed session=%s execution_id=%s request_id=%s: %s",
                start.session_uid,
                start.execution_id,
                start.request_id,
                failure,
            )
        return end_event(start.execution_id, failure, cancellation.is_set())


async def _cancellable(run: Any, cancellation: Cancellation) -> None:
    """Awaits an async ``run``, cancelling it (CancelledError at its current await) when the turn is."""
    task = asyncio.ensure_future(run)
    watch = asyncio.ensure_future(cancellation.wait_async())
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            if not cancellation.is_set():
                raise
            raise Cancelled(cancellation.reason) from None
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()


async def _pump(frames: AsyncIterator[Any], replies: "asyncio.Queue[Any]", cancellation: Cancellation) -> None:
    """Moves the host's reply frames to the sink; a cancel frame cancels the turn instead (§4.8)."""
    try:
        async for frame in frames:
            if frame.WhichOneof("frame") == "cancel":
                cancellation.cancel(f"controller cancelled the turn ({frame.cancel.reason or 'no reason'})")
                continue
            replies.put_nowait(frame)
        replies.put_nowait(STREAM_ENDED)
    except asyncio.CancelledError:
        raise
    except BaseException as err:
        replies.put_nowait(err)


def _handlers(servicer: HarnessServicer) -> Any:
    _, describe_req, describe_resp = _proto.method("Harness", "Describe")
    _, connect_req, connect_resp = _proto.method("Harness", "Connect")
    return grpc.method_handlers_generic_handler(
        f"{_proto.PACKAGE}.Harness",
        {
            "Describe": grpc.unary_unary_rpc_method_handler(
                servicer.describe,
                request_deserializer=describe_req.FromString,
                response_serializer=describe_resp.SerializeToString,
            ),
            "Connect": grpc.stream_stream_rpc_method_handler(
                servicer.connect,
                request_deserializer=connect_req.FromString,
                response_serializer=connect_resp.SerializeToString,
            ),
        },
    )


def listen_address(listen: Optional[str]) -> str:
    """The address to bind: ``listen``, or ``0.0.0.0:$HARNESS_PORT`` when it is None (the vm image
    contract). Forms of docs/protocol.md §2.2; any other scheme is a ValueError."""
    if listen is None:
        port = os.environ.get(HARNESS_PORT_ENV)
        if port is None or not port.isdigit():
            raise ValueError(f"serve: give listen= or set {HARNESS_PORT_ENV} to a port number (got {port!r})")
        return f"0.0.0.0:{int(port)}"
    if listen.startswith("unix:"):
        path = listen[len("unix://") :] if listen.startswith("unix://") else listen[len("unix:") :]
        if listen.startswith("unix://") and not path.startswith("/"):
            raise ValueError(f"serve: {listen}: a unix:// address needs an absolute path (unix:///abs/path)")
        if path == "":
            raise ValueError(f"serve: {listen}: no socket path")
        return listen
    if listen.startswith("dns:///"):
        listen = listen[len("dns:///") :]
    if "://" in listen or not re.match(r"^(\[[0-9a-fA-F:.]+\]|[^:\[\]/]*):\d{1,5}$", listen):
        raise ValueError(
            f"serve: {listen!r} is not a node address (host:port, [v6]:port, unix:///abs/path, unix:rel/path)"
        )
    return listen


class Node:
    """A listening node: its dialable ``address`` (port 0 resolved) and ``close()``."""

    def __init__(self, server: Any, servicer: HarnessServicer, address: str) -> None:
        self._server = server
        self._servicer = servicer
        self.address = address

    async def close(self, grace: float = CLOSE_GRACE_S) -> None:
        """Cancels running turns and stops the server, cutting calls still open after ``grace`` seconds."""
        self._servicer.shutdown()
        await self._server.stop(grace)


async def serve_async(harness: Union[Harness, type], listen: Optional[str] = None) -> Node:
    """Starts a node on the running event loop; returns once it listens."""
    instance = harness() if isinstance(harness, type) else harness
    servicer = HarnessServicer(instance)
    server = aio.server(
        options=[
            ("grpc.max_receive_message_length", HARNESS_MAX_RECEIVE_BYTES),
            # Two nodes must never share a port silently.
            ("grpc.so_reuseport", 0),
        ]
    )
    server.add_generic_rpc_handlers((_handlers(servicer),))
    address = listen_address(listen)
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"serve: cannot listen on {address}")
    await server.start()
    if not address.startswith("unix:"):
        address = address[: address.rfind(":")] + f":{port}"
    return Node(server, servicer, address)


def serve(
    harness: Union[Harness, type],
    listen: Optional[str] = None,
    *,
    ready: Optional[TextIO] = sys.stdout,
) -> None:
    """Serves ``harness`` until SIGTERM or SIGINT (the vm image contract: with ``listen`` None it listens
    on 0.0.0.0:$HARNESS_PORT). Prints ``ready ADDRESS`` on ``ready`` once listening (None: nothing)."""

    async def main() -> None:
        node = await serve_async(harness, listen)
        if ready is not None:
            print(f"ready {node.address}", file=ready, flush=True)
        stop = asyncio.Event()
        if threading.current_thread() is threading.main_thread():
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            await node.close()

    asyncio.run(main())


_shared_loop: Optional[asyncio.AbstractEventLoop] = None
_shared_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    """The process's one background event loop (grpc.aio polls from one loop per process: nodes on
    several loops make its completion queue fail with EAGAIN)."""
    global _shared_loop
    with _shared_lock:
        if _shared_loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="harnesshost-nodes", daemon=True).start()
            _shared_loop = loop
        return _shared_loop


class BackgroundNode:
    """A node served on the process's background event loop, in a daemon thread (tests, notebooks,
    embedding). Every background node of a process shares that loop."""

    def __init__(self, harness: Union[Harness, type], listen: str) -> None:
        self._loop = _background_loop()
        self._node: Node = asyncio.run_coroutine_threadsafe(serve_async(harness, listen), self._loop).result()
        self.address = self._node.address

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The node's event loop (an AsyncSink's calls run on it)."""
        return self._loop

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._node.close(), self._loop).result()


def serve_in_thread(harness: Union[Harness, type], listen: str) -> BackgroundNode:
    """Serves ``harness`` on a background thread; returns once it listens. ``close()`` stops it."""
    return BackgroundNode(harness, listen)
