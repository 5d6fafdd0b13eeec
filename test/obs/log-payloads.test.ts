// --log-payloads (docs/operations.md, "Logs"): off by default, no model request or response body ever
// reaches the log; on, each live model call logs its request and response — still redacted of secrets.
import { afterAll, describe, expect, it } from "vitest";
import { createLog } from "../../src/obs/log.js";
import { registerSecret } from "../../src/errors/redact.js";
import { closeAll, openTestHost, turn } from "../tiers/helpers.js";

afterAll(async () => {
  await closeAll();
});

async function linesOfOneTurn(logPayloads: boolean | undefined, input: string): Promise<string[]> {
  const lines: string[] = [];
  const logger = createLog({ level: "debug", sink: { write: (l) => lines.push(l) } });
  const host = await openTestHost({}, { logger, ...(logPayloads === undefined ? {} : { logPayloads }) });
  const session = (await host.createSession({ harness: "echo" })).uid;
  await turn(host, session, input);
  return lines;
}

describe("--log-payloads", () => {
  it("modelPayloadsAreNeverLoggedByDefault", async () => {
    const input = "payload-marker-default-7f3a";
    for (const setting of [undefined, false]) {
      const lines = await linesOfOneTurn(setting, input);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.join("")).not.toContain(input);
      expect(lines.join("")).not.toContain("model request");
    }
  });

  it("logPayloadsLogsEachModelRequestAndResponseWithSecretsRedacted", async () => {
    const secret = "sk-test-payload-secret-0123456789abcdef";
    registerSecret(secret);
    const input = `payload-marker-on-91c2 ${secret}`;
    const lines = (await linesOfOneTurn(true, input)).map((l) => JSON.parse(l) as Record<string, unknown>);
    const request = lines.find((l) => l["msg"] === "model request");
    const response = lines.find((l) => l["msg"] === "model response");
    expect(request).toMatchObject({ level: 30, payload: true });
    expect(JSON.stringify(request?.["messages"])).toContain("payload-marker-on-91c2");
    expect(response).toMatchObject({ level: 30, payload: true });
    expect(JSON.stringify(response?.["message"])).toContain("payload-marker-on-91c2");
    expect(JSON.stringify(lines)).not.toContain(secret);
  });
});
