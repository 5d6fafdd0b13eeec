// JWT bearers (docs/operations.md "JWTs"): verified against a JWKS file or a shared secret with
// issuer, audience and expiry checks, claims mapped to principal, roles and projects; a bad signature,
// a wrong audience or issuer, an expired token, an unknown key and an algorithm other than the key's
// are refused UNAUTHENTICATED; the key file reloads with the token file.
import { createHmac, generateKeyPairSync, sign } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { isRefusal } from "../../src/server/auth.js";
import { type JwtConfig, JwtKeys, keysFromFile, verifyJwt } from "../../src/server/jwt.js";
import { createClient } from "../../src/wire/index.js";
import { codeOf, startFixture, type Fixture } from "./helpers.js";
import { writePrincipalFile } from "./principal-fixture.js";

const NOW = 1_800_000_000;
const config: JwtConfig = {
  keyFile: "",
  keyKind: "jwks",
  issuer: "https://idp.example",
  audience: "harnesshost",
  principalClaim: "sub",
  rolesClaim: "roles",
  projectsClaim: "projects",
  leewaySeconds: 30,
};

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

function rsaPair(kid: string) {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { kid, jwk: { ...publicKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" }, privateKey };
}

const good = {
  iss: config.issuer,
  aud: "harnesshost",
  exp: NOW + 600,
  sub: "carol",
  roles: ["approver"],
  projects: ["a"],
};

function rs256(key: ReturnType<typeof rsaPair>, claims: object, header: object = { alg: "RS256", kid: key.kid }) {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${sign("sha256", Buffer.from(input), key.privateKey).toString("base64url")}`;
}

function hs256(secret: string, claims: object) {
  const input = `${b64({ alg: "HS256" })}.${b64(claims)}`;
  return `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`;
}

const key = rsaPair("k1");
const stranger = rsaPair("k1");
const jwks = keysFromFile("jwks", Buffer.from(JSON.stringify({ keys: [key.jwk] })));

describe("JWT verification", () => {
  it("aValidTokenBecomesThePrincipalItsClaimsName", () => {
    const p = verifyJwt(rs256(key, good), jwks, config, NOW * 1000);
    expect(isRefusal(p)).toBe(false);
    if (isRefusal(p)) return;
    expect(p).toMatchObject({ name: "carol", roles: ["approver"], via: "jwt" });
    expect(p.permissions.has("session.decide")).toBe(true);
    expect(p.permissions.has("session.exec")).toBe(false);
  });

  it.each([
    ["bad signature", rs256(stranger, good), "bad signature"],
    ["wrong audience", rs256(key, { ...good, aud: "someone-else" }), "wrong audience"],
    ["wrong issuer", rs256(key, { ...good, iss: "https://evil.example" }), "wrong issuer"],
    ["expired", rs256(key, { ...good, exp: NOW - 31 }), "expired"],
    ["no expiry", rs256(key, { ...good, exp: undefined }), "no exp"],
    ["unknown key", rs256(key, good, { alg: "RS256", kid: "k9" }), "unknown key id"],
    ["another algorithm than the key's", rs256(key, good, { alg: "HS256", kid: "k1" }), "algorithm HS256"],
    ["alg none", `${b64({ alg: "none", kid: "k1" })}.${b64(good)}.`, "algorithm none"],
    ["an unknown role", rs256(key, { ...good, roles: ["root"] }), "unknown role"],
  ])("aTokenIsRefusedWhenItHas: %s", (_what, token, reason) => {
    const p = verifyJwt(token, jwks, config, NOW * 1000);
    expect(isRefusal(p)).toBe(true);
    if (!isRefusal(p)) return;
    expect(p.code).toBe(GrpcStatus.UNAUTHENTICATED);
    expect(p.details).toContain(reason);
    expect(p.details).not.toContain(token);
  });

  it("aSharedSecretVerifiesHs256AndRefusesAnotherSecret", () => {
    const secret = "a-shared-secret-of-at-least-32-bytes!";
    const keys = keysFromFile("secret", Buffer.from(`${secret}\n`));
    expect(isRefusal(verifyJwt(hs256(secret, good), keys, config, NOW * 1000))).toBe(false);
    const other = verifyJwt(hs256(`${secret}x`, good), keys, config, NOW * 1000);
    expect(isRefusal(other) && other.details).toContain("bad signature");
  });
});

describe("a JWT verifier", () => {
  /** The test key's verifier, counting the signature checks it makes. */
  function counting(cacheSize?: number) {
    const real = jwks.find("k1");
    if (real === undefined) throw new Error("no k1");
    let checks = 0;
    const keys = new JwtKeys([
      {
        kid: "k1",
        alg: real.alg,
        check: (d, s) => {
          checks++;
          return real.check(d, s);
        },
      },
    ]);
    let now = NOW * 1000;
    const verifier = keys.verifier(config, () => now, cacheSize);
    return { verifier, checks: () => checks, at: (sec: number) => (now = sec * 1000) };
  }

  it("aTokenIsVerifiedOnceUntilItsExpThenRefusedExpired", () => {
    const v = counting();
    const token = rs256(key, good);
    for (let i = 0; i < 5; i++) expect(v.verifier.verify(token)).toMatchObject({ name: "carol" });
    expect(v.checks()).toBe(1);
    v.at(good.exp + config.leewaySeconds);
    const late = v.verifier.verify(token);
    expect(isRefusal(late) && late.details).toContain("expired");
  });

  it("aRefusedTokenIsNeverRememberedAndTheCacheIsBounded", () => {
    const v = counting(1);
    const bad = rs256(stranger, good);
    v.verifier.verify(bad);
    v.verifier.verify(bad);
    expect(v.checks()).toBe(2);
    const [a, b] = [rs256(key, good), rs256(key, { ...good, sub: "dave" })];
    v.verifier.verify(a);
    v.verifier.verify(b);
    v.verifier.verify(a);
    expect(v.checks()).toBe(5);
  });
});

describe("JWTs on a server", () => {
  let dir: string;
  let f: Fixture;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hh-jwt-"));
    const keyFile = join(dir, "jwks.json");
    writeFileSync(keyFile, JSON.stringify({ keys: [key.jwk] }));
    const file = writePrincipalFile(dir, `jwt jwks=${keyFile} issuer=${config.issuer} audience=harnesshost`);
    f = await startFixture({ tokenFile: file });
  });
  afterAll(async () => {
    await f.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("aJwtPrincipalIsHeldToItsRolesAndProjects; a refused JWT is UNAUTHENTICATED", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = rs256(key, { ...good, exp: now + 600, roles: "reader", projects: "a" });
    const client = createClient(Sessions, f.server.addr, { metadata: { authorization: `Bearer ${token}` } });
    const expired = createClient(Sessions, f.server.addr, {
      metadata: { authorization: `Bearer ${rs256(key, { ...good, exp: now - 120 })}` },
    });
    try {
      const other = await f.host.createSession({ harness: "echo", project: "b" });
      await client.listSessions({});
      expect(await codeOf(client.getSession({ uid: other.uid }))).toBe(GrpcStatus.NOT_FOUND);
      expect(await codeOf(client.deleteSession({ uid: other.uid }))).toBe(GrpcStatus.PERMISSION_DENIED);
      expect(await codeOf(expired.listSessions({}))).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(f.logs.join("")).not.toContain(token);
    } finally {
      client.close();
      expired.close();
    }
  });
});
