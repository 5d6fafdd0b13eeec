// Secrets never leave in an error: a model provider's 401 that echoes the API
// key reaches neither the journaled ERROR record nor the client's error; credential-shaped text is
// redacted wherever it appears.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toBinary } from "@bufbuild/protobuf";
import { EventKind, EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { redactSecrets, registerSecret } from "../../src/errors/index.js";
import { json, FakeEndpoint } from "../model/fake-endpoint.js";
import { drain, startFixture, userInput, type Fixture } from "../server/helpers.js";

const API_KEY = "sk-test-ECHOEDKEY-0123456789abcdef";
let endpoint: FakeEndpoint;
let f: Fixture;
const savedKey = process.env["MODEL_API_KEY"];

beforeAll(async () => {
  endpoint = await new FakeEndpoint().start();
  process.env["MODEL_API_KEY"] = API_KEY;
  f = await startFixture({ config: { model: endpoint.baseUrl } });
});
afterAll(async () => {
  if (savedKey === undefined) delete process.env["MODEL_API_KEY"];
  else process.env["MODEL_API_KEY"] = savedKey;
  await f?.close();
  await endpoint?.close();
});

describe("secret redaction", () => {
  it("aProviderErrorEchoingTheApiKeyIsRedactedFromTheJournalAndTheClient", async () => {
    endpoint.reply(
      json(401, { error: { message: `Incorrect API key provided: ${API_KEY}. Authorization: Bearer ${API_KEY}` } }),
    );
    const s = await f.sessions.createSession({ session: { harness: "echo" } });
    const uid = s.metadata?.uid ?? "";
    const { error } = await drain(f.sessions.exec({ session: uid, inputs: [userInput("hi")] }));
    expect(error).toBeDefined();
    expect(error?.message).toContain("401");
    expect(error?.message).not.toContain(API_KEY);
    expect(error?.message).not.toContain("ECHOEDKEY");
    const records = await f.host.journal.readRange(uid);
    const errors = records.filter((r) => r.event.kind === EventKind.EVENT_ERROR);
    expect(errors.length).toBeGreaterThan(0);
    for (const r of records)
      expect(Buffer.from(toBinary(EventSchema, r.event)).toString("latin1")).not.toContain("ECHOEDKEY");
    expect((await f.host.journal.verify(uid)).ok).toBe(true);
  });

  it("credential-shaped text is redacted", () => {
    registerSecret("registered-secret-value");
    const text = redactSecrets(
      "key registered-secret-value; Authorization: Bearer abc.def-ghi; api_key=xyz123; postgres://u:pw@h/db; sk-abcdef123456",
    );
    for (const secret of ["registered-secret-value", "abc.def-ghi", "xyz123", ":pw@", "abcdef123456"])
      expect(text).not.toContain(secret);
    expect(redactSecrets("session s-1 not found")).toBe("session s-1 not found");
  });
});
