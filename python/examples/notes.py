"""An example notes agent on the Python SDK (docs/python.md): "remember TEXT" writes TEXT to the
session's note with the host's notes.write tool, which an operator must approve first; anything else
is answered by the model over the whole conversation. Invariants: the harness is stateless — its model
request is built only from Start.history and the turn's inputs — and the write's idempotency key is
derived from the execution id, so a re-driven turn makes the very same call and the host never writes
twice.

Usage: python3 notes.py [--listen ADDRESS]   (default 0.0.0.0:$HARNESS_PORT); prints "ready ADDRESS".
"""
import argparse

from harnesshost import AsyncSink, Descriptor, Harness, Message, StartInfo, ToolCall, serve

SYSTEM = "You keep the user's notes. Answer briefly."


class Notes(Harness):
    descriptor = Descriptor(id="pynotes", version="1", models=["echo"], tools=["notes.write"])

    async def run(self, start: StartInfo, sink: AsyncSink) -> None:
        text = start.inputs[-1].text if start.inputs else ""
        if text.startswith("remember "):
            call = ToolCall(
                id="write-1",
                tool="notes.write",
                args={"name": "notes", "text": text[len("remember ") :]},
                idempotency_key=f"{start.execution_id}:write-1",
            )
            # Parks the turn until an operator approves or denies; the host resumes it afterwards.
            result = await sink.approval_tool_call(call)
            if result.denied:
                await sink.output("not saved: the operator denied the write")
            elif result.is_error:
                await sink.output(f"not saved: {result.error}")
            else:
                await sink.output(f"saved {(result.output or {}).get('bytes')} bytes")
            return
        await sink.model("echo", [Message("system", SYSTEM), *start.conversation()])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen")
    serve(Notes(), listen=ap.parse_args().listen)
