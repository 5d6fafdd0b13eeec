"""The RAM counter on the Python SDK, for the vm runtime (docs/python.md): each turn adds one to an
ordinary Python integer and answers it. Invariant: the count is never rebuilt from Start.history, so
only a memory snapshot keeps it — on the vm runtime, a whole-VM snapshot — which is what it declares
(REQUIRES_MEMORY_SNAPSHOT). One guest serves one session, so the count is process-wide.

The turn is a plain function: the SDK runs it in a worker thread with a blocking sink. The input
"random" alone is answered "random:<uuid>" from ``fresh_uuid`` without counting — the
memory.fork-randomness probe: fork children of one snapshot must draw different values.

Usage: python3 counter.py   (listens on 0.0.0.0:$HARNESS_PORT; prints "ready ADDRESS")
"""
import threading

from harnesshost import Descriptor, Harness, Sink, StartInfo, Tier, fresh_uuid, serve


class Counter(Harness):
    descriptor = Descriptor(id="pycounter-sdk", version="1", tier=Tier.REQUIRES_MEMORY_SNAPSHOT)

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def run(self, start: StartInfo, sink: Sink) -> None:
        if len(start.inputs) == 1 and start.inputs[0].text == "random":
            sink.output("random:" + fresh_uuid())
            return
        with self.lock:
            self.count += 1
            count = self.count
        sink.output(str(count))


if __name__ == "__main__":
    serve(Counter())
