// The README's walkthroughs are executed as written (with ports, paths and `npx harnesshost` pointed
// at this checkout), so the commands a newcomer copies keep working.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bash as runBash, freePort, shBlocks, stopPidFiles, strictScript } from "./sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
const readme = readFileSync(join(repo, "README.md"), "utf8");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const blocks = (title: string): string[] => shBlocks(readme, title);

/** Points a README script at this checkout, with fresh ports and a socket under `dir`. */
async function localize(script: string, dir: string): Promise<string> {
  const [p1, p2] = [await freePort(), await freePort()];
  const bin = `node ${join(repo, "bin/harnesshost.js")}`;
  return strictScript(
    script
      .replaceAll(
        "npx harnesshost serve",
        `${bin} serve --addr 127.0.0.1:${p1} --registry-addr 127.0.0.1:${p2} --http-addr 127.0.0.1:0`,
      )
      .replaceAll("npx harnesshost", bin)
      .replaceAll("127.0.0.1:7233", `127.0.0.1:${p1}`)
      .replaceAll("127.0.0.1:7234", `127.0.0.1:${p2}`)
      .replaceAll("/tmp/x.sock", join(dir, "x.sock"))
      .replaceAll("test/verify_chain.py", join(repo, "test/verify_chain.py")),
  );
}

/** Runs a localized script in `cwd`; whatever it started and did not stop is stopped afterwards. */
async function bash(script: string, cwd: string): Promise<string> {
  try {
    return await runBash(script, cwd, 900_000);
  } finally {
    stopPidFiles(cwd);
  }
}

describe("README walkthroughs", () => {
  it("walkthrough 1 runs in-process: exec, replay, verify, export, fork", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-readme-"));
    dirs.push(dir);
    const out = await bash(await localize(blocks("Walkthrough 1").join("\n"), dir), dir);
    expect(out).toContain("echo:again\necho:hi\necho:again\n");
    expect(out).toMatch(/ok sess-[0-9a-f]{24} 10 records/);
    expect(out).toMatch(/ok 10 records/);
    expect(out).toMatch(/\{"children":\["sess-[0-9a-f]{24}"\]\}/);
  }, 900_000);

  it("walkthroughs 2, 3 and 4 run against a served host: a registered node, counter tiers, approvals", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-readme-"));
    dirs.push(dir);
    const script = [...blocks("Walkthrough 2"), ...blocks("Walkthrough 3"), ...blocks("Walkthrough 4")].join("\n");
    const out = await bash(await localize(script, dir), dir);
    const lines = out.split("\n");
    expect(lines).toContain("echo:hi");
    expect(out).toMatch(/ok sess-[0-9a-f]{24}/);
    const counts = lines.filter((l) => /^\d+$/.test(l));
    expect(counts).toEqual(["2", "3", "4"]);
    expect(out).toMatch(/snapshot memory=true digest=sha256:[0-9a-f]{64}/);
    expect(lines.filter((l) => /^sess-[0-9a-f]{24}$/.test(l))).toHaveLength(3);
    // Walkthrough 4: park, zero-step resume, approve, resume once; deny; the same for `ask`.
    expect(
      lines.filter((l) => / exec=AWAITING wait=approval pending_approval=[0-9a-f]{16}\/w1@4 next=approve$/.test(l)),
    ).toHaveLength(2);
    expect(out).toMatch(/^approved [0-9a-f]{16}\/w1 request_seq=4 decision_seq=6; run resume/m);
    expect(lines).toContain("1 approved");
    expect(lines.filter((l) => l.startsWith("awaiting approval: execution="))).toHaveLength(1);
    expect(lines).toContain("2 denied");
    expect(lines).toContain("demo.write ran 1 time(s)");
    expect(lines).toContain("receipt: approved");
    // Questions: the waiting exec names the question and its choices; answer, then resume.
    expect(out).toMatch(
      /^awaiting an answer: which colour for "sea"\? \(answer with --choice 1 red, --choice 2 green, --choice 3 blue, --text TEXT\) execution=/m,
    );
    expect(
      lines.filter((l) =>
        / exec=AWAITING wait=question pending_approval=[0-9a-f]{16}\/ask-\d+@\d+ next=answer$/.test(l),
      ),
    ).toHaveLength(1);
    expect(out).toMatch(/^answered [0-9a-f]{16}\/ask-\d+ request_seq=\d+ decision_seq=\d+; run resume/m);
    expect(lines).toContain("sky: blue");
    expect(lines.filter((l) => l.startsWith("ok "))).toHaveLength(5);
    // The host and the node were stopped by the walkthrough itself, and are gone.
    expect(lines.filter((l) => /^stopped pid \d+$/.test(l))).toHaveLength(2);
  }, 920_000);

  it("walkthrough 6 runs the notes agent against the fake model: approval, one write, read, replay", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-readme-"));
    dirs.push(dir);
    const [model, addr, registry, http] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const script = strictScript(
      blocks("Walkthrough 6")
        .join("\n")
        .replaceAll("npx tsx test/fixtures/", `${join(repo, "node_modules/.bin/tsx")} ${join(repo, "test/fixtures")}/`)
        .replaceAll("npx harnesshost", `node ${join(repo, "bin/harnesshost.js")}`)
        .replaceAll("127.0.0.1:7240", `127.0.0.1:${model}`)
        .replaceAll("127.0.0.1:7253", `127.0.0.1:${addr}`)
        .replaceAll("127.0.0.1:7254", `127.0.0.1:${registry}`)
        .replaceAll("127.0.0.1:7255", `127.0.0.1:${http}`),
    );
    const out = await bash(script, dir);
    const lines = out.split("\n");
    expect(out).toMatch(/^approved [0-9a-f]{16}\/1\.0:call_w request_seq=\d+ decision_seq=\d+; run resume/m);
    expect(
      lines.filter((l) => /^done: \{"name":"color","bytes":4,"duplicate":false\}$/.test(l)).length,
    ).toBeGreaterThanOrEqual(2);
    expect(
      lines.filter((l) => /^done: \{"name":"color","found":true,"text":"blue"\}$/.test(l)).length,
    ).toBeGreaterThanOrEqual(2);
    expect(lines).toContain("blue");
    expect(out).toMatch(/^ok sess-[0-9a-f]{24}/m);
    expect(out).toMatch(/^stopped pid \d+$/m);
  }, 920_000);
});
