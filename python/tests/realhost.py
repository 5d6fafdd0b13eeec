"""Test support: a real harnesshost host process (``harnesshost serve``) and a small Sessions client.
Invariant: every host runs on its own data directory and on a port the OS picks (never 7233-7235),
and is stopped (or killed) by the process id this module started.

The host command is ``$HARNESSHOST_CMD`` (split on spaces; default ``node <repo>/bin/harnesshost.js``).
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from typing import Any, Dict, Iterator, List, Optional, Sequence

import grpc

from harnesshost import _proto

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
START_DEADLINE_S = 60.0
CALL_DEADLINE_S = 60.0


def host_command() -> List[str]:
    cmd = os.environ.get("HARNESSHOST_CMD")
    return cmd.split(" ") if cmd else ["node", os.path.join(ROOT, "bin", "harnesshost.js")]


class HostProcess:
    """``harnesshost serve`` on ``data`` with the given harness registrations (``name=remote:ADDRESS``)."""

    def __init__(self, data: str, harnesses: Sequence[str], extra: Sequence[str] = ()) -> None:
        args = [*host_command(), "serve", "--data", data, "--addr", "127.0.0.1:0", "--registry-addr", "off", "--http-addr", "off"]
        for h in harnesses:
            args += ["--harness", h]
        self.proc = subprocess.Popen([*args, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stderr: List[str] = []
        self._listening = threading.Event()
        self._addr = ""
        self._drains = [
            threading.Thread(target=self._drain, args=(self.proc.stderr, True), daemon=True),
            threading.Thread(target=self._drain, args=(self.proc.stdout, False), daemon=True),
        ]
        for t in self._drains:
            t.start()
        if not self._listening.wait(START_DEADLINE_S) or not self._addr:
            self.kill()
            raise RuntimeError(f"the host did not start listening:\n{''.join(self.stderr)}")
        self.addr = self._addr
        self.channel = grpc.insecure_channel(self.addr)

    def _drain(self, stream: Any, keep: bool) -> None:
        """Reads a pipe to its end; the first "listening addr=" line (on either) names the address."""
        for line in stream:
            if keep:
                self.stderr.append(line)
            m = re.search(r"listening addr=(\S+)", line)
            if m and not self._listening.is_set():
                self._addr = m.group(1)
                self._listening.set()
        self._listening.set()

    def kill(self) -> None:
        """SIGKILL: nothing is flushed or closed (a crash)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._close_channel()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait()
        self._close_channel()

    def _close_channel(self) -> None:
        if hasattr(self, "channel"):
            self.channel.close()
        for t in self._drains:
            t.join(START_DEADLINE_S)  # the process exited: its pipes are at their end
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()

    # -- Sessions client ----------------------------------------------------------------------------

    def _unary(self, name: str, **fields: Any) -> Any:
        path, req, resp = _proto.method("Sessions", name)
        call = self.channel.unary_unary(path, request_serializer=req.SerializeToString, response_deserializer=resp.FromString)
        return call(req(**fields), timeout=CALL_DEADLINE_S)

    def exec_stream(self, text: str, harness: str = "", session: str = "") -> Iterator[Any]:
        """Exec's ExecUpdate frames as they arrive (a record per committed journal record)."""
        path, req, resp = _proto.method("Sessions", "Exec")
        call = self.channel.unary_stream(path, request_serializer=req.SerializeToString, response_deserializer=resp.FromString)
        message = _proto.message_class("Message")(role="user", parts=[{"text": {"text": text}}])
        return iter(call(req(harness=harness, session=session, inputs=[message]), timeout=CALL_DEADLINE_S))

    def exec(self, text: str, harness: str = "", session: str = "") -> "Turn":
        turn = Turn()
        for update in self.exec_stream(text, harness, session):
            turn.take(update)
        return turn

    def approve(self, session: str, ref: Any, approved: bool, reason: str = "") -> Any:
        return self._unary(
            "Approve",
            session=session,
            execution_id=ref.execution_id,
            tool_call_id=ref.tool_call_id,
            request_seq=ref.request_seq,
            approved=approved,
            reason=reason,
        )

    def resume(self, session: str) -> Any:
        return self._unary("Resume", session=session)

    def cancel(self, session: str, reason: str = "test") -> Any:
        return self._unary("Cancel", session=session, reason=reason)

    def get(self, session: str) -> Any:
        return self._unary("GetSession", uid=session)

    def records(self, session: str) -> List[Any]:
        """The session's journal, in order (Sessions.Replay reads it; it runs nothing)."""
        path, req, resp = _proto.method("Sessions", "Replay")
        call = self.channel.unary_stream(path, request_serializer=req.SerializeToString, response_deserializer=resp.FromString)
        return list(call(req(session=session), timeout=CALL_DEADLINE_S))


def kind(record: Any) -> str:
    """A record's kind without the EVENT_ prefix; a lifecycle record is named by its lifecycle kind
    (``RESUME``, ``SUSPEND``, …)."""
    if record.event.WhichOneof("body") == "lifecycle":
        return _proto.enum_name("Lifecycle.Kind", record.event.lifecycle.kind).removeprefix("LIFECYCLE_")
    return _proto.enum_name("EventKind", record.event.kind).removeprefix("EVENT_")


def outputs(records: Sequence[Any]) -> List[str]:
    from harnesshost import text_of

    return [text_of(r.event.message) for r in records if kind(r) == "OUTPUT"]


class Turn:
    """What one Exec streamed: the session, its records and the final Session frame."""

    def __init__(self) -> None:
        self.session = ""
        self.records: List[Any] = []
        self.final: Optional[Any] = None

    def take(self, update: Any) -> None:
        which = update.WhichOneof("update")
        if which == "session":
            if not self.session:
                self.session = update.session.metadata.uid
            else:
                self.final = update.session
        elif which == "record":
            self.records.append(update.record)

    @property
    def kinds(self) -> List[str]:
        return [kind(r) for r in self.records]

    @property
    def outputs(self) -> List[str]:
        return outputs(self.records)
