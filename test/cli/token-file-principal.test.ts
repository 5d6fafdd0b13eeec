// The CLI's --token-file picks a named principal (docs/operations.md "Principals, roles and
// projects"): `FILE#NAME` sends the token labelled principal=NAME, plain FILE the first token; a
// name the file does not hold is a usage error naming the file, never a token.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { remoteConnectOptions } from "../../src/cli/grpc-api.js";
import { parseTokenFile, pickToken } from "../../src/wire/token-file.js";

const dir = mkdtempSync(join(tmpdir(), "hh-cli-token-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, "my-tokens");
writeFileSync(
  file,
  "# mine\nfirst-token-0123456789 principal=alice\nsecond-token-0123456789 principal=bob\nbare-token-0123456789\n",
);

describe("CLI token file", () => {
  it("theCliTokenFilePicksANamedPrincipal", () => {
    expect(remoteConnectOptions({ "token-file": file }, "127.0.0.1:1").token).toBe("first-token-0123456789");
    expect(remoteConnectOptions({ "token-file": `${file}#bob` }, "127.0.0.1:1").token).toBe("second-token-0123456789");
    expect(() => remoteConnectOptions({ "token-file": `${file}#carol` }, "127.0.0.1:1")).toThrow(
      `--token-file ${file} holds no token labelled principal=carol`,
    );
  });

  it("labelsAreNeverPartOfAToken", () => {
    const text = "t1 principal=a\nt2\n";
    expect(parseTokenFile(text)).toEqual(["t1", "t2"]);
    expect(pickToken(text)).toBe("t1");
    expect(pickToken(text, "a")).toBe("t1");
    expect(pickToken(text, "b")).toBeUndefined();
  });
});
