#!/usr/bin/python3
"""The reference Python harness node for the vm runtime: a RAM counter served over gRPC (Debian's
grpcio + protobuf). Each turn adds one to an ordinary Python integer and answers it as text; the
count is never rebuilt from Start.history, so only a memory snapshot (a whole-VM snapshot on the vm
runtime) keeps it — which is what it declares, REQUIRES_MEMORY_SNAPSHOT, unless told to lie with
``--resumability STATELESS_REPLAY``.

One process is one actor: in a VM the guest serves exactly one session, and a fork's children are
copies of the whole process, so the count is process-wide, not keyed by session id.

Usage: counter_node.py [--resumability REQUIRES_MEMORY_SNAPSHOT|STATELESS_REPLAY]
Listens on 0.0.0.0:$HARNESS_PORT (default 50051); prints "ready PORT" once listening.
"""
import argparse
import os
import random
import secrets
import signal
import sys
import threading
import uuid
from concurrent import futures

import grpc

from hhsdk import DESCRIPTORS
from hhsdk.proto import Protos


class CounterNode:
    def __init__(self, protos, resumability):
        self.p = protos
        self.resumability = resumability
        self.count = 0
        self.lock = threading.Lock()
        m = protos.message
        self.Event, self.Message, self.Part, self.HarnessEnd = m("Event"), m("Message"), m("Part"), m("HarnessEnd")
        self.kind = lambda name: protos.enum_value("EventKind", name)

    def describe(self, _request, _context):
        Descriptor = self.p.message("HarnessDescriptor")
        resumability = self.p.enum_value("Resumability", "RESUMABILITY_" + self.resumability)
        return Descriptor(id="pycounter", version="1", capabilities={"resumability": resumability})

    def connect(self, frames, context):
        first = next(frames, None)
        if first is None or first.WhichOneof("frame") != "start":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first ControllerFrame must be Start")
        inputs = list(first.start.inputs)
        if len(inputs) == 1 and "".join(part.text.text for part in inputs[0].parts if part.WhichOneof("part") == "text") == "random":
            # The memory.fork-randomness probe, uncounted: uuid4 and secrets read the kernel on every call
            # (the host reseeds the guest kernel's RNG in every restored or forked copy); the random
            # module's generator is process state, reseeded by the guest's runtime hook on every restore.
            text = f"random:uuid4={uuid.uuid4()} secrets={secrets.token_hex(8)} random={random.random()!r}"
        else:
            with self.lock:
                self.count += 1
                text = str(self.count)
        execution_id = first.execution_id
        message = self.Message(role="assistant", parts=[self.Part(text={"text": text})])
        yield self.Event(execution_id=execution_id, kind=self.kind("EVENT_OUTPUT"), message=message)
        yield self.Event(execution_id=execution_id, kind=self.kind("EVENT_END"), end=self.HarnessEnd(state="COMPLETED"))

    def handler(self):
        _, req, resp = self.p.method("Harness", "Describe")
        describe = grpc.unary_unary_rpc_method_handler(
            self.describe, request_deserializer=req.FromString, response_serializer=resp.SerializeToString
        )
        _, req, resp = self.p.method("Harness", "Connect")
        connect = grpc.stream_stream_rpc_method_handler(
            self.connect, request_deserializer=req.FromString, response_serializer=resp.SerializeToString
        )
        return grpc.method_handlers_generic_handler("agentsessions.v1.Harness", {"Describe": describe, "Connect": connect})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--resumability", default="REQUIRES_MEMORY_SNAPSHOT", choices=["STATELESS_REPLAY", "REQUIRES_MEMORY_SNAPSHOT"])
    args = ap.parse_args()
    port = int(os.environ.get("HARNESS_PORT", "50051"))

    node = CounterNode(Protos(DESCRIPTORS), args.resumability)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((node.handler(),))
    if server.add_insecure_port(f"0.0.0.0:{port}") == 0:
        print(f"cannot listen on port {port}", file=sys.stderr)
        sys.exit(1)
    server.start()
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    print(f"ready {port}", flush=True)
    stopping.wait()
    server.stop(grace=1).wait()


if __name__ == "__main__":
    main()
