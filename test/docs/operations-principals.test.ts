// docs/operations.md "Principals, roles and projects": its token-file example parses as written, its
// shell recipe makes a line whose digest is the generated token's — the one the server accepts — and
// its rotation recipe leaves only the new token's line, under the same principal.
import { readFileSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseTokenFileText } from "../../src/server/token-file.js";
import { projectWorkdir } from "../package/shared.js";
import { runDoc } from "./npx-doc.js";
import { codeBlocks, shBlocks } from "./sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
const doc = readFileSync(join(repo, "docs/operations.md"), "utf8");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("docs/operations.md principals", () => {
  it("theTokenFileExampleParsesAsWritten", () => {
    const [example, jwt] = codeBlocks(doc, "Principals, roles and projects", "text");
    const { entries } = parseTokenFileText(example ?? "");
    expect(entries.map((e) => e.principal.name)).toEqual(["alice", "ci", "node-eu1", expect.stringMatching(/^token:/)]);
    expect(entries[0]?.principal.roles).toEqual(["operator", "approver"]);
    const lines = (jwt ?? "").trim().split("\n");
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(parseTokenFileText(line).jwt?.issuer).toBe("https://idp.example");
  });

  it("theDigestRecipeWritesTheGeneratedTokensDigest", async () => {
    const dir = await projectWorkdir("principals-digest");
    dirs.push(dir);
    const [recipe] = shBlocks(doc, "Principals, roles and projects");
    const out = await runDoc(`${recipe}\necho "$TOKEN"`, dir, 120_000);
    const token = out.trim().split("\n").at(-1) ?? "";
    const { entries } = parseTokenFileText(readFileSync(join(dir, "tokens"), "utf8"));
    expect(entries[0]?.digest.toString("hex")).toBe(createHash("sha256").update(token).digest("hex"));
    expect(entries[0]?.principal).toMatchObject({ name: "alice", roles: ["operator", "approver"] });
  }, 600_000);

  it("theRotationRecipeLeavesOnlyTheNewTokenUnderTheSameName", async () => {
    const dir = await projectWorkdir("principals-rotate");
    dirs.push(dir);
    const [make, rotate] = shBlocks(doc, "Principals, roles and projects");
    const out = await runDoc(`${make}\n${rotate}\necho "$TOKEN"\necho "$NEW_TOKEN"`, dir, 120_000);
    const [oldToken, newToken] = out.trim().split("\n").slice(-2);
    const text = readFileSync(join(dir, "tokens"), "utf8");
    expect(text).not.toContain(oldToken);
    expect(text).not.toContain(newToken);
    const { entries } = parseTokenFileText(text);
    expect(entries.map((e) => e.digest.toString("hex"))).toEqual([
      createHash("sha256")
        .update(newToken ?? "")
        .digest("hex"),
    ]);
    expect(entries[0]?.principal).toMatchObject({ name: "alice", roles: ["operator", "approver"] });
  }, 600_000);
});
