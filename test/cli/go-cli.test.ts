// CLI compatibility with agentctl scripts (issue 22 item 3, docs/migrating-from-go.md): create, deny,
// fork --names, replay --format go --from (the reference's record lines), approve's explicit tuple and
// a positional uid, Go-style single-dash flags. In process through main() on one journal (fast).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";

const dir = mkdtempSync(join(tmpdir(), "hh-go-cli-"));
const journal = join(dir, "j.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...argv: string[]): Promise<{ code: number; out: string[]; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out, err: err.join("\n") };
}

describe("agentctl commands", () => {
  it("createMakesAnEmptyNamedSession: prints the uid; name, model and project are recorded", async () => {
    const made = await cli("create", "-journal", journal, "-name", "triage", "-model", "gpt-x", "-project", "acme");
    expect(made.code).toBe(0);
    const uid = made.out[0] ?? "";
    expect(uid).toMatch(/^sess-/);
    const got = await cli("get", "--journal", journal, "--session", uid, "--json");
    expect(JSON.parse(got.out[0] ?? "{}")).toMatchObject({
      metadata: { uid, name: "triage", project: "acme" },
      model: "gpt-x",
      harness: "echo",
    });
  });

  it("replayFormatGoPrintsRecordLines from --from on, as agentctl prints them", async () => {
    const exec = await cli("exec", "--journal", journal, "--input", "hi there", "--json");
    const uid = (JSON.parse(exec.out[0] ?? "{}") as { session: string }).session;
    const all = await cli("replay", "--journal", journal, "--session", uid, "--format", "go");
    expect(all.out).toEqual([
      "seq=1   EVENT_EXECUTION_START",
      "seq=2   EVENT_INPUT  user: hi there",
      "seq=3   EVENT_MODEL_CALL",
      "seq=4   EVENT_OUTPUT  assistant: echo:hi there",
      "seq=5   EVENT_END",
    ]);
    const from = await cli("replay", "-journal", journal, "-session", uid, "-format", "go", "-from", "4");
    expect(from.out).toEqual(all.out.slice(3));
    expect((await cli("replay", "--journal", journal, "--session", uid, "--from", "2")).code).toBe(2);
  });

  it("forkNamesTheChildren; --count 0 is one child, as the Go client", async () => {
    const exec = await cli("exec", "--journal", journal, "--input", "x", "--json");
    const uid = (JSON.parse(exec.out[0] ?? "{}") as { session: string }).session;
    const named = await cli("fork", "--journal", journal, "--session", uid, "--count", "2", "--names", "a,b");
    expect(named.out).toHaveLength(2);
    const names = await Promise.all(
      named.out.map(async (child) => {
        const got = await cli("get", "--journal", journal, "--session", child, "--json");
        return (JSON.parse(got.out[0] ?? "{}") as { metadata: { name: string } }).metadata.name;
      }),
    );
    expect(names).toEqual(["a", "b"]);
    expect((await cli("fork", "--journal", journal, "--session", uid, "--count", "0")).out).toHaveLength(1);
    const mismatch = await cli("fork", "--journal", journal, "--session", uid, "--count", "2", "--names", "a");
    expect([mismatch.code, mismatch.err]).toEqual([2, expect.stringContaining("--names has 1 names for 2 children")]);
  });

  it("approveTakesTheExplicitTuple and deny takes a positional uid", async () => {
    const first = await cli("exec", "--journal", journal, "--harness", "ask", "--input", "hello", "--json");
    const parked = JSON.parse(first.out[0] ?? "{}") as {
      session: string;
      pending_approval: { execution_id: string; tool_call_id: string; request_seq: number };
    };
    const p = parked.pending_approval;
    const tuple = [
      "--execution",
      p.execution_id,
      "--tool-call",
      p.tool_call_id,
      "--request-seq",
      String(p.request_seq),
    ];
    const partial = await cli("approve", "--journal", journal, "--session", parked.session, "--execution", "e");
    expect([partial.code, partial.err]).toEqual([2, expect.stringContaining("whole --execution, --tool-call")]);
    const approved = await cli("approve", "--journal", journal, "--session", parked.session, ...tuple, "--json");
    expect(approved.code).toBe(0);
    const decision = JSON.parse(approved.out[0] ?? "{}") as { approved: boolean; decision_seq: number };
    expect(decision.approved).toBe(true);
    // The same tuple again is an exact retry: the same committed decision.
    const retry = await cli("approve", "--journal", journal, parked.session, ...tuple, "--json");
    expect(JSON.parse(retry.out[0] ?? "{}")).toMatchObject({ decision_seq: decision.decision_seq });

    const second = await cli("exec", "--journal", journal, "--harness", "ask", "--input", "again", "--json");
    const uid2 = (JSON.parse(second.out[0] ?? "{}") as { session: string }).session;
    const denied = await cli("deny", "-journal", journal, uid2, "-reason", "no", "-json");
    expect(JSON.parse(denied.out[0] ?? "{}")).toMatchObject({ approved: false });
    const both = await cli("deny", "--journal", journal, "--session", uid2, uid2);
    expect([both.code, both.err]).toEqual([2, expect.stringContaining("exactly one session uid")]);
  });
});
