"""The node's side of Harness.Connect and Describe driven frame by frame, as a host would and as a broken
host would (docs/protocol.md §3, §4): refusals before the harness runs, correlation checks, the cancel
frame, one END per turn, busy sessions, and the listen addresses serve accepts.
"""

from __future__ import annotations

import asyncio
import queue
import shutil
import tempfile
import threading
import unittest
from typing import Any, Iterator, List

import grpc

from harnesshost import AsyncSink, Descriptor, Harness, Message, StartInfo, Tier, _proto, listen_address, serve_in_thread

WAIT_S = 30.0


class Modeller(Harness):
    descriptor = Descriptor(id="pymodel", version="7", tier=Tier.REQUIRES_MEMORY_SNAPSHOT, models=["echo"], fork_safe=True)

    def __init__(self) -> None:
        self.started = threading.Event()

    async def run(self, start: StartInfo, sink: AsyncSink) -> None:
        self.started.set()
        if start.inputs and start.inputs[0].text == "wait":
            await asyncio.Event().wait()
        if start.inputs and start.inputs[0].text == "endless":
            i = 0
            while True:  # awaits only the sink: without backpressure it would never let the loop run
                await sink.output(str(i))
                i += 1
        if start.inputs and start.inputs[0].text == "burst":
            for i in range(500):  # never awaits anything but the sink: the node must still stream
                await sink.output(str(i))
            return
        answer = await sink.model("echo", [Message("user", "hi")])
        await sink.output(answer.text)


def frame(**fields: Any) -> Any:
    return _proto.message_class("ControllerFrame")(**fields)


def start_frame(session: str = "sess-a", execution_id: str = "00000000000000aa", text: str = "", resume_from_seq: int = 0) -> Any:
    inputs = [{"role": "user", "parts": [{"text": {"text": text}}]}] if text else []
    return frame(session=session, execution_id=execution_id, start={"inputs": inputs, "resume_from_seq": resume_from_seq})


class Stream:
    """One Connect call: frames are sent as the test puts them; events are read as they arrive."""

    def __init__(self, channel: grpc.Channel) -> None:
        path, req, resp = _proto.method("Harness", "Connect")
        call = channel.stream_stream(path, request_serializer=req.SerializeToString, response_deserializer=resp.FromString)
        self.outbox: "queue.Queue[Any]" = queue.Queue()
        self.call = call(self._frames(), timeout=WAIT_S)

    def _frames(self) -> Iterator[Any]:
        while True:
            item = self.outbox.get()
            if item is None:
                return
            yield item

    def send(self, f: Any) -> None:
        self.outbox.put(f)

    def close(self) -> None:
        self.outbox.put(None)

    def next(self) -> Any:
        return next(self.call)

    def rest(self) -> List[Any]:
        return list(self.call)


class NodeProtocolTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="hh-pynode-")
        self.harness = Modeller()
        self.node = serve_in_thread(self.harness, f"unix://{self.dir}/node.sock")
        self.channel = grpc.insecure_channel(self.node.address)

    def tearDown(self) -> None:
        self.channel.close()
        self.node.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def kind(self, event: Any) -> str:
        return str(_proto.enum_name("EventKind", event.kind))

    def test_describeAnswersTheDeclaredDescriptor(self) -> None:
        path, req, resp = _proto.method("Harness", "Describe")
        d = self.channel.unary_unary(path, request_serializer=req.SerializeToString, response_deserializer=resp.FromString)(req(), timeout=WAIT_S)
        self.assertEqual((d.id, d.version, list(d.models)), ("pymodel", "7", ["echo"]))
        self.assertEqual(_proto.enum_name("Resumability", d.capabilities.resumability), "RESUMABILITY_REQUIRES_MEMORY_SNAPSHOT")
        self.assertTrue(d.capabilities.fork_safe)

    def test_aStreamWhoseFirstFrameIsNotStartIsRefusedBeforeTheHarnessRuns(self) -> None:
        for first, why in [
            (frame(session="s", execution_id="e", cancel={"reason": "x"}), "first ControllerFrame must be Start"),
            (start_frame(execution_id=""), "Start requires an execution_id"),
            (start_frame(resume_from_seq=-1), "resume_from_seq out of range: -1"),
            (start_frame(resume_from_seq=2**53), f"resume_from_seq out of range: {2**53}"),
        ]:
            s = Stream(self.channel)
            s.send(first)
            s.close()
            with self.assertRaises(grpc.RpcError) as refused:
                s.rest()
            self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertEqual(refused.exception.details(), why)
        self.assertFalse(self.harness.started.is_set())

    def test_aModelReplyWithAnotherCorrelationIdFailsTheTurnWithOneEnd(self) -> None:
        s = Stream(self.channel)
        s.send(start_frame())
        call = s.next()
        self.assertEqual(self.kind(call), "EVENT_MODEL_CALL")
        self.assertEqual(len(call.model.id), 16)
        self.assertEqual(call.model.input_hash, "")
        s.send(frame(session="sess-a", execution_id="00000000000000aa", model={"model_call_id": "not-" + call.model.id}))
        end = s.next()
        self.assertEqual(self.kind(end), "EVENT_END")
        self.assertEqual(end.end.state, "FAILED")
        self.assertEqual(end.end.error.code, grpc.StatusCode.INTERNAL.value[0])
        self.assertIn("model result correlation mismatch", end.end.error.description)
        s.close()
        self.assertEqual(s.rest(), [])

    def test_aReplyForAnotherExecutionFailsThePendingCall(self) -> None:
        s = Stream(self.channel)
        s.send(start_frame())
        call = s.next()
        s.send(frame(session="sess-a", execution_id="00000000000000bb", model={"model_call_id": call.model.id}))
        end = s.next()
        self.assertEqual(end.end.state, "FAILED")
        self.assertIn("result execution_id mismatch", end.end.error.description)
        s.close()

    def test_aCorrelatedModelReplyCompletesTheTurn(self) -> None:
        s = Stream(self.channel)
        s.send(start_frame())
        call = s.next()
        reply = {"model_call_id": call.model.id, "message": {"role": "assistant", "parts": [{"text": {"text": "echo:hi"}}]}}
        s.send(frame(session="sess-a", execution_id="00000000000000aa", model=reply))
        out, end = s.next(), s.next()
        self.assertEqual((self.kind(out), out.message.parts[0].text.text), ("EVENT_OUTPUT", "echo:hi"))
        self.assertEqual((self.kind(end), end.end.state), ("EVENT_END", "COMPLETED"))
        self.assertTrue(all(e.execution_id == "00000000000000aa" for e in (out, end)))
        s.close()
        self.assertEqual(s.rest(), [])

    def test_aBurstOfSinkCallsStreamsEveryEventInOrderThenOneEnd(self) -> None:
        s = Stream(self.channel)
        s.send(start_frame(text="burst"))
        s.close()
        events = s.rest()
        self.assertEqual([e.message.parts[0].text.text for e in events[:-1]], [str(i) for i in range(500)])
        self.assertEqual((self.kind(events[-1]), events[-1].end.state), ("EVENT_END", "COMPLETED"))

    def test_aHarnessThatNeverStopsEmittingStillStreamsAndCanBeCancelled(self) -> None:
        s = Stream(self.channel)
        s.send(start_frame(text="endless"))
        first = s.next()
        self.assertEqual(first.message.parts[0].text.text, "0")
        s.send(frame(session="sess-a", execution_id="00000000000000aa", cancel={"reason": "enough"}))
        s.close()
        end = s.rest()[-1]
        self.assertEqual((self.kind(end), end.end.state), ("EVENT_END", "CANCELED"))

    def test_aCancelFrameEndsTheTurnCanceled(self) -> None:
        s = Stream(self.channel)
        s.send(start_frame(text="wait"))
        self.assertTrue(self.harness.started.wait(WAIT_S))
        s.send(frame(session="sess-a", execution_id="00000000000000aa", cancel={"reason": "operator"}))
        end = s.next()
        self.assertEqual(end.end.state, "CANCELED")
        self.assertEqual(end.end.error.code, grpc.StatusCode.CANCELLED.value[0])
        self.assertIn("controller cancelled the turn (operator)", end.end.error.description)
        s.close()

    def test_aStartForASessionMidTurnIsRefusedAborted(self) -> None:
        first = Stream(self.channel)
        first.send(start_frame(text="wait"))
        self.assertTrue(self.harness.started.wait(WAIT_S))
        second = Stream(self.channel)
        second.send(start_frame(execution_id="00000000000000cc", text="wait"))
        second.close()
        with self.assertRaises(grpc.RpcError) as refused:
            second.rest()
        self.assertEqual(refused.exception.code(), grpc.StatusCode.ABORTED)
        self.assertIn("sess-a is mid-turn", refused.exception.details())
        first.call.cancel()

    def test_serveAcceptsTheProtocolsAddressFormsAndRefusesOthers(self) -> None:
        self.assertEqual(listen_address("127.0.0.1:0"), "127.0.0.1:0")
        self.assertEqual(listen_address("[::1]:7000"), "[::1]:7000")
        self.assertEqual(listen_address("unix:///tmp/x.sock"), "unix:///tmp/x.sock")
        self.assertEqual(listen_address("unix:rel.sock"), "unix:rel.sock")
        self.assertEqual(listen_address("dns:///localhost:7000"), "localhost:7000")
        for bad in ["http://127.0.0.1:7000", "unix://rel.sock", "127.0.0.1", "unix:"]:
            with self.assertRaises(ValueError):
                listen_address(bad)


class HarnessPortTest(unittest.TestCase):
    def test_withoutListenServeBindsAllInterfacesOnHarnessPort(self) -> None:
        import os

        saved = os.environ.get("HARNESS_PORT")
        try:
            os.environ["HARNESS_PORT"] = "50123"
            self.assertEqual(listen_address(None), "0.0.0.0:50123")
            del os.environ["HARNESS_PORT"]
            with self.assertRaises(ValueError) as refused:
                listen_address(None)
            self.assertIn("HARNESS_PORT", str(refused.exception))
        finally:
            if saved is not None:
                os.environ["HARNESS_PORT"] = saved


if __name__ == "__main__":
    unittest.main()
