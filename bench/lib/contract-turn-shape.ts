// The contract floor of an echo turn: the raw turn shape (bench/lib/raw-turn-shape.ts — same transports,
// same streams, same message count) carrying the wire contract's real messages, encoded and decoded with
// protobuf-es (ExecRequest/ExecUpdate on the Exec stream, ControllerFrame/Event on the Connect stream),
// with the turn's two durable commits made by the real SqliteJournal (hash-chained appendBatch of the
// events the controller journals). What it leaves out is harnesshost's own logic: placement, the
// controller and its sink guards, session reads, interceptors (auth, request ids, logging), validation,
// RemoteHarness and the node's actor table. Invariant: every message a real echo turn puts on the wire
// is encoded and decoded once by its schema, and the client must see the echoed OUTPUT and END.
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { Client, Server, credentials, type ServerWritableStream, type ServiceDefinition } from "@grpc/grpc-js";
import { ev, textMessage } from "../../src/controller/events.js";
import { newExecutionId } from "../../src/controller/ids.js";
import { modelInputHash } from "../../src/canon/index.js";
import { EventKind, EventSchema, ModelCallSchema, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ControllerFrameSchema, type ControllerFrame } from "../../src/gen/agentsessions/v1/harness_pb.js";
import {
  ExecRequestSchema,
  ExecUpdateSchema,
  SessionSchema,
  type ExecRequest,
  type ExecUpdate,
} from "../../src/gen/agentsessions/v1/session_pb.js";
import type { Journal } from "../../src/journal/types.js";
import { deltaUpdate, recordUpdate, sessionUpdate } from "../../src/server/record-proto.js";
import { bindInsecure, forkSocketNode } from "./grpc-raw.js";
import { created } from "../../test/journal/sessions.js";

function codec<D extends DescMessage>(
  schema: D,
): { serialize(m: MessageShape<D>): Buffer; deserialize(b: Buffer): MessageShape<D> } {
  return {
    serialize: (m) => Buffer.from(toBinary(schema, m)),
    deserialize: (b) => fromBinary(schema, b),
  };
}
const execRequest = codec(ExecRequestSchema);
const execUpdate = codec(ExecUpdateSchema);
const frameCodec = codec(ControllerFrameSchema);
const eventCodec = codec(EventSchema);

export const CONTRACT_TURN_SERVICE: ServiceDefinition = {
  exec: {
    path: "/bench.ContractTurn/Exec",
    requestStream: false,
    responseStream: true,
    requestSerialize: execRequest.serialize,
    requestDeserialize: execRequest.deserialize,
    responseSerialize: execUpdate.serialize,
    responseDeserialize: execUpdate.deserialize,
  },
  connect: {
    path: "/bench.ContractTurn/Connect",
    requestStream: true,
    responseStream: true,
    requestSerialize: frameCodec.serialize,
    requestDeserialize: frameCodec.deserialize,
    responseSerialize: eventCodec.serialize,
    responseDeserialize: eventCodec.deserialize,
  },
};
const CHILD = new URL("./contract-turn-node.ts", import.meta.url);

export interface ContractTurnShape {
  /**
   * One echo turn of `text`; resolves when the client saw the echoed OUTPUT, END and the stream's end,
   * to the ms the turn's two appendBatch calls took.
   */
  turn(text: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * `address`: where the in-process server listens; `nodeSocket`: a unix socket path for the child;
 * `journal`: where the turns commit (one session, `session`, whose fence is `fence`).
 */
export async function startContractTurnShape(
  address: string,
  nodeSocket: string,
  journal: Journal,
  session: string,
): Promise<ContractTurnShape> {
  const node = await forkSocketNode(CHILD, nodeSocket);
  const nodeClient = new Client(node.target, credentials.createInsecure());
  await created(journal, session);
  const fence = await journal.newFence(session);
  let head = (await journal.head(session)).seq;
  let journalMs = 0;
  const commit = async (events: Event[]) => {
    const t0 = performance.now();
    const committed = await journal.appendBatch(session, head, fence, events);
    journalMs += performance.now() - t0;
    head += committed.length;
    return committed;
  };
  const now = timestampNow();
  const sessionFrame = create(SessionSchema, {
    metadata: { uid: session, project: "default", createTime: now, updateTime: now },
    harness: "echo",
    model: "echo",
    lastSeq: BigInt(head),
  });
  const server = new Server();
  server.addService(CONTRACT_TURN_SERVICE, {
    exec: (call: ServerWritableStream<ExecRequest, ExecUpdate>) => {
      const input = call.request.inputs[0] ?? textMessage("user", "");
      const executionId = newExecutionId();
      call.write(sessionUpdate(sessionFrame));
      const up = nodeClient.makeBidiStreamRequest<ControllerFrame, Event>(
        "/bench.ContractTurn/Connect",
        frameCodec.serialize,
        eventCodec.deserialize,
      );
      const outputs: Event[] = [];
      const fail = (err: unknown): void => {
        up.cancel();
        call.destroy(err instanceof Error ? err : new Error(String(err)));
      };
      up.on("data", (event: Event) => {
        void (async () => {
          switch (event.kind) {
            case EventKind.EVENT_MODEL_CALL: {
              if (event.body.case !== "model") throw new Error("MODEL_CALL without a request");
              const request = event.body.value;
              const inputHash = modelInputHash(
                create(ModelCallSchema, { model: request.model, messages: request.messages }),
              );
              const first = [
                ev.executionStart(executionId, {
                  inputCount: 1,
                  harness: "echo",
                  harnessVersion: "1",
                  config: new Uint8Array(),
                  resumeFromSeq: 0,
                }),
                ev.input(executionId, input),
                ev.modelCall(
                  executionId,
                  create(ModelCallSchema, { model: request.model, params: {}, inputHash, id: request.id }),
                ),
              ];
              const committed = await commit(first);
              for (const rec of committed) call.write(recordUpdate(rec));
              const part = request.messages.at(-1)?.parts[0]?.part;
              const text = part?.case === "text" ? part.value.text : "";
              call.write(deltaUpdate(executionId, `echo:${text}`, true));
              up.write(
                create(ControllerFrameSchema, {
                  session,
                  executionId,
                  frame: {
                    case: "model",
                    value: { modelCallId: request.id, message: textMessage("assistant", `echo:${text}`) },
                  },
                }),
              );
              return;
            }
            case EventKind.EVENT_OUTPUT:
              outputs.push(event);
              return;
            case EventKind.EVENT_END: {
              const output = outputs[0];
              if (output?.body.case !== "message") throw new Error("END before OUTPUT");
              const committed = await commit([ev.output(executionId, output.body.value), ev.end(executionId)]);
              for (const rec of committed) call.write(recordUpdate(rec));
              up.end();
              call.end();
              return;
            }
            default:
              throw new Error(`unexpected event kind ${event.kind}`);
          }
        })().catch(fail);
      });
      up.on("error", fail);
      up.write(
        create(ControllerFrameSchema, { session, executionId, frame: { case: "start", value: { inputs: [input] } } }),
      );
    },
  });
  const target = (await bindInsecure(server, address)).target;
  const client = new Client(target, credentials.createInsecure());
  return {
    turn: (text) =>
      new Promise<number>((resolve, reject) => {
        journalMs = 0;
        const stream = client.makeServerStreamRequest<ExecRequest, ExecUpdate>(
          "/bench.ContractTurn/Exec",
          execRequest.serialize,
          execUpdate.deserialize,
          create(ExecRequestSchema, { session, inputs: [textMessage("user", text)] }),
        );
        let n = 0;
        let answer = "";
        let ended = false;
        stream.on("data", (u: ExecUpdate) => {
          n++;
          if (u.update.case !== "record") return;
          const event = u.update.value.event;
          if (event?.kind === EventKind.EVENT_OUTPUT && event.body.case === "message") {
            const part = event.body.value.parts[0]?.part;
            answer = part?.case === "text" ? part.value.text : "";
          }
          if (event?.kind === EventKind.EVENT_END) ended = true;
        });
        stream.on("error", reject);
        stream.on("end", () =>
          n === 7 && ended && answer === `echo:${text}`
            ? resolve(journalMs)
            : reject(
                new Error(`contract turn streamed ${n} messages (ended=${ended}, answer ${JSON.stringify(answer)})`),
              ),
        );
      }),
    close: async () => {
      client.close();
      nodeClient.close();
      node.child.kill();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
  };
}
