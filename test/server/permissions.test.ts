// The permission table and the token file's format (docs/operations.md "Principals, roles and
// projects"): every served method needs exactly one permission; roles are the documented sets; a bad
// line is refused by number, never quoted.
import { describe, expect, it } from "vitest";
import { HarnessRegistry } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Console } from "../../src/gen/harnesshost/v1/console_pb.js";
import { HarnessVersions, SessionVersions } from "../../src/gen/harnesshost/v1/versions_pb.js";
import {
  METHOD_PERMISSIONS,
  permissionOf,
  REGISTRAR_PERMISSIONS,
  ROLE_PERMISSIONS,
} from "../../src/server/permissions.js";
import { parseTokenFileText } from "../../src/server/token-file.js";
import { Turns } from "../../src/gen/harnesshost/v1/turns_pb.js";
import { sha256 } from "./principal-fixture.js";

describe("permission table", () => {
  it("everyServedMethodHasAPermission", () => {
    const served = [Sessions, Console, SessionVersions, HarnessRegistry, HarnessVersions, Turns].flatMap((s) =>
      s.methods.map((m) => `/${s.typeName}/${m.name}`),
    );
    for (const path of served) expect(permissionOf(path), path).toBeDefined();
    expect(Object.keys(METHOD_PERMISSIONS).length).toBe(served.length + 2); // + the two reflection services
  });

  it("rolesAreTheDocumentedSets: reader reads, operator runs, approver decides, admin does everything", () => {
    expect(ROLE_PERMISSIONS.reader).not.toContain("session.exec");
    expect(ROLE_PERMISSIONS.operator).toContain("session.exec");
    expect(ROLE_PERMISSIONS.operator).not.toContain("session.decide");
    expect(ROLE_PERMISSIONS.approver).toContain("session.decide");
    expect(ROLE_PERMISSIONS.approver).not.toContain("session.exec");
    expect(ROLE_PERMISSIONS.admin).toContain("session.delete");
    expect(REGISTRAR_PERMISSIONS.filter((p) => p.startsWith("session."))).toEqual([]);
  });
});

describe("token file", () => {
  it("namedLinesHoldDigestsAndBareLinesAreAdminsEverywhere", () => {
    const text = [
      "# comment",
      `sha256:${sha256("t1")} principal=alice roles=reader,approver projects=a,b`,
      `sha256:${sha256("t2")} registrar=deployer`,
      "bare-token-1234567890",
      "",
    ].join("\n");
    const { entries } = parseTokenFileText(text);
    expect(entries.map((e) => e.principal.name)).toEqual([
      "alice",
      "deployer",
      expect.stringMatching(/^token:[0-9a-f]{8}$/),
    ]);
    const [alice, deployer, bare] = entries.map((e) => e.principal);
    expect(alice?.projects).toEqual(new Set(["a", "b"]));
    expect(deployer?.kind).toBe("registrar");
    expect(bare?.roles).toEqual(["admin"]);
    expect(bare?.projects).toBe("all");
  });

  it("aPrincipalMayHoldTwoTokensWhileOneIsRotated: both are accepted as the one principal", () => {
    const text = [
      `sha256:${sha256("old")} principal=alice roles=operator,approver projects=a,b`,
      `sha256:${sha256("new")} principal=alice roles=approver,operator projects=b,a`,
    ].join("\n");
    const { entries } = parseTokenFileText(text);
    expect(entries.map((e) => e.principal.name)).toEqual(["alice", "alice"]);
    expect(entries[1]?.principal).toBe(entries[0]?.principal);
  });

  it.each([
    ["an unknown role", `sha256:${sha256("x")} principal=a roles=root`, /line 1: unknown role "root"/],
    ["no roles", `sha256:${sha256("x")} principal=a`, /line 1: principal a needs roles=/],
    ["a short digest", "sha256:abc principal=a roles=reader", /line 1: sha256: must be followed by 64/],
    ["a bare line with spaces", "secret-token extra", /line 1: a bare token line holds one token/],
    [
      "a name given twice with other rights",
      `sha256:${sha256("x")} principal=a roles=reader\nsha256:${sha256("y")} principal=a roles=reader projects=p`,
      /line 2: principal a is named on line 1 with other roles or projects/,
    ],
    [
      "a second jwt line",
      "jwt secret-file=/k issuer=i audience=a\njwt secret-file=/k issuer=i audience=a",
      /line 2: only one jwt line/,
    ],
    ["a jwt line without its issuer", "# c\njwt secret-file=/k audience=a", /line 2: issuer/],
    ["a jwt word without =", "jwt secret-file=/k issuer=i audience=a secret-token", /line 1: expected key=value/],
  ])("aBadLineIsRefusedByItsNumberNeverQuoted: %s", (_what, text, message) => {
    expect(() => parseTokenFileText(text)).toThrow(message);
    try {
      parseTokenFileText(text);
    } catch (err) {
      expect(String(err)).not.toContain("secret-token");
    }
  });
});
