// gRPC health (grpc.health.v1.Health: Check, Watch, List) registered by hand on a grpc-js server.
// Invariants: the wire is exactly grpc-health-check's (same method paths, stream shapes, messages,
// statuses and errors: Check of an unknown service is NOT_FOUND, Watch of one streams SERVICE_UNKNOWN
// then every later status, List refuses more than 100 services RESOURCE_EXHAUSTED), but no .proto is
// parsed at start: the three messages are encoded with @bufbuild's binary wire, which serve loads
// anyway (docs/performance.md "serve_ready_ms": the health.proto parse and protobufjs were ~10 % of serve's start).
import { type Server, type ServerWritableStream, type ServiceDefinition, status as grpcStatus } from "@grpc/grpc-js";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

/** The ServingStatus values a host sets (the enum's numbers on the wire). */
export type ServingStatus = "SERVING" | "NOT_SERVING";
const STATUS_NUMBER = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;
type WireStatus = keyof typeof STATUS_NUMBER;

/** Most services List answers with (grpc-health-check's RESOURCE_EXHAUSTION_LIMIT). */
const LIST_LIMIT = 100;

/** HealthCheckRequest { string service = 1 }: unknown fields are skipped. */
function decodeRequest(bytes: Buffer): { service: string } {
  const reader = new BinaryReader(bytes);
  let service = "";
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) service = reader.string();
    else reader.skip(wireType, field);
  }
  return { service };
}

/** HealthCheckResponse { ServingStatus status = 1 } (proto3: 0 is not written). */
function encodeResponse(status: WireStatus): Buffer {
  const w = new BinaryWriter();
  const n = STATUS_NUMBER[status];
  if (n !== 0) w.tag(1, WireType.Varint).int32(n);
  return Buffer.from(w.finish());
}

/** HealthListResponse { map<string, HealthCheckResponse> statuses = 1 }. */
function encodeList(statuses: ReadonlyMap<string, ServingStatus>): Buffer {
  const w = new BinaryWriter();
  for (const [service, status] of statuses) {
    w.tag(1, WireType.LengthDelimited).fork();
    w.tag(1, WireType.LengthDelimited).string(service);
    w.tag(2, WireType.LengthDelimited).bytes(encodeResponse(status));
    w.join();
  }
  return Buffer.from(w.finish());
}

const ident = (b: Buffer): Buffer => b;
const method = (name: string, responseStream: boolean) => ({
  path: `/grpc.health.v1.Health/${name}`,
  requestStream: false,
  responseStream,
  requestSerialize: ident,
  requestDeserialize: ident,
  responseSerialize: ident,
  responseDeserialize: ident,
});
const HEALTH_SERVICE: ServiceDefinition = {
  Check: method("Check", false),
  Watch: method("Watch", true),
  List: method("List", false),
};

/** The health statuses a server reports, by service name ("" is the server as a whole). */
export class Health {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Map<string, Set<(status: ServingStatus) => void>>();

  constructor(initial: Readonly<Record<string, ServingStatus>>) {
    for (const [service, status] of Object.entries(initial)) this.statuses.set(service, status);
  }

  setStatus(service: string, status: ServingStatus): void {
    this.statuses.set(service, status);
    for (const watcher of this.watchers.get(service) ?? []) watcher(status);
  }

  addToServer(server: Server): void {
    server.addService(HEALTH_SERVICE, {
      Check: (call: { request: Buffer }, callback: (err: object | null, res?: Buffer) => void) => {
        const { service } = decodeRequest(call.request);
        const status = this.statuses.get(service);
        if (status) callback(null, encodeResponse(status));
        else callback({ code: grpcStatus.NOT_FOUND, details: `Health status unknown for service ${service}` });
      },
      Watch: (call: ServerWritableStream<Buffer, Buffer>) => {
        const { service } = decodeRequest(call.request);
        const watcher = (status: ServingStatus): void => void call.write(encodeResponse(status));
        const set = this.watchers.get(service) ?? new Set();
        this.watchers.set(service, set);
        set.add(watcher);
        call.on("cancelled", () => set.delete(watcher));
        call.write(encodeResponse(this.statuses.get(service) ?? "SERVICE_UNKNOWN"));
      },
      List: (_call: unknown, callback: (err: object | null, res?: Buffer) => void) => {
        if (this.statuses.size > LIST_LIMIT)
          callback({ code: grpcStatus.RESOURCE_EXHAUSTED, details: "Too many services to list." });
        else callback(null, encodeList(this.statuses));
      },
    });
  }
}
