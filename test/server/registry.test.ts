// HarnessRegistry over real gRPC: register/get/list/retire and their error codes, immutability,
// serving a registered harness without a restart (against a real harness node on loopback),
// registrations surviving a restart, and the two listeners never serving each other's service.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import echoAgent from "../../harnesses/echoagent/index.js";
import { protoDigest } from "../../src/canon/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import {
  HarnessRegistry,
  HarnessSource,
  HarnessSpecSchema,
  HarnessState,
  RegisterOutcome,
  type HarnessSpec,
} from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { textOf } from "../../src/controller/events.js";
import { serveHarness, type HarnessNode } from "../../src/node/index.js";
import { createClient } from "../../src/wire/index.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { checkSpec } from "../../src/host/harness-spec.js";
import { codeOf, drain, startFixture, userInput, type Fixture } from "./helpers.js";

let fx: Fixture | undefined;
let node: HarnessNode | undefined;
afterEach(async () => {
  await fx?.close();
  await node?.close();
  fx = undefined;
  node = undefined;
});

function remoteSpec(
  address: string,
  extra: Partial<{ descriptorId: string; resumability: Resumability }> = {},
): HarnessSpec {
  return create(HarnessSpecSchema, {
    placement: { case: "remote", value: { address } },
    capabilities: { resumability: extra.resumability ?? Resumability.STATELESS_REPLAY },
    descriptorId: extra.descriptorId ?? "echo",
  });
}

async function echoNode(): Promise<HarnessNode> {
  node = await serveHarness(echoAgent, { listen: "127.0.0.1:0", actors: false });
  return node;
}

async function turnOutput(f: Fixture, session: string, text: string): Promise<string[]> {
  const { items, error } = await drain(f.sessions.exec({ session, inputs: [userInput(text)] }));
  expect(error).toBeUndefined();
  return items.flatMap((u) =>
    u.update.case === "record" &&
    u.update.value.event?.kind === EventKind.EVENT_OUTPUT &&
    u.update.value.event.body.case === "message"
      ? [textOf(u.update.value.event.body.value)]
      : [],
  );
}

describe("RegisterHarness", () => {
  it("creates, confirms, and serves the harness at once (no restart)", async () => {
    const f = (fx = await startFixture());
    const n = await echoNode();
    const spec = remoteSpec(n.address);
    const created = await f.registry.registerHarness({ name: "mine", spec });
    expect(created.outcome).toBe(RegisterOutcome.CREATED);
    expect(created.harness?.specDigest).toBe(protoDigest(HarnessSpecSchema, spec));
    expect(created.harness?.source).toBe(HarnessSource.REGISTERED);
    expect(created.harness?.metadata?.uid).toMatch(/^harness-[0-9a-f]{24}$/);
    const again = await f.registry.registerHarness({ name: "mine", spec });
    expect(again.outcome).toBe(RegisterOutcome.UNCHANGED);
    expect(again.harness?.metadata?.uid).toBe(created.harness?.metadata?.uid);

    const session = await f.sessions.createSession({ session: { harness: "mine" } });
    expect(session.harness).toBe("mine");
    expect(await turnOutput(f, session.metadata?.uid ?? "", "hi")).toEqual(["echo:hi"]);
  });

  it("refuses bad names, static names, bad specs and a changed spec, storing nothing", async () => {
    const f = (fx = await startFixture());
    const good = remoteSpec("127.0.0.1:1");
    for (const name of ["", "Bad", "-x", "x-", "a_b", "a".repeat(64)]) {
      expect(await codeOf(f.registry.registerHarness({ name, spec: good }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    }
    expect(await codeOf(f.registry.registerHarness({ name: "echo", spec: good }))).toBe(GrpcStatus.ALREADY_EXISTS);
    const invalid: HarnessSpec[] = [
      create(HarnessSpecSchema, { capabilities: { resumability: Resumability.STATELESS_REPLAY } }),
      create(HarnessSpecSchema, { placement: { case: "remote", value: { address: "127.0.0.1:1" } } }),
      create(HarnessSpecSchema, {
        placement: { case: "remote", value: { address: "127.0.0.1:1" } },
        capabilities: { resumability: 7 as Resumability },
      }),
      remoteSpec(""),
      remoteSpec("127.0.0.1:1", { descriptorId: "d".repeat(5000) }),
      create(HarnessSpecSchema, {
        placement: { case: "substrate", value: { atespace: "a" } },
        capabilities: { resumability: Resumability.STATELESS_REPLAY },
      }),
    ];
    for (const spec of invalid)
      expect(await codeOf(f.registry.registerHarness({ name: "mine", spec }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await codeOf(f.registry.registerHarness({ name: "mine" }))).toBe(GrpcStatus.INVALID_ARGUMENT);

    const scheme = await f.registry
      .registerHarness({ name: "mine", spec: remoteSpec("http://127.0.0.1:1") })
      .catch((e: unknown) => e);
    expect(scheme).toMatchObject({
      grpcCode: GrpcStatus.FAILED_PRECONDITION,
      details: expect.stringContaining("unsupported scheme"),
    });
    const substrate = create(HarnessSpecSchema, {
      placement: { case: "substrate", value: { atespace: "a", template: "t" } },
      capabilities: { resumability: Resumability.STATELESS_REPLAY },
    });
    expect(await codeOf(f.registry.registerHarness({ name: "mine", spec: substrate }))).toBe(
      GrpcStatus.FAILED_PRECONDITION,
    );
    expect(await f.host.journal.listRegistrations()).toEqual([]);

    await f.registry.registerHarness({ name: "mine", spec: good });
    const changed = await f.registry
      .registerHarness({ name: "mine", spec: remoteSpec("127.0.0.1:2") })
      .catch((e: unknown) => e);
    expect(changed).toMatchObject({
      grpcCode: GrpcStatus.ALREADY_EXISTS,
      details: expect.stringContaining("immutable"),
    });
    // …and says how to release the name (a README example run twice with a new port hit this).
    expect((changed as { details: string }).details).toContain(
      "`harnesshost harness retire --name mine`, then `harnesshost harness free --name mine`",
    );
  });
});

describe("spec validation", () => {
  it("refuses unknown fields a newer client might send, and accepts the same spec without them", () => {
    const known = toBinary(HarnessSpecSchema, remoteSpec("127.0.0.1:1"));
    const withUnknown = fromBinary(HarnessSpecSchema, new Uint8Array([...known, 0x98, 0x06, 0x01])); // field 99, varint 1
    let caught: unknown;
    try {
      checkSpec(withUnknown);
    } catch (err) {
      caught = err;
    }
    expect(isHostError(caught, ErrorCode.InvalidArgument)).toBe(true);
    expect(checkSpec(fromBinary(HarnessSpecSchema, known)).digest).toBe(
      protoDigest(HarnessSpecSchema, remoteSpec("127.0.0.1:1")),
    );
  });
});

describe("GetHarness / ListHarnesses", () => {
  it("gets static and registered entries, observes through Describe, and reports observe_error", async () => {
    const f = (fx = await startFixture());
    const n = await echoNode();
    await f.registry.registerHarness({ name: "live", spec: remoteSpec(n.address) });
    await f.registry.registerHarness({ name: "dead", spec: remoteSpec("127.0.0.1:1") });
    const echo = await f.registry.getHarness({ name: "echo" });
    expect(echo.source).toBe(HarnessSource.STATIC);
    expect(echo.state).toBe(HarnessState.ACTIVE);
    const live = await f.registry.getHarness({ name: "live", observe: true });
    expect(live.observed?.id).toBe("echo");
    expect(live.observeError).toBe("");
    expect(live.spec?.placement.case).toBe("remote");
    const dead = await f.registry.getHarness({ name: "dead", observe: true });
    expect(dead.observed).toBeUndefined();
    expect(dead.observeError).not.toBe("");
    expect(await codeOf(f.registry.getHarness({ name: "" }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await codeOf(f.registry.getHarness({ name: "ghost" }))).toBe(GrpcStatus.NOT_FOUND);
  });

  it("lists static and registered harnesses in name order with keyset paging", async () => {
    const f = (fx = await startFixture());
    await f.registry.registerHarness({ name: "zeta", spec: remoteSpec("127.0.0.1:1") });
    await f.registry.registerHarness({ name: "alpha", spec: remoteSpec("127.0.0.1:2") });
    const statics = f.host.registry
      .all()
      .filter((e) => e.source === "static")
      .map((e) => e.name);
    const expected = [...statics, "alpha", "zeta"].sort();
    const all = await f.registry.listHarnesses({});
    expect(all.harnesses.map((h) => h.metadata?.name)).toEqual(expected);
    expect(all.nextPageToken).toBe("");
    const names: string[] = [];
    let pageToken = "";
    do {
      const page = await f.registry.listHarnesses({ pageSize: 1, pageToken });
      expect(page.harnesses).toHaveLength(1);
      names.push(...page.harnesses.map((h) => h.metadata?.name ?? ""));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(names).toEqual(expected);
    expect(await codeOf(f.registry.listHarnesses({ pageSize: -1 }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await codeOf(f.registry.listHarnesses({ pageToken: "!!" }))).toBe(GrpcStatus.INVALID_ARGUMENT);
  });
});

describe("RetireHarness", () => {
  it("retires idempotently, refuses new sessions, keeps existing ones, and re-registering reactivates", async () => {
    const f = (fx = await startFixture());
    const n = await echoNode();
    const spec = remoteSpec(n.address);
    await f.registry.registerHarness({ name: "mine", spec });
    const existing = (await f.sessions.createSession({ session: { harness: "mine" } })).metadata?.uid ?? "";

    const retired = await f.registry.retireHarness({ name: "mine", reason: "first" });
    expect(retired.state).toBe(HarnessState.RETIRED);
    expect(retired.retireReason).toBe("first");
    const again = await f.registry.retireHarness({ name: "mine", reason: "second" });
    expect(again.retireReason).toBe("first");
    expect(again.retireTime).toEqual(retired.retireTime);

    expect(await codeOf(f.sessions.createSession({ session: { harness: "mine" } }))).toBe(
      GrpcStatus.FAILED_PRECONDITION,
    );
    expect((await drain(f.sessions.exec({ harness: "mine", inputs: [userInput("x")] }))).error?.grpcCode).toBe(
      GrpcStatus.FAILED_PRECONDITION,
    );
    expect(await turnOutput(f, existing, "still")).toEqual(["echo:still"]);

    expect((await f.registry.listHarnesses({})).harnesses.map((h) => h.metadata?.name)).not.toContain("mine");
    expect((await f.registry.listHarnesses({ includeRetired: true })).harnesses.map((h) => h.metadata?.name)).toContain(
      "mine",
    );

    const back = await f.registry.registerHarness({ name: "mine", spec });
    expect(back.outcome).toBe(RegisterOutcome.REACTIVATED);
    expect(back.harness?.state).toBe(HarnessState.ACTIVE);
    expect((await f.sessions.createSession({ session: { harness: "mine" } })).harness).toBe("mine");
  });

  it("answers the documented error codes", async () => {
    const f = (fx = await startFixture());
    await f.registry.registerHarness({ name: "mine", spec: remoteSpec("127.0.0.1:1") });
    expect(await codeOf(f.registry.retireHarness({ name: "echo" }))).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(await codeOf(f.registry.retireHarness({ name: "ghost" }))).toBe(GrpcStatus.NOT_FOUND);
    expect(await codeOf(f.registry.retireHarness({ name: "" }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await codeOf(f.registry.retireHarness({ name: "mine", reason: "r".repeat(1025) }))).toBe(
      GrpcStatus.INVALID_ARGUMENT,
    );
    expect((await f.registry.getHarness({ name: "mine" })).state).toBe(HarnessState.ACTIVE);
  });
});

describe("persistence and listener separation", () => {
  it("a restart keeps registrations, and they are served again", async () => {
    const f = (fx = await startFixture());
    const n = await echoNode();
    const created = await f.registry.registerHarness({ name: "mine", spec: remoteSpec(n.address) });
    const uid = (await f.sessions.createSession({ session: { harness: "mine" } })).metadata?.uid ?? "";
    await f.restart();
    const got = await f.registry.getHarness({ name: "mine" });
    expect(got.metadata?.uid).toBe(created.harness?.metadata?.uid);
    expect(got.specDigest).toBe(created.harness?.specDigest);
    expect(got.unservableReason).toBe("");
    expect(await turnOutput(f, uid, "after")).toEqual(["echo:after"]);
  });

  it("registry RPCs on the Sessions port and Sessions RPCs on the registry port are UNIMPLEMENTED", async () => {
    const f = (fx = await startFixture());
    const wrongRegistry = createClient(HarnessRegistry, f.server.addr);
    const wrongSessions = createClient(Sessions, f.server.registryAddr);
    try {
      expect(await codeOf(wrongRegistry.listHarnesses({}))).toBe(GrpcStatus.UNIMPLEMENTED);
      expect(await codeOf(wrongSessions.listSessions({}))).toBe(GrpcStatus.UNIMPLEMENTED);
    } finally {
      wrongRegistry.close();
      wrongSessions.close();
    }
  });
});
