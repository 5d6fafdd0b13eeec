"""Every sink call of the Python SDK against a real host over gRPC (docs/python.md): model call, tool
call at most once across a host kill, approval park -> approve -> resume, question -> answer, cancel,
plain-function harnesses, and protocol violations refused with a clear error. Each test names the
invariant it checks. Run: python3 -m unittest discover -s python/tests (test/python/sdk.test.ts does).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
import threading
import unittest
from typing import Any, List, Optional

import grpc

from harnesshost import (
    AsyncSink,
    Descriptor,
    Harness,
    HarnessError,
    Message,
    Sink,
    StartInfo,
    StatusCode,
    ToolCall,
    ToolResult,
    Usage,
    serve_in_thread,
)
from realhost import ROOT, HostProcess, Turn, kind, outputs

sys.path.insert(0, os.path.join(ROOT, "python", "examples"))
from notes import Notes  # noqa: E402  (the docs' example, served as written)

WAIT_S = 60.0


class Probe(Harness):
    """One behaviour per input: what each test drives."""

    descriptor = Descriptor(id="pyprobe", version="1", models=["echo"])

    def __init__(self) -> None:
        self.hold_after_tool = threading.Event()  # set: the "tool" turn waits for release after its call
        self.release = threading.Event()
        self.saw_cancel = threading.Event()
        self.tool_calls = 0
        self.late_sink: Optional[AsyncSink] = None

    async def run(self, start: StartInfo, sink: AsyncSink) -> None:
        text = start.inputs[-1].text
        if text.startswith("model "):
            answer = await sink.model("echo", [Message("user", text[len("model ") :])])
            await sink.output(f"got {answer.text}")
        elif text == "tool":
            self.tool_calls += 1
            call = ToolCall("w1", "notes.write", {"name": "n", "text": "hello"}, f"{start.execution_id}:w1")
            result = await sink.tool_call(call)
            await sink.output(f"wrote duplicate={(result.output or {}).get('duplicate')}")
            if self.hold_after_tool.is_set():
                await asyncio.to_thread(self.release.wait)
        elif text == "approve":
            call = ToolCall("w1", "notes.write", {"name": "n", "text": "gated"}, f"{start.execution_id}:w1")
            result = await sink.approval_tool_call(call)
            await sink.output("denied" if result.denied else f"saved {(result.output or {}).get('bytes')}")
        elif text == "ask":
            answer = await sink.ask("Which colour?", choices=["red", "blue"])
            await sink.output(f"declined" if answer.declined else f"answer {answer.text}")
        elif text == "hang":
            await sink.output("waiting")
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.saw_cancel.set()
                raise
        elif text == "no key":
            await sink.tool_call(ToolCall("w1", "notes.write", {"name": "n", "text": "x"}, ""))
        elif text == "nan":
            await sink.tool_call(ToolCall("w1", "notes.write", {"n": float("nan")}, f"{start.execution_id}:w1"))
        elif text == "swallow":
            try:
                await sink.tool_call(ToolCall("w1", "notes.write", {"n": float("inf")}, "k"))
            except HarnessError:
                pass  # caught, but the failure is sticky: the next call fails the same way
            await sink.output("after the failure")
        elif text == "local":
            await sink.report(ToolResult("local-1", output={"sum": 3}))
            await sink.usage(Usage(model="echo", input_tokens=5, output_tokens=2))
            await sink.output("reported")
        elif text == "late":
            self.late_sink = sink
            await sink.output("returning")


class SyncProbe(Harness):
    """A plain-function harness: runs in a worker thread with the blocking sink."""

    descriptor = Descriptor(id="pysync", version="1", models=["echo"])

    def __init__(self) -> None:
        self.saw_cancel = threading.Event()

    def run(self, start: StartInfo, sink: Sink) -> None:
        text = start.inputs[-1].text
        if text == "hang":
            sink.output("waiting")
            sink.cancelled.wait(WAIT_S)
            if sink.cancelled.is_set():
                self.saw_cancel.set()
            sink.output("after cancel")  # refused: the turn is cancelled
            return
        answer = sink.model("echo", [Message("user", text)])
        sink.output(f"sync got {answer.text}")


class RealHostTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="hh-pysdk-")
        self.probe = Probe()
        self.sync = SyncProbe()
        self.nodes = [
            serve_in_thread(self.probe, f"unix://{self.dir}/probe.sock"),
            serve_in_thread(self.sync, f"unix://{self.dir}/sync.sock"),
            serve_in_thread(Notes(), f"unix://{self.dir}/notes.sock"),
        ]
        self.hosts: List[HostProcess] = []

    def tearDown(self) -> None:
        self.probe.release.set()
        for h in self.hosts:
            h.stop()
        for n in self.nodes:
            n.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def host(self) -> HostProcess:
        h = HostProcess(
            os.path.join(self.dir, "data"),
            [
                f"probe=remote:{self.nodes[0].address}",
                f"sync=remote:{self.nodes[1].address}",
                f"notes=remote:{self.nodes[2].address}",
            ],
            ["--tool-without-approval", "notes.write"],
        )
        self.hosts.append(h)
        return h

    def test_aModelCallIsAnsweredByTheHostsModelAndJournaled(self) -> None:
        turn = self.host().exec("model hi", harness="probe")
        self.assertEqual(turn.outputs, ["echo:hi", "got echo:hi"])
        self.assertEqual(turn.kinds, ["EXECUTION_START", "INPUT", "MODEL_CALL", "OUTPUT", "OUTPUT", "END"])

    def test_aLocalToolsResultAndUsageAreJournaledInCallOrder(self) -> None:
        turn = self.host().exec("local", harness="probe")
        self.assertEqual(turn.kinds, ["EXECUTION_START", "INPUT", "TOOL_RESULT", "USAGE", "OUTPUT", "END"])
        result = turn.records[2].event.result
        self.assertEqual((result.id, result.output["sum"]), ("local-1", 3))
        usage = turn.records[3].event.usage
        self.assertEqual((usage.model, usage.input_tokens, usage.output_tokens), ("echo", 5, 2))

    def test_aPlainFunctionHarnessRunsInAThreadWithTheBlockingSink(self) -> None:
        turn = self.host().exec("plain", harness="sync")
        self.assertEqual(turn.outputs, ["echo:plain", "sync got echo:plain"])

    def test_aToolCallRunsAtMostOnceAcrossAHostKill(self) -> None:
        data = os.path.join(self.dir, "data")
        first = self.host()
        self.probe.hold_after_tool.set()
        stream = first.exec_stream("tool", harness="probe")
        session = ""
        for update in stream:
            if update.WhichOneof("update") == "session" and not session:
                session = update.session.metadata.uid
            if update.WhichOneof("update") == "record" and kind(update.record) == "OUTPUT":
                break  # the tool's result and the output after it are committed; the turn is still running
        first.kill()
        self.probe.hold_after_tool.clear()
        second = self.host()
        second.resume(session)
        records = second.records(session)
        kinds = [kind(r) for r in records]
        self.assertEqual(kinds.count("TOOL_CALL"), 1)
        self.assertEqual(kinds.count("TOOL_RESULT"), 1)
        self.assertEqual(kinds[-2:], ["END", "RESUME"])
        self.assertEqual(outputs(records), ["wrote duplicate=False"])
        self.assertEqual(self.probe.tool_calls, 2)  # the turn ran twice; the tool once
        with open(os.path.join(data, "sandbox", session, "applied.jsonl")) as f:
            applied = [json.loads(line) for line in f if line.strip()]
        self.assertEqual(len(applied), 1)

    def test_anApprovalGateParksTheTurnAndAnApprovedResumeRunsTheToolOnce(self) -> None:
        h = self.host()
        turn = h.exec("approve", harness="probe")
        self.assertEqual(turn.kinds[-3:], ["TOOL_CALL", "APPROVAL_REQUEST", "SUSPEND"])
        assert turn.final is not None
        self.assertEqual(turn.final.exec_state, 3)  # EXEC_AWAITING
        ref = turn.final.pending_approval
        self.assertEqual(ref.tool_call_id, "w1")
        h.approve(turn.session, ref, True)
        h.resume(turn.session)
        records = h.records(turn.session)
        self.assertEqual(outputs(records), ["saved 5"])
        self.assertEqual([kind(r) for r in records][-2:], ["END", "RESUME"])
        self.assertEqual(h.get(turn.session).exec_state, 4)  # EXEC_COMPLETED

    def test_aDeniedGateReturnsTheDenialReceiptAndRunsNothing(self) -> None:
        h = self.host()
        turn = h.exec("approve", harness="probe")
        assert turn.final is not None
        h.approve(turn.session, turn.final.pending_approval, False, "no")
        h.resume(turn.session)
        self.assertEqual(outputs(h.records(turn.session)), ["denied"])
        self.assertFalse(os.path.exists(os.path.join(self.dir, "data", "sandbox", turn.session, "applied.jsonl")))

    def test_theNotesExampleWritesOnlyAfterAnApprovalAndAnswersOtherwiseOverTheConversation(self) -> None:
        h = self.host()
        first = h.exec("hello", harness="notes")
        self.assertEqual(first.outputs, ["echo:hello"])
        turn = h.exec("remember buy milk", session=first.session)
        assert turn.final is not None
        self.assertEqual(turn.final.pending_approval.tool_call_id, "write-1")
        applied = os.path.join(self.dir, "data", "sandbox", first.session, "applied.jsonl")
        self.assertFalse(os.path.exists(applied))
        h.approve(first.session, turn.final.pending_approval, True)
        h.resume(first.session)
        self.assertEqual(outputs(h.records(first.session))[-1], "saved 8 bytes")
        with open(os.path.join(self.dir, "data", "sandbox", first.session, "notes", "notes.txt")) as f:
            self.assertEqual(f.read(), "buy milk")

    def test_aQuestionParksTheTurnAndTheAnswerReachesTheHarness(self) -> None:
        h = self.host()
        turn = h.exec("ask", harness="probe")
        assert turn.final is not None
        ref = turn.final.pending_approval
        self.assertEqual(ref.tool_call_id, "ask-0")
        with self.assertRaises(grpc.RpcError) as refused:
            h.approve(turn.session, ref, True, "green")  # not among the choices
        self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        h.approve(turn.session, ref, True, "blue")
        h.resume(turn.session)
        self.assertEqual(outputs(h.records(turn.session)), ["answer blue"])

    def test_cancelReachesAnAsyncRunAndTheTurnStaysResumable(self) -> None:
        self._cancel("probe", self.probe.saw_cancel)

    def test_cancelReachesAPlainFunctionRunThroughSinkCancelled(self) -> None:
        self._cancel("sync", self.sync.saw_cancel)

    def _cancel(self, harness: str, saw: threading.Event) -> None:
        h = self.host()
        stream = h.exec_stream("hang", harness=harness)
        session = ""
        failure: List[grpc.RpcError] = []

        def drain() -> None:
            try:
                for _ in stream:
                    pass
            except grpc.RpcError as err:
                failure.append(err)

        for update in stream:
            if update.WhichOneof("update") == "session" and not session:
                session = update.session.metadata.uid
            if update.WhichOneof("update") == "record" and kind(update.record) == "OUTPUT":
                break
        rest = threading.Thread(target=drain)
        rest.start()
        h.cancel(session)
        self.assertTrue(saw.wait(WAIT_S), "the harness never saw the cancellation")
        rest.join(WAIT_S)
        self.assertEqual(len(failure), 1)
        self.assertEqual(failure[0].code(), grpc.StatusCode.CANCELLED)
        kinds = [kind(r) for r in h.records(session)]
        self.assertNotIn("END", kinds)
        self.assertEqual(outputs(h.records(session)), ["waiting"])

    def _refused(self, text: str) -> "tuple[str, List[str]]":
        """Runs a turn that must fail INVALID_ARGUMENT; its error details and the session's journal kinds."""
        h = self.host()
        turn = Turn()
        with self.assertRaises(grpc.RpcError) as refused:
            for update in h.exec_stream(text, harness="probe"):
                turn.take(update)
        self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        return refused.exception.details(), [kind(r) for r in h.records(turn.session)]

    def test_aToolCallWithoutAnIdempotencyKeyIsRefusedByTheHostWithAClearError(self) -> None:
        details, kinds = self._refused("no key")
        self.assertIn("idempotency", details)
        self.assertNotIn("TOOL_CALL", kinds)

    def test_argumentsThatAreNotJsonAreRefusedBeforeTheyReachTheWire(self) -> None:
        details, kinds = self._refused("nan")
        self.assertIn("tool call w1 args: $.n is nan, not a JSON number", details)
        self.assertNotIn("TOOL_CALL", kinds)

    def test_aFailedSinkCallIsStickyEvenWhenTheHarnessCatchesIt(self) -> None:
        details, kinds = self._refused("swallow")
        self.assertIn("is inf, not a JSON number", details)
        self.assertNotIn("OUTPUT", kinds)  # the output after the caught failure was refused too

    def test_aSinkUsedAfterTheTurnEndedFails(self) -> None:
        h = self.host()
        self.assertEqual(h.exec("late", harness="probe").outputs, ["returning"])
        sink = self.probe.late_sink
        assert sink is not None
        node = self.nodes[0]
        with self.assertRaises(HarnessError) as refused:
            asyncio.run_coroutine_threadsafe(sink.output("too late"), node.loop).result(WAIT_S)
        self.assertEqual(refused.exception.code, StatusCode.FAILED_PRECONDITION)
        self.assertIn("sink used after the turn ended", str(refused.exception))


if __name__ == "__main__":
    unittest.main()
