// A Go-written session continues here (docs/migrating-from-go.md). The fixture is a current-writer Go echo
// turn (EXECUTION_START with harness/version, INPUT, MODEL_CALL, OUTPUT, END) whose MODEL_CALL carries
// the input hash the Go host recorded for an echo "hello" request (the reference's own vector, also in
// its v0.1.2 journals); its chain hashes are computed with our hashing, which reproduces the
// reference's golden vectors (test/canon/vectors.test.ts). It is stored in the Go SQLite layout and
// brought in with `import --from-go`. Invariants: replay of a Go-written execution serves its
// recorded effects with zero model calls (I0 checked in the Go form), a new turn is recorded in our
// form, and the session keeps verifying and replaying afterwards.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/run.js";
import { GO_HELLO_INPUT_HASH, goEchoTurn, writeGoJournal } from "../journal/go-fixture.js";

const dir = mkdtempSync(join(tmpdir(), "hh-go-continue-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const msg = (role: string, text: string) => ({ role, parts: [{ part: { case: "text" as const, value: { text } } }] });

describe("continuing a Go-written session", () => {
  const uid = "sess-0123456789abcdef01234567";

  it("a Go-written session replays with zero model calls and takes a new turn", async () => {
    const source = join(dir, "go.db");
    writeGoJournal(source, "v2", [
      { uid, records: goEchoTurn(GO_HELLO_INPUT_HASH), row: { fence: 1, createdAtNs: 1n } },
    ]);
    const journal = join(dir, "ours.db");
    expect(await cli("import", "--from-go", source, "--journal", journal)).toMatchObject({ code: 0, err: "" });

    const replay = await cli("replay", "--journal", journal, "--session", uid, "--json");
    expect(replay.err).toBe("");
    expect(JSON.parse(replay.out)).toEqual({ session: uid, outputs: ["echo:hello"], model_calls: 0 });

    const turn = await cli("exec", "--journal", journal, "--session", uid, "--input", "again");
    expect(turn).toMatchObject({ code: 0, out: "echo:again" });

    const again = await cli("replay", "--journal", journal, "--session", uid, "--json");
    expect(JSON.parse(again.out)).toEqual({ session: uid, outputs: ["echo:hello", "echo:again"], model_calls: 0 });
    expect(await cli("verify", "--journal", journal, "--session", uid)).toMatchObject({ code: 0 });
  });

  it("the Go form is used only for Go-written executions: the same turn with our hash form diverges", async () => {
    const source = join(dir, "go-ours-hash.db");
    const other = "sess-fedcba9876543210fedcba98";
    const { modelInputHash } = await import("../../src/canon/index.js");
    const { ModelCallSchema } = await import("../../src/gen/agentsessions/v1/common_pb.js");
    const ours = modelInputHash(create(ModelCallSchema, { model: "echo", messages: [msg("user", "hello")] }));
    writeGoJournal(source, "v2", [{ uid: other, records: goEchoTurn(ours), row: { fence: 1, createdAtNs: 1n } }]);
    const journal = join(dir, "ours-2.db");
    expect((await cli("import", "--from-go", source, "--journal", journal)).code).toBe(0);
    const replay = await cli("replay", "--journal", journal, "--session", other, "--json");
    expect(replay.code).not.toBe(0);
    expect(replay.err).toContain("model input hash mismatch");
  });
});
