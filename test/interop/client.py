#!/usr/bin/python3
"""A client of the host written against the .proto files with Python grpcio, not grpc-js.

  client.py DESCRIPTORS register --registry ADDR --name NAME --address NODE_ADDR
            [--resumability STATELESS_REPLAY|REQUIRES_MEMORY_SNAPSHOT] [--descriptor-id ID]
      HarnessRegistry.RegisterHarness; prints {"outcome", "uid", "spec_digest"}.
  client.py DESCRIPTORS exec --sessions ADDR --harness NAME --input TEXT
      Sessions.Exec (new session, one user input), then Replay and GetSession; prints
      {"session", "outputs", "kinds", "seqs", "replay_kinds", "last_seq"}.

Every result is one JSON line on stdout. An RPC error prints {"error": {"code", "details"}} (plus
"session" when Exec already named it) and exits 2.
"""
import argparse
import json
import sys

import grpc

from hhsdk.proto import Protos, unary_stream, unary_unary

# Loopback only: never route through an HTTP proxy taken from the environment.
CHANNEL_OPTIONS = [("grpc.enable_http_proxy", 0)]


def kind_name(protos, number):
    return protos.enum_name("EventKind", number).removeprefix("EVENT_")


def text_of(message):
    return "".join(p.text.text for p in message.parts if p.WhichOneof("part") == "text")


def register(protos, args):
    with grpc.insecure_channel(args.registry, options=CHANNEL_OPTIONS) as channel:
        call, Request = unary_unary(channel, protos, "HarnessRegistry", "RegisterHarness")
        resumability = protos.enum_value("Resumability", "RESUMABILITY_" + args.resumability)
        spec = {"remote": {"address": args.address}, "capabilities": {"resumability": resumability}, "descriptor_id": args.descriptor_id}
        resp = call(Request(name=args.name, spec=spec), timeout=30)
        outcome = protos.enum_name("RegisterOutcome", resp.outcome)
        return {"outcome": outcome, "uid": resp.harness.metadata.uid, "spec_digest": resp.harness.spec_digest}


def exec_turn(protos, args, seen):
    """`seen` receives the session uid as soon as the first frame names it (for error reports)."""
    Message = protos.message("Message")
    with grpc.insecure_channel(args.sessions, options=CHANNEL_OPTIONS) as channel:
        exec_call, ExecRequest = unary_stream(channel, protos, "Sessions", "Exec")
        request = ExecRequest(harness=args.harness, inputs=[Message(role="user", parts=[{"text": {"text": args.input}}])])
        session, outputs, kinds, seqs = None, [], [], []
        for update in exec_call(request, timeout=60):
            which = update.WhichOneof("update")
            if which == "session":
                if session is not None or kinds:
                    raise ProtocolError("a Session frame arrived after the first frame")
                session = seen["session"] = update.session.metadata.uid
            elif which == "record":
                if session is None:
                    raise ProtocolError("the first ExecUpdate frame is not a Session")
                event = update.record.event
                kinds.append(kind_name(protos, event.kind))
                seqs.append(update.record.seq)
                if event.WhichOneof("body") == "message" and kinds[-1] == "OUTPUT":
                    outputs.append(text_of(event.message))
        if session is None:
            raise ProtocolError("Exec sent no Session frame")

        replay_call, ReplayRequest = unary_stream(channel, protos, "Sessions", "Replay")
        replay_kinds = [kind_name(protos, r.event.kind) for r in replay_call(ReplayRequest(session=session), timeout=30)]
        get_call, GetSessionRequest = unary_unary(channel, protos, "Sessions", "GetSession")
        last_seq = get_call(GetSessionRequest(uid=session), timeout=30).last_seq
        return {"session": session, "outputs": outputs, "kinds": kinds, "seqs": seqs, "replay_kinds": replay_kinds, "last_seq": last_seq}


class ProtocolError(Exception):
    pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("descriptors")
    sub = ap.add_subparsers(dest="command", required=True)
    reg = sub.add_parser("register")
    reg.add_argument("--registry", required=True)
    reg.add_argument("--name", required=True)
    reg.add_argument("--address", required=True)
    reg.add_argument("--resumability", default="STATELESS_REPLAY", choices=["STATELESS_REPLAY", "REQUIRES_MEMORY_SNAPSHOT"])
    reg.add_argument("--descriptor-id", default="pyecho")
    ex = sub.add_parser("exec")
    ex.add_argument("--sessions", required=True)
    ex.add_argument("--harness", required=True)
    ex.add_argument("--input", required=True)
    args = ap.parse_args()

    protos = Protos(args.descriptors)
    seen = {}
    try:
        result = register(protos, args) if args.command == "register" else exec_turn(protos, args, seen)
    except grpc.RpcError as err:
        print(json.dumps({"error": {"code": err.code().name, "details": err.details()}, **seen}), flush=True)
        sys.exit(2)
    except ProtocolError as err:
        print(json.dumps({"error": {"code": "PROTOCOL", "details": str(err)}, **seen}), flush=True)
        sys.exit(3)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
