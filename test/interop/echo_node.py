#!/usr/bin/python3
"""A harness node written against the .proto files with Python grpcio, not grpc-js: it serves
agentsessions.v1.Harness (Describe, Connect) on a unix socket and nothing else, so it is a
reference-style, stateless-only node (no harnesshost.v1.Actors).

Each turn: read Start, ask the host's model about the last input's text, then answer
"py:" + the model's text and end COMPLETED.

Usage: echo_node.py DESCRIPTORS.binpb SOCKET_PATH [--resumability STATELESS_REPLAY|REQUIRES_MEMORY_SNAPSHOT]
Prints "ready unix://SOCKET_PATH" once listening; stops on SIGTERM or when stdin closes.
"""
import argparse
import secrets
import signal
import sys
import threading
from concurrent import futures

import grpc

from hhsdk.proto import Protos


def text_of(message):
    return "".join(p.text.text for p in message.parts if p.WhichOneof("part") == "text")


class EchoNode:
    def __init__(self, protos, resumability):
        self.p = protos
        self.resumability = resumability
        m = protos.message
        self.Event, self.Message, self.Part = m("Event"), m("Message"), m("Part")
        self.ModelCall, self.HarnessEnd = m("ModelCall"), m("HarnessEnd")
        self.kind = lambda name: protos.enum_value("EventKind", name)

    def describe(self, _request, _context):
        Descriptor = self.p.message("HarnessDescriptor")
        resumability = self.p.enum_value("Resumability", "RESUMABILITY_" + self.resumability)
        return Descriptor(id="pyecho", version="1", models=["echo"], capabilities={"resumability": resumability})

    def text_message(self, role, text):
        return self.Message(role=role, parts=[self.Part(text={"text": text})])

    def connect(self, frames, context):
        first = next(frames, None)
        if first is None or first.WhichOneof("frame") != "start":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first ControllerFrame must be Start")
        execution_id = first.execution_id
        inputs = first.start.inputs
        if len(inputs) == 0:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "Start carries no input")
        call_id = secrets.token_hex(8)
        yield self.Event(
            execution_id=execution_id,
            kind=self.kind("EVENT_MODEL_CALL"),
            model=self.ModelCall(model="echo", id=call_id, messages=[self.text_message("user", text_of(inputs[-1]))]),
        )
        answer = None
        for frame in frames:
            which = frame.WhichOneof("frame")
            if which == "cancel":
                yield self.Event(execution_id=execution_id, kind=self.kind("EVENT_END"), end=self.HarnessEnd(state="CANCELED"))
                return
            if which == "model" and frame.model.model_call_id == call_id:
                answer = text_of(frame.model.message)
                break
        if answer is None:
            context.abort(grpc.StatusCode.ABORTED, "the host closed the stream before answering the model call")
        yield self.Event(execution_id=execution_id, kind=self.kind("EVENT_OUTPUT"), message=self.text_message("assistant", "py:" + answer))
        yield self.Event(execution_id=execution_id, kind=self.kind("EVENT_END"), end=self.HarnessEnd(state="COMPLETED"))

    def handler(self):
        path, req, resp = self.p.method("Harness", "Describe")
        describe = grpc.unary_unary_rpc_method_handler(self.describe, request_deserializer=req.FromString, response_serializer=resp.SerializeToString)
        path, req, resp = self.p.method("Harness", "Connect")
        connect = grpc.stream_stream_rpc_method_handler(self.connect, request_deserializer=req.FromString, response_serializer=resp.SerializeToString)
        return grpc.method_handlers_generic_handler("agentsessions.v1.Harness", {"Describe": describe, "Connect": connect})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("descriptors")
    ap.add_argument("socket")
    ap.add_argument("--resumability", default="STATELESS_REPLAY", choices=["STATELESS_REPLAY", "REQUIRES_MEMORY_SNAPSHOT"])
    args = ap.parse_args()

    node = EchoNode(Protos(args.descriptors), args.resumability)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((node.handler(),))
    address = "unix://" + args.socket
    if server.add_insecure_port(address) == 0:
        print(f"cannot listen on {address}", file=sys.stderr)
        sys.exit(1)
    server.start()

    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())

    def watch_stdin():
        sys.stdin.read()
        stopping.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    print(f"ready {address}", flush=True)
    stopping.wait()
    server.stop(grace=1).wait()


if __name__ == "__main__":
    main()
