// One error vocabulary across the wire (docs/protocol.md §10, docs/client.md "Errors"). Invariant: an
// error thrown in the host with a given ErrorCode reaches the TypeScript client (gRPC) and an HTTP
// (Connect) client with that same code, while the status on the wire — what a Go client reads — stays
// the table's gRPC status, HTTP status and message. Table-driven over every ErrorCode.
import { Code, ConnectError, createClient as connectClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { connect, type HarnessHostClient, HarnessHostError } from "../../src/client/index.js";
import { ERROR_CODES, ERROR_TABLE, HostError } from "../../src/errors/index.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { ERROR_CODE_TRAILER } from "../../src/wire/status.js";
import { codeOf, type Fixture, startFixture } from "../server/helpers.js";

const MISSING = "sess-000000000000000000000000";
let f: Fixture;
let client: HarnessHostClient;
let http: ReturnType<typeof connectClient<typeof Sessions>>;

beforeAll(async () => {
  f = await startFixture({ httpAddr: "127.0.0.1:0" });
  client = connect({ address: f.server.addr });
  http = connectClient(Sessions, createConnectTransport({ baseUrl: f.server.httpUrl ?? "", httpVersion: "1.1" }));
}, 60_000);
afterAll(async () => {
  client?.close();
  await f?.close();
});

async function clientFailure(p: Promise<unknown>): Promise<HarnessHostError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof HarnessHostError) return err;
  throw new Error(`expected a HarnessHostError, got ${String(err)}`);
}

async function httpFailure(p: Promise<unknown>): Promise<ConnectError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof ConnectError) return err;
  throw new Error(`expected a ConnectError, got ${String(err)}`);
}

describe("one error vocabulary", () => {
  // storage_unreadable last: it turns the host's health NOT_SERVING (calls are still answered).
  const codes = [...ERROR_CODES].sort(
    (a, b) => Number(a === "storage_unreadable") - Number(b === "storage_unreadable"),
  );
  for (const code of codes) {
    const row = ERROR_TABLE[code];
    it(`anErrorThrownInTheHostReachesTheGrpcClientAndTheHttpClientWithTheSameCode: ${code} (${row.grpc})`, async () => {
      const message = `injected ${code} failure`;
      const spy = vi.spyOn(f.host.placer, "session").mockRejectedValue(new HostError(code, message));
      try {
        // The TypeScript client: the host's code, the table's status, the server's message.
        const viaClient = await clientFailure(client.sessions.get(MISSING));
        expect({ code: viaClient.code, status: viaClient.status }).toEqual({ code, status: row.grpc });
        expect(viaClient.message).toContain(message);
        // The wire a Go client reads is unchanged: the table's gRPC status number.
        expect(await codeOf(f.sessions.getSession({ uid: MISSING }))).toBe(GrpcStatus[row.grpc]);
        // An HTTP (Connect) client: the table's Connect code, and the same ErrorCode in the response header.
        const viaHttp = await httpFailure(http.getSession({ uid: MISSING }));
        expect(viaHttp.code).toBe(GrpcStatus[row.grpc] as number as Code);
        expect(viaHttp.metadata.get(ERROR_CODE_TRAILER)).toBe(code);
        expect(viaHttp.rawMessage).toContain(message);
        expect(spy).toHaveBeenCalled();
      } finally {
        spy.mockRestore();
      }
    }, 60_000);
  }

  it("aRealFailureCarriesItsCodeOnBothTransports: an unknown session is not_found everywhere", async () => {
    const viaClient = await clientFailure(client.sessions.get(MISSING));
    expect({ code: viaClient.code, status: viaClient.status }).toEqual({ code: "not_found", status: "NOT_FOUND" });
    const viaHttp = await httpFailure(http.getSession({ uid: MISSING }));
    expect(viaHttp.code).toBe(Code.NotFound);
    expect(viaHttp.metadata.get(ERROR_CODE_TRAILER)).toBe("not_found");
    expect(viaHttp.rawMessage).toBe(viaClient.message);
  });
});
