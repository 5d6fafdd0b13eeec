// No secret ever reaches the logs (issue 19, logs): a real `serve` at --log-level trace with a bearer
// token, driven by clients sending the token (and one sending a wrong one, and an input quoting the
// token), never writes the token; a registered secret put into any field of a line is redacted; and
// --log-format picks JSON or one human line per record.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { registerSecret } from "../../src/errors/redact.js";
import { createLog } from "../../src/obs/log.js";
import { prettyLine } from "../../src/obs/pretty.js";
import { ServeProcess } from "../reliability/serve-process.js";

const TOKEN = "obs-secret-token-5f2c9a7e1d3b";
const dir = mkdtempSync(join(tmpdir(), "hh-obs-secrets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => out.push(t) });
  return { code, out: out.join("\n") };
}

describe("logs carry no secrets", () => {
  it("aTokenNeverAppearsInServeLogs", async () => {
    const tokenFile = join(dir, "tokens");
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const wrongFile = join(dir, "wrong");
    writeFileSync(wrongFile, `${TOKEN}-but-wrong\n`);
    let stderr = "";
    const serve = await ServeProcess.start({
      args: [
        "--data",
        join(dir, "data"),
        "--addr",
        "127.0.0.1:0",
        "--registry-addr",
        "127.0.0.1:0",
        "--token-file",
        tokenFile,
        "--log-level",
        "trace",
        "--log-format",
        "json",
      ],
      onStderr: (c) => {
        stderr += c;
      },
    });
    try {
      const conn = ["--server", serve.addr, "--token-file", tokenFile];
      const exec = await cli(["exec", ...conn, "--input", `my token is ${TOKEN}`]);
      expect(exec.code, exec.out).toBe(0);
      const session = /^session (\S+)$/m.exec(exec.out)?.[1];
      expect(session, exec.out).toBeTruthy();
      expect((await cli(["get", ...conn, "--session", session!])).code).toBe(0);
      expect((await cli(["list", "--server", serve.addr, "--token-file", wrongFile])).code).not.toBe(0);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    expect(stderr).toMatch(/"msg":"rpc finished"/);
    expect(stderr).toMatch(/PERMISSION_DENIED|UNAUTHENTICATED/);
    expect(stderr).not.toContain(TOKEN);
  });

  it("aRegisteredSecretInAnyFieldIsRedacted", () => {
    const key = "model-api-key-0a1b2c3d4e5f";
    registerSecret(key);
    const lines: string[] = [];
    const log = createLog({ level: "debug", sink: { write: (l) => lines.push(l) } });
    log.warn({ reason: `upstream said: bad key ${key}`, nested: { detail: key } }, `failed with ${key}`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(key);
    expect(lines[0]).toContain("[redacted]");
  });

  it("logFormatPrettyRendersOneHumanLineKeepingEveryField", () => {
    const json: string[] = [];
    const pretty: string[] = [];
    createLog({ format: "json", sink: { write: (l) => json.push(l) } }).warn(
      { harness: "notes", seq: 7 },
      "checkpoint failed",
    );
    createLog({ format: "pretty", sink: { write: (l) => pretty.push(l) } }).warn(
      { harness: "notes", seq: 7 },
      "checkpoint failed",
    );
    expect(JSON.parse(json[0]!)).toMatchObject({ level: 40, msg: "checkpoint failed", harness: "notes", seq: 7 });
    expect(pretty[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}checkpoint failed harness=notes seq=7\n$/);
    expect(prettyLine("not json\n")).toBe("not json\n");
  });
});
