// The call policy and the extras on the Sessions port: gRPC health, server reflection (Sessions and
// Health only), bearer-token auth on both listeners, x-request-id, the data policy of the logs, and the
// listener-address rules.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { Metadata, status as GrpcStatus } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { afterEach, describe, expect, it } from "vitest";
import { checkListenAddresses } from "../../src/server/listen-policy.js";
import { startServer } from "../../src/server/server.js";
import { codeOf, drain, startFixture, userInput, type Fixture } from "./helpers.js";

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

type Unary = (req: object, cb: (err: grpc.ServiceError | null, res?: Record<string, unknown>) => void) => void;

function healthClient(addr: string): grpc.Client & { check: Unary } {
  const pkg = grpc.loadPackageDefinition(loadSync(healthProtoPath, { keepCase: true, enums: String })) as unknown as {
    grpc: {
      health: { v1: { Health: new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client & { check: Unary } } };
    };
  };
  return new pkg.grpc.health.v1.Health(addr, grpc.credentials.createInsecure());
}

function check(client: { check: Unary }, service: string): Promise<unknown> {
  return new Promise((resolve, reject) =>
    client.check({ service }, (err, res) => (err ? reject(err) : resolve(res?.["status"]))),
  );
}

/** The service names server reflection (v1) lists on `addr`. */
async function reflectedServices(addr: string, metadata = new Metadata()): Promise<string[]> {
  const require = createRequire(import.meta.url);
  const root = join(dirname(require.resolve("@grpc/reflection/package.json")), "build", "proto");
  const pkg = grpc.loadPackageDefinition(
    loadSync("grpc/reflection/v1/reflection.proto", { includeDirs: [root], keepCase: true }),
  ) as unknown as {
    grpc: {
      reflection: {
        v1: {
          ServerReflection: new (
            addr: string,
            creds: grpc.ChannelCredentials,
          ) => grpc.Client & {
            ServerReflectionInfo(md: Metadata): grpc.ClientDuplexStream<object, Record<string, unknown>>;
          };
        };
      };
    };
  };
  const client = new pkg.grpc.reflection.v1.ServerReflection(addr, grpc.credentials.createInsecure());
  try {
    return await new Promise((resolve, reject) => {
      const call = client.ServerReflectionInfo(metadata);
      call.on("data", (res: { list_services_response?: { service: { name: string }[] } }) =>
        resolve(res.list_services_response?.service.map((s) => s.name) ?? []),
      );
      call.on("error", reject);
      call.write({ list_services: "*" });
      call.end();
    });
  } finally {
    client.close();
  }
}

describe("health and reflection", () => {
  it("reports SERVING for the server and for Sessions", async () => {
    const f = (fx = await startFixture());
    const client = healthClient(f.server.addr);
    try {
      expect(await check(client, "")).toBe("SERVING");
      expect(await check(client, "agentsessions.v1.Sessions")).toBe("SERVING");
    } finally {
      client.close();
    }
  });

  it("reflection lists Sessions and Health, never the registry", async () => {
    const f = (fx = await startFixture());
    const names = await reflectedServices(f.server.addr);
    expect(names).toContain("agentsessions.v1.Sessions");
    expect(names).toContain("grpc.health.v1.Health");
    expect(names).not.toContain("agentsessions.v1.HarnessRegistry");
  });
});

describe("bearer-token auth", () => {
  it("missing → UNAUTHENTICATED, wrong → PERMISSION_DENIED, right → OK on both listeners", async () => {
    const f = (fx = await startFixture({ tokens: ["right-token", "second-token"] }));
    expect(await codeOf(f.sessions.listSessions({}))).toBe(GrpcStatus.UNAUTHENTICATED);
    expect(await codeOf(f.registry.listHarnesses({}))).toBe(GrpcStatus.UNAUTHENTICATED);
    const wrong = { metadata: { authorization: "Bearer wrong-token" } };
    expect(await codeOf(f.sessions.listSessions({}, wrong))).toBe(GrpcStatus.PERMISSION_DENIED);
    expect(await codeOf(f.registry.listHarnesses({}, wrong))).toBe(GrpcStatus.PERMISSION_DENIED);
    expect((await drain(f.sessions.exec({ inputs: [userInput("x")] }, wrong))).error?.grpcCode).toBe(
      GrpcStatus.PERMISSION_DENIED,
    );
    const right = { metadata: { authorization: "Bearer right-token" } };
    expect((await f.sessions.listSessions({}, right)).sessions).toEqual([]);
    expect((await drain(f.sessions.exec({ inputs: [userInput("x")] }, right))).error).toBeUndefined();
    expect((await f.sessions.listSessions({}, right)).sessions).toHaveLength(1);
  });

  it("accepts every configured token", async () => {
    const f = (fx = await startFixture({ tokens: ["right-token", "second-token"] }));
    for (const token of ["right-token", "second-token"]) {
      const opts = { metadata: { authorization: `Bearer ${token}` } };
      expect((await f.sessions.listSessions({}, opts)).sessions).toEqual([]);
      expect((await f.registry.listHarnesses({}, opts)).harnesses.length).toBeGreaterThan(0);
    }
    const reflect = new Metadata();
    reflect.set("authorization", "Bearer right-token");
    expect(await reflectedServices(f.server.addr, reflect)).toContain("agentsessions.v1.Sessions");
    await expect(reflectedServices(f.server.addr)).rejects.toMatchObject({ code: GrpcStatus.UNAUTHENTICATED });
  });
});

describe("request ids and logs", () => {
  it("adopts a valid x-request-id, mints one otherwise, and echoes it", async () => {
    const f = (fx = await startFixture());
    const seen: string[] = [];
    const onHeader = (md: Metadata): void => void seen.push(String(md.get("x-request-id")[0]));
    await f.sessions.listSessions({}, { metadata: { "x-request-id": "client.id-42" }, onHeader });
    await f.sessions.listSessions({}, { metadata: { "x-request-id": "not valid!" }, onHeader });
    expect(seen[0]).toBe("client.id-42");
    expect(seen[1]).toMatch(/^[0-9a-f]{24}$/);
    const trailers: string[] = [];
    await codeOf(
      f.sessions.getSession(
        { uid: "" },
        {
          metadata: { "x-request-id": "err-1" },
          onTrailer: (md) => void trailers.push(String(md.get("x-request-id")[0])),
        },
      ),
    );
    expect(trailers).toEqual(["err-1"]);
    const lines = f.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(
      lines.some(
        (l) =>
          l["request_id"] === "client.id-42" &&
          l["method"] === "/agentsessions.v1.Sessions/ListSessions" &&
          l["code"] === "OK",
      ),
    ).toBe(true);
    expect(lines.some((l) => l["request_id"] === "err-1" && l["code"] === "INVALID_ARGUMENT")).toBe(true);
  });

  it("never logs inputs, outputs or tokens of a turn", async () => {
    const token = "tok-supersecret-9d1c";
    const input = "private-input-5be2";
    const f = (fx = await startFixture({ tokens: [token], clientMetadata: { authorization: `Bearer ${token}` } }));
    const { items, error } = await drain(f.sessions.exec({ inputs: [userInput(input)] }));
    expect(error).toBeUndefined();
    const uid = items[0]?.update.case === "session" ? (items[0].update.value.metadata?.uid ?? "") : "";
    await drain(f.sessions.replay({ session: uid }));
    await codeOf(f.sessions.listSessions({}, { metadata: { authorization: "Bearer tok-supersecret-wrong" } }));
    const text = f.logs.join("\n");
    expect(text).toContain("/agentsessions.v1.Sessions/Exec");
    expect(text).toContain(uid);
    expect(text).not.toContain(input);
    expect(text).not.toContain(`echo:${input}`);
    expect(text).not.toContain("supersecret");
    expect(text).not.toContain("fence");
  });
});

describe("listener policy", () => {
  it("refuses a non-loopback or named registry address unless TLS and a token are configured", () => {
    for (const bad of ["0.0.0.0:7234", "10.1.2.3:7234", "localhost:7234", "[::]:7234", "unix:///tmp/registry.sock"]) {
      expect(() => checkListenAddresses("127.0.0.1:7233", bad, false)).toThrow(/loopback/);
      expect(() =>
        checkListenAddresses("127.0.0.1:7233", bad.startsWith("unix") ? bad : bad.replace("7234", "7235"), true),
      ).not.toThrow();
    }
    for (const good of ["127.0.0.1:0", "127.9.9.9:7234", "[::1]:7234"])
      expect(() => checkListenAddresses("127.0.0.1:7233", good, false)).not.toThrow();
    expect(() => checkListenAddresses("0.0.0.0:7233", "127.0.0.1:7233", false)).toThrow(/share a port/);
  });

  it("registryListenerCanBeTurnedOff: `off` serves no registry and is no loopback violation", () => {
    expect(checkListenAddresses("127.0.0.1:7233", "off", false).registry).toBeUndefined();
    expect(checkListenAddresses("127.0.0.1:7233", "off", false, "off")).toEqual({
      sessions: expect.objectContaining({ kind: "tcp", port: 7233 }),
    });
  });

  it("sessionsListenerOffLoopbackRequiresTlsAndAToken", () => {
    for (const bad of ["0.0.0.0:7233", "10.1.2.3:7233", "localhost:7233", "[::]:7233"]) {
      expect(() => checkListenAddresses(bad, "127.0.0.1:7234", false)).toThrow(/--addr .* loopback .* TLS/);
      expect(() => checkListenAddresses(bad, "127.0.0.1:7234", true)).not.toThrow();
    }
    for (const good of ["127.0.0.1:0", "[::1]:7233", "unix:///tmp/sessions.sock"])
      expect(() => checkListenAddresses(good, "127.0.0.1:7234", false)).not.toThrow();
  });

  it("startServer refuses a bad registry address", async () => {
    const f = (fx = await startFixture());
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    await expect(startServer(f.host, { addr: "127.0.0.1:0", registryAddr: "0.0.0.0:0", logger })).rejects.toThrow(
      /loopback/,
    );
    await expect(
      startServer(f.host, { addr: "127.0.0.1:7399", registryAddr: "127.0.0.1:7399", logger }),
    ).rejects.toThrow(/share a port/);
  });
});
