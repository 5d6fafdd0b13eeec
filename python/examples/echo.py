"""An example stateless harness on the Python SDK (docs/python.md): each turn asks the host's model to
repeat the turn's last input. Invariant: one turn is exactly one model call whose request depends only
on the turn's inputs, so the host can replay it from the journal (STATELESS_REPLAY).

Usage: python3 echo.py [--listen ADDRESS]   (default 0.0.0.0:$HARNESS_PORT); prints "ready ADDRESS".
"""
import argparse

from harnesshost import AsyncSink, Descriptor, Harness, Message, StartInfo, serve


class Echo(Harness):
    descriptor = Descriptor(id="pyecho", version="1", models=["echo"], fork_safe=True)

    async def run(self, start: StartInfo, sink: AsyncSink) -> None:
        last = start.inputs[-1].text if start.inputs else ""
        # The host journals the model's answer as OUTPUT: the harness does not repeat it.
        await sink.model("echo", [Message("user", last)])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen")
    serve(Echo(), listen=ap.parse_args().listen)
