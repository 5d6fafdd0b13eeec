// The README's walkthroughs run as written — `npx harnesshost …` through real npx, in a project that
// installed the packed tarball (test/docs/npx-doc.ts says what is changed: ports, /tmp sockets and
// repository paths, and why), so the commands a newcomer copies keep working.
import { readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectWorkdir } from "../package/shared.js";
import { runDoc } from "./npx-doc.js";
import { shBlocks } from "./sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
const readme = readFileSync(join(repo, "README.md"), "utf8");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const blocks = (title: string): string[] => shBlocks(readme, title);

async function workdir(): Promise<string> {
  const dir = await projectWorkdir("readme");
  dirs.push(dir);
  return dir;
}

describe("README walkthroughs", () => {
  it("walkthrough 1 runs in-process: exec, replay, verify, export, fork", async () => {
    const out = await runDoc(blocks("Walkthrough 1").join("\n"), await workdir());
    expect(out).toContain("echo:again\necho:hi\necho:again\n");
    expect(out).toMatch(/ok sess-[0-9a-f]{24} 10 records/);
    expect(out).toMatch(/ok 10 records/);
    expect(out).toMatch(/\{"children":\["sess-[0-9a-f]{24}"\]\}/);
  }, 900_000);

  it("walkthroughs 2, 3 and 4 run against a served host: a registered node, counter tiers, approvals", async () => {
    const script = [...blocks("Walkthrough 2"), ...blocks("Walkthrough 3"), ...blocks("Walkthrough 4")].join("\n");
    const out = await runDoc(script, await workdir());
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
    const out = await runDoc(blocks("Walkthrough 6").join("\n"), await workdir());
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
