// The version RPCs on the HTTP listener (Connect protocol), served by the same handler objects as the
// gRPC listeners: Upgrade is a session operation and is served; the version list is read-only there
// and RetireVersion answers UNIMPLEMENTED, like the registry's register and retire.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { HarnessVersions, SessionVersions } from "../../src/gen/harnesshost/v1/versions_pb.js";
import { drain, startFixture, userInput, type Fixture } from "../server/helpers.js";
import { fixturePath } from "../tiers/helpers.js";

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const ver = (version: string) =>
  ({ name: "ver", version, runtime: "local", target: fixturePath(`versioned-v${version}.ts`) }) as const;

describe("versions over HTTP", () => {
  it("upgrade and listVersions are served; retireVersion is UNIMPLEMENTED there", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0", config: { harnesses: [ver("1"), ver("2")] } }));
    const transport = createConnectTransport({ baseUrl: f.server.httpUrl!, httpVersion: "1.1" });
    const upgrades = createClient(SessionVersions, transport);
    const versions = createClient(HarnessVersions, transport);
    const made = await f.sessions.createSession({ session: { harness: "ver" } });
    const uid = made.metadata!.uid;
    expect((await upgrades.upgrade({ session: uid, toVersion: "1" })).toVersion).toBe("1");
    expect((await drain(f.sessions.exec({ session: uid, inputs: [userInput("a")] }))).error).toBeUndefined();
    const listed = await versions.listVersions({ name: "ver" });
    expect(listed.versions.find((v) => v.version === "1")?.pinnedSessions).toEqual([uid]);
    const up = await upgrades.upgrade({ session: uid, toVersion: "2" });
    expect(up).toMatchObject({ fromVersion: "1", toVersion: "2", replayedTurns: 1n });
    const refused = await versions.retireVersion({ name: "ver", version: "1" }).catch((e: unknown) => e);
    expect(ConnectError.from(refused).code).toBe(Code.Unimplemented);
  });
});
