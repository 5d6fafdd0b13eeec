// Harness-node parity with the reference's harnessnode pods (issue 22 item 6, docs/migrating-from-go.md):
// settings from HARNESS_KIND / HARNESS_ADDR / HARNESS_READYZ / HARNESS_MODEL when no flag gives them,
// and an HTTP /readyz probe that answers once the gRPC server accepts.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { nodeSettings, POD_LISTEN, POD_READY_ADDR } from "../../src/cli/commands/node.js";
import { RemoteHarness } from "../../src/node/remote-harness.js";
import { BIN } from "../cli/bin.js";

describe("node settings", () => {
  it("nodeSettingsComeFromHarnessEnvironment: flags first, then HARNESS_*, then the pod defaults", () => {
    expect(nodeSettings({}, { HARNESS_KIND: "counter" })).toEqual({
      harness: "counter",
      listen: `0.0.0.0${POD_LISTEN}`,
      readyAddr: POD_READY_ADDR,
    });
    expect(
      nodeSettings(
        {},
        {
          HARNESS_KIND: "chat",
          HARNESS_MODEL: "m1",
          HARNESS_ADDR: "unix:///tmp/n.sock",
          HARNESS_READYZ: "127.0.0.1:0",
        },
      ),
    ).toEqual({ harness: "chat", listen: "unix:///tmp/n.sock", readyAddr: "127.0.0.1:0", model: "m1" });
    expect(
      nodeSettings({ harness: "echo", listen: "127.0.0.1:0" }, { HARNESS_KIND: "chat", HARNESS_MODEL: "m" }),
    ).toEqual({
      harness: "echo",
      listen: "127.0.0.1:0",
      readyAddr: POD_READY_ADDR,
    });
    expect(nodeSettings({ harness: "echo", listen: "127.0.0.1:0" }, {})).toEqual({
      harness: "echo",
      listen: "127.0.0.1:0",
    });
  });

  it("a node needs its harness and address from somewhere, and chat from the environment needs its model", () => {
    expect(() => nodeSettings({ listen: "127.0.0.1:0" }, {})).toThrow("--harness is required (or set HARNESS_KIND)");
    expect(() => nodeSettings({ harness: "echo" }, {})).toThrow("--listen is required (or set HARNESS_ADDR)");
    expect(() => nodeSettings({}, { HARNESS_KIND: "chat" })).toThrow(
      "HARNESS_MODEL is required when HARNESS_KIND=chat",
    );
    expect(() => nodeSettings({ harness: "echo", listen: "127.0.0.1:0", model: "m" }, {})).toThrow(
      /chat harness's model/,
    );
  });
});

describe("a node started as a reference pod is", () => {
  it("nodeAnswersReadyz once it serves: HARNESS_* only, GET /readyz is 200 ok, Describe answers", async () => {
    const child = spawn(process.execPath, [BIN, "node"], {
      env: { ...process.env, HARNESS_KIND: "echo", HARNESS_ADDR: "127.0.0.1:0", HARNESS_READYZ: "127.0.0.1:0" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let text = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          text += chunk;
          if (text.includes("\n")) resolve(text.split("\n")[0] ?? "");
        });
        child.once("exit", (code) => reject(new Error(`node exited ${code}: ${text}`)));
      });
      const listening = JSON.parse(line) as { address: string; ready: string };
      const ready = await fetch(listening.ready);
      expect([ready.status, await ready.text()]).toEqual([200, "ok"]);
      expect((await fetch(listening.ready.replace("/readyz", "/other"))).status).toBe(404);
      const harness = new RemoteHarness({ address: listening.address, session: "probe" });
      try {
        expect((await harness.describe()).id).toBe("echo");
      } finally {
        harness.close();
      }
    } finally {
      child.kill("SIGTERM");
    }
  }, 120_000);
});
