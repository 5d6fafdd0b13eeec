// The operator console in a real browser (Debian's chromium-headless-shell driven by playwright-core)
// against a real `harnesshost serve` on loopback: what an operator does, end to end. Each test writes
// a screenshot of its view — into a temp directory, or into docs/console/ (the ones docs/console.md
// shows) when HARNESSHOST_SCREENSHOTS names that directory (`npm run screenshots`).
import { createHash, createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openSqlite } from "../../src/journal/sqlite-driver.js";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUILTIN_STATICS } from "../../src/host/host.js";
import { launchChromium } from "./chromium.js";
import { buildConsole, type ConsoleHost, startConsoleHost } from "./console-host.js";

const REPO = resolve(import.meta.dirname, "../..");
const SHOTS = process.env["HARNESSHOST_SCREENSHOTS"]
  ? resolve(REPO, process.env["HARNESSHOST_SCREENSHOTS"])
  : mkdtempSync(join(tmpdir(), "hh-console-shots-"));
const WAIT = 30_000;
/** A harness module the main host is started with (`serve --harness greeter=local:…`). */
const GREETER = join(REPO, "test/fixtures/harnesses/versioned-v1.ts");

let consoleDir = "";
let browser: Browser;
let host: ConsoleHost;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  consoleDir = await buildConsole();
  browser = await launchChromium();
  host = await startConsoleHost(consoleDir, { harnesses: [`greeter=local:${GREETER}`] });
}, 180_000);

afterAll(async () => {
  await host?.stop();
  await browser?.close();
  rmSync(consoleDir, { recursive: true, force: true });
  if (!process.env["HARNESSHOST_SCREENSHOTS"]) rmSync(SHOTS, { recursive: true, force: true });
});

async function open(url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("close", () => expect(errors).toEqual([]));
  await page.goto(url);
  return page;
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Creates a session from the Sessions view with its first turn; resolves on its Session view. */
async function newSession(page: Page, harness: string, input: string, url = host.url, name = ""): Promise<string> {
  await page.goto(`${url}#/sessions`);
  await page.locator("select[name=harness]").first().selectOption(harness);
  if (name !== "") await page.fill("input[name=name]", name);
  await page.fill("input[name=first-input]", input);
  await page.click("text=Create and run");
  await page.locator("[data-testid=session-uid]").waitFor({ timeout: WAIT });
  const uid = (await page.locator("[data-testid=session-uid]").textContent()) ?? "";
  expect(uid).toMatch(/^sess-[0-9a-f]{24}$/);
  return uid;
}

/** Waits until the live box says the turn finished; its output text. */
async function turnOutput(page: Page): Promise<string> {
  await page.locator("[data-testid=live]", { hasText: "turn finished" }).waitFor({ timeout: WAIT });
  return (await page.locator("[data-testid=live-output]").textContent()) ?? "";
}

async function runTurn(page: Page, input: string): Promise<string> {
  await page.fill("input[name=input]", input);
  await page.click("text=Run turn");
  await page
    .locator("[data-testid=live]", { hasText: "turn running" })
    .or(page.locator("[data-testid=live]", { hasText: "turn finished" }))
    .first()
    .waitFor({ timeout: WAIT });
  return turnOutput(page);
}

describe("operator console in a browser", () => {
  it("consoleCreatesASessionAndStreamsItsOutput: the first turn's output and records stream into the Session view", async () => {
    const page = await open(host.url);
    const older = await newSession(page, "echo", "an unnamed one first");
    await turnOutput(page);
    const uid = await newSession(page, "echo", "hello console", host.url, "first light");
    expect(await turnOutput(page)).toBe("echo:hello console");
    expect(await page.locator("[data-testid=name]").textContent()).toBe("first light");
    await page.locator("[data-testid=timeline] tr[data-kind=end]").waitFor({ timeout: WAIT });
    const kinds = await page
      .locator("[data-testid=timeline] tbody tr")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind")));
    expect(kinds).toEqual(["executionStart", "message", "model", "message", "end"]);
    await page.locator("[data-testid=chain]", { hasText: "verified" }).waitFor({ timeout: WAIT });
    // A payload opens pretty-printed; the model call shows its input hash.
    await page.locator("[data-testid=timeline] tr[data-kind=model] summary").click();
    expect(await page.locator("[data-testid=timeline] tr[data-kind=model] pre").textContent()).toMatch(
      /"inputHash": "[0-9a-f]{64}"/,
    );
    await shot(page, "session");
    await page.goto(`${host.url}#/sessions`);
    const row = page.locator(`[data-testid=sessions] tr[data-uid="${uid}"]`);
    await row.waitFor({ timeout: WAIT });
    // consoleSessionsListShowsTheNameTheTurnAndTheSortOrder: the Name column holds the session's name;
    // State is the turn's status, not the tier again; the date column is the one the list is sorted by.
    const cells = async (): Promise<string[]> => row.locator("td").allTextContents();
    expect((await cells())[1]).toBe("first light");
    expect((await cells())[3]).toMatch(/^(none|live|warm|cold|terminated)$/);
    expect((await cells())[4]).toBe("completed");
    const header = page.locator("[data-testid=sessions] thead th").nth(6);
    expect(await header.textContent()).toMatch(/^Created/);
    expect(await header.getAttribute("aria-sort")).toBe("descending");
    const olderRow = page.locator(`[data-testid=sessions] tr[data-uid="${older}"]`);
    await olderRow.waitFor({ timeout: WAIT });
    expect((await olderRow.locator("td").allTextContents())[1]).toBe("—");
    const uids = await page
      .locator("[data-testid=sessions] tbody tr")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-uid")));
    expect(uids.indexOf(uid)).toBeLessThan(uids.indexOf(older));
    const created = await page.locator("[data-testid=sessions] tbody tr td:nth-child(7)").allTextContents();
    expect([...created].sort().reverse()).toEqual(created);
    // consoleOffersNoTokenFieldOnAHostWithoutTokens: nothing here asks for a token.
    expect(await page.locator("form.token").count()).toBe(0);
    await shot(page, "sessions");
    // The tier filter is the host's (Console.ListSessions): another tier hides the row, its own shows it.
    const tier = (await row.locator("td").nth(3).textContent()) ?? "";
    const filter = page.locator("form.filters select[name=state]");
    await filter.selectOption(tier === "cold" ? "live" : "cold");
    await row.waitFor({ state: "detached", timeout: WAIT });
    await filter.selectOption(tier);
    await row.waitFor({ timeout: WAIT });
    await page.close();
  });

  it("consoleInboxApprovesAndResumes: an ask turn waits in the Inbox, is approved in place, resumes, and its receipt is in the timeline", async () => {
    const page = await open(host.url);
    const uid = await newSession(page, "ask", "ship it");
    await page.locator("[data-testid=state]", { hasText: "waiting" }).waitFor({ timeout: WAIT });
    // consoleRunTurnIsOffWhileTheTurnIsParked: the host would refuse new input; the console says why.
    expect(await page.locator("button", { hasText: "Run turn" }).isDisabled()).toBe(true);
    expect(await page.locator("[data-testid=run-blocked]").textContent()).toContain("approve or deny it, then resume");
    // The streamed turn did not finish: it parked.
    await page
      .locator("[data-testid=live]", { hasText: "turn parked: waiting for a person" })
      .waitFor({ timeout: WAIT });
    // consoleRecordsReadInAnOperatorsWords: the park reads as a wait for a person, not the host's encoding.
    const park = page.locator("[data-testid=timeline] tr[data-kind=lifecycle]", { hasText: "parked" });
    await park.waitFor({ timeout: WAIT });
    expect(await park.locator("summary").textContent()).toMatch(
      /^parked: waiting for a person on call w1 \(asked at seq \d+\); compute freed/,
    );
    const summaries = await page.locator("[data-testid=timeline] summary").allTextContents();
    const kinds = await page.locator("[data-testid=timeline] .kind").allTextContents();
    expect(kinds.filter((k) => /^[a-z]+[A-Z]/.test(k))).toEqual([]);
    expect(summaries.filter((s) => /parked:[0-9a-f]|^lifecycle |^end [A-Z]|^execution start/.test(s))).toEqual([]);
    // consoleOffersForkOnlyWhereAForkMeansSomething: at the head while parked, at the end once done —
    // never inside the turn.
    const forkKinds = async (): Promise<(string | null)[]> =>
      page
        .locator("[data-testid=timeline] tbody tr", { has: page.locator("button", { hasText: "Fork here" }) })
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind")));
    expect(await forkKinds()).toEqual(["lifecycle"]);
    await shot(page, "parked");
    // The State filter is the host's too (Console.ListSessions turns): "waiting" lists it, "completed" not.
    await page.goto(`${host.url}#/sessions`);
    const row = page.locator(`[data-testid=sessions] tr[data-uid="${uid}"]`);
    const turnFilter = page.locator("form.filters select[name=turn]");
    await turnFilter.selectOption("completed");
    await row.waitFor({ state: "detached", timeout: WAIT });
    await turnFilter.selectOption("waiting");
    await row.waitFor({ timeout: WAIT });
    expect(await row.locator("td").nth(4).textContent()).toBe("waiting");
    await page.goto(`${host.url}#/inbox`);
    const card = page.locator(`[data-testid=inbox] article[data-uid="${uid}"]`);
    await card.waitFor({ timeout: WAIT });
    expect(await card.locator("pre.payload").textContent()).toContain('"text": "ship it"');
    await shot(page, "inbox");
    await card.locator("input[name=reason]").fill("looks fine");
    await card.locator("button.approve").click();
    const decided = page.locator("[data-testid=decided]", { hasText: uid });
    await decided.waitFor({ timeout: WAIT });
    await decided.locator("button", { hasText: "Resume" }).click();
    await decided.waitFor({ state: "detached", timeout: WAIT });
    await page.goto(`${host.url}#/session/${uid}`);
    const receipt = page.locator("[data-testid=timeline] tr[data-kind=message]", { hasText: "receipt: approved" });
    await receipt.waitFor({ timeout: WAIT });
    const approval = page.locator("[data-testid=timeline] tr[data-kind=approvalResult]", {
      hasText: "approved w1: looks fine",
    });
    await approval.waitFor({ timeout: WAIT });
    await page.locator("[data-testid=timeline] tr[data-kind=tool]", { hasText: "result @" }).waitFor({ timeout: WAIT });
    expect(await page.locator("button", { hasText: "Run turn" }).isDisabled()).toBe(false);
    // The turn's end is followed by the resume record: one fork point for that resting state, the head.
    expect(await forkKinds()).toEqual(["lifecycle"]);
    await shot(page, "receipt");
    await page.close();
  });

  it("consoleForksAtASeqAndOpensTheChild: Fork here on the turn's end opens a child forked from the parent there", async () => {
    const page = await open(host.url);
    const parent = await newSession(page, "echo", "to be forked");
    await turnOutput(page);
    const end = page.locator("[data-testid=timeline] tr[data-kind=end]");
    await end.waitFor({ timeout: WAIT });
    const endSeq = (await end.getAttribute("data-seq")) ?? "";
    // Only the turn's end offers a fork (it is also the head); the records inside the turn do not.
    const forkable = await page
      .locator("[data-testid=timeline] tbody tr", { has: page.locator("button", { hasText: "Fork here" }) })
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-seq")));
    expect(forkable).toEqual([endSeq]);
    await end.locator("button", { hasText: "Fork here" }).click();
    await page.locator("[data-testid=session-uid]", { hasNotText: parent }).waitFor({ timeout: WAIT });
    const lineage = (await page.locator("[data-testid=lineage]").textContent()) ?? "";
    expect(lineage).toContain(`forked from ${parent} at seq ${endSeq}`);
    expect(await page.locator("[data-testid=head]").textContent()).toBe(String(Number(endSeq) + 1));
    await page
      .locator("[data-testid=timeline] tr[data-kind=lifecycle]", {
        hasText: `forked from the parent session at its seq ${endSeq}`,
      })
      .waitFor({ timeout: WAIT });
    await shot(page, "fork");
    // The parent lists its child.
    await page.locator("[data-testid=lineage] a").first().click();
    await page.locator("[data-testid=lineage] li", { hasText: "child" }).waitFor({ timeout: WAIT });
    await page.close();
  });

  it("consoleSuspendResumeContinuesACounterAtNPlusOne: a memory-tier counter suspended and resumed counts on", async () => {
    const page = await open(host.url);
    await newSession(page, "counter", "a");
    expect(await turnOutput(page)).toBe("1");
    expect(await runTurn(page, "a")).toBe("2");
    await page.click("text=Suspend");
    await page.locator("dd", { hasText: /sha256:/ }).waitFor({ timeout: WAIT });
    await page.click("button:has-text('Resume')");
    await page
      .locator("[data-testid=timeline] tr[data-kind=lifecycle]", { hasText: "resume" })
      .waitFor({ timeout: WAIT });
    expect(await runTurn(page, "a")).toBe("3");
    // Fork is offered where the counter rests: after each turn (after turn 2: once, after the resume).
    const forkable = await page
      .locator("[data-testid=timeline] tbody tr", { has: page.locator("button", { hasText: "Fork here" }) })
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind")));
    expect(forkable).toEqual(["end", "lifecycle", "end"]);
    const lifecycle = await page.locator("[data-testid=timeline] tr[data-kind=lifecycle] summary").allTextContents();
    expect(lifecycle).toEqual([
      expect.stringMatching(/^suspended: compute freed · memory snapshot sha256:[0-9a-f]{12}…$/),
      "resumed",
    ]);
    await shot(page, "counter");
    await page.close();
  });

  it("consoleChainBadgeFailsAtTheTamperedSeq: a journal row changed on disk turns the badge red at its seq", async () => {
    const page = await open(host.url);
    const uid = await newSession(page, "echo", "tamper me");
    await turnOutput(page);
    await page.locator("[data-testid=chain]", { hasText: "verified" }).waitFor({ timeout: WAIT });
    const db = openSqlite(host.journal);
    try {
      const row = db.prepare("SELECT event FROM events WHERE session = ? AND seq = 2").get(uid) as { event: Buffer };
      const at = row.event.indexOf("tamper me");
      expect(at).toBeGreaterThan(0);
      row.event.write("tamper ME", at);
      db.prepare("UPDATE events SET event = ? WHERE session = ? AND seq = 2").run(row.event, uid);
    } finally {
      db.close();
    }
    await page.reload();
    const badge = page.locator("[data-testid=chain]", { hasText: "tampered" });
    await badge.waitFor({ timeout: WAIT });
    expect(await badge.getAttribute("data-first-bad-seq")).toBe("2");
    expect(await badge.textContent()).toContain("tampered at seq 2");
    await page.locator("[data-testid=timeline] tr.bad[data-seq='2']").waitFor({ timeout: WAIT });
    await shot(page, "chain-broken");
    await page.close();
  });

  it("consoleUpgradeShowsTheRefusalThenTheNewPin: an incompatible version is refused at the divergent seq, a compatible one becomes the pin", async () => {
    const fixture = (v: string): string => `ver@${v}=local:${join(REPO, `test/fixtures/harnesses/versioned-v${v}.ts`)}`;
    // The last configured version (1) is the default for new sessions; 2 keeps its prompt, 3 changes it.
    const versioned = await startConsoleHost(consoleDir, { harnesses: [fixture("3"), fixture("2"), fixture("1")] });
    try {
      const page = await open(versioned.url);
      await newSession(page, "ver", "a", versioned.url);
      expect(await turnOutput(page)).toBe("echo:say a");
      const modelSeq = await page.locator("[data-testid=timeline] tr[data-kind=model]").getAttribute("data-seq");
      await page.click("text=Upgrade to version…");
      const pinned = page.locator("[data-testid=pinned-version]");
      await pinned.filter({ hasText: /^1$/ }).waitFor({ timeout: WAIT });
      const upgrade = page.locator("[data-testid=upgrade] button.primary");
      await page.locator("select[name=to-version]").selectOption("3");
      await upgrade.click();
      const refused = page.locator("[data-testid=upgrade-refused]");
      await refused.waitFor({ timeout: WAIT });
      expect(await refused.getAttribute("data-divergent-seq")).toBe(modelSeq);
      expect(await refused.textContent()).toContain(`diverged at seq ${modelSeq}`);
      expect(await pinned.textContent()).toBe("1");
      await page.locator("select[name=to-version]").selectOption("2");
      await upgrade.click();
      await page.locator("[data-testid=upgrade-done]", { hasText: "upgraded from 1 to 2" }).waitFor({ timeout: WAIT });
      await pinned.filter({ hasText: /^2$/ }).waitFor({ timeout: WAIT });
      expect(await refused.count()).toBe(0);
      // The next turn runs on 2 (its prompt is 1's, so the output is the same).
      expect(await runTurn(page, "b")).toBe("echo:say b");
      await page.close();
    } finally {
      await versioned.stop();
    }
  });

  it("consoleShowsHarnesses: the registry's entries with their tier and reachability", async () => {
    const page = await open(`${host.url}#/harnesses`);
    const table = page.locator("[data-testid=harnesses]");
    const counter = table.locator("tbody tr", { has: page.locator("td:first-child", { hasText: /^counter$/ }) });
    await counter.locator(".badge.ok", { hasText: "reachable" }).waitFor({ timeout: WAIT });
    const names = await table.locator("tbody tr td:first-child").allTextContents();
    // Every built-in the host serves by default and the module it was started with, in name order.
    expect(names).toEqual([...BUILTIN_STATICS.map((h) => h.name), "greeter"].sort());
    // consoleShowsWhereEachHarnessComesFrom: a module given to serve --harness is not "static, built-in".
    const row = async (name: string): Promise<string[]> =>
      table
        .locator("tbody tr", { has: page.locator("td:first-child", { hasText: new RegExp(`^${name}$`) }) })
        .locator("td")
        .allTextContents();
    await table.locator("tbody tr td", { hasText: GREETER }).waitFor({ timeout: WAIT });
    expect((await row("greeter")).slice(0, 5)).toEqual([
      "greeter",
      "serve --harness",
      "stateless",
      "in-process",
      GREETER,
    ]);
    expect((await row("echo")).slice(0, 5)).toEqual(["echo", "built-in", "stateless", "in-process", "—"]);
    expect((await row("counter")).slice(0, 5)).toEqual(["counter", "built-in", "memory", "spawned node", "—"]);
    await shot(page, "harnesses");
    await page.close();
  });

  it("consoleWrongTokenIsAClearError: no token and a wrong token say so with their codes; the right one lists sessions", async () => {
    const secured = await startConsoleHost(consoleDir, { token: "console-s3cret" });
    try {
      const page = await open(secured.url);
      const error = page.locator("[data-testid=error]").first();
      await error.waitFor({ timeout: WAIT });
      expect(await error.textContent()).toContain("unauthenticated: missing bearer token");
      // The token field appears once the host asked for a token.
      await page.locator("form.token", { hasText: "this host needs a token" }).waitFor({ timeout: WAIT });
      await page.fill("input[name=token]", "wrong");
      await page.click(".token button");
      await page
        .locator("[data-testid=error]", { hasText: "permission_denied: invalid bearer token" })
        .first()
        .waitFor({ timeout: WAIT });
      await shot(page, "wrong-token");
      await page.fill("input[name=token]", "console-s3cret");
      await page.click(".token button");
      await page.locator("[data-testid=sessions]").waitFor({ timeout: WAIT });
      await page.locator("[data-testid=error]").first().waitFor({ state: "detached", timeout: WAIT });
      await page.close();
    } finally {
      await secured.stop();
    }
  });

  it("consoleShowsThePrincipalAndHidesWhatItsRoleLacks: a token or a JWT logs in, the top bar names who, the host still refuses", async () => {
    const keys = mkdtempSync(join(tmpdir(), "hh-console-jwt-"));
    const secret = "a-console-test-secret-of-32-bytes-or-more";
    writeFileSync(join(keys, "jwt.secret"), secret);
    const sha = (t: string): string => createHash("sha256").update(t).digest("hex");
    const tokenFile = [
      `sha256:${sha("olga-token")} principal=olga roles=operator projects=default`,
      `sha256:${sha("rita-token")} principal=rita roles=reader`,
      `jwt secret-file=${join(keys, "jwt.secret")} issuer=https://idp.example audience=harnesshost`,
    ].join("\n");
    const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString("base64url");
    const claims = {
      iss: "https://idp.example",
      aud: "harnesshost",
      sub: "jay",
      roles: ["approver"],
      projects: ["default"],
    };
    const input = `${b64({ alg: "HS256" })}.${b64({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 })}`;
    const jwt = `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`;
    const secured = await startConsoleHost(consoleDir, { tokenFile: `${tokenFile}\n` });
    const login = async (page: Page, token: string): Promise<void> => {
      await page.fill("input[name=token]", token);
      await page.click(".token button");
    };
    try {
      const page = await open(secured.url);
      await page.locator("form.token", { hasText: "this host needs a token" }).waitFor({ timeout: WAIT });
      // An operator: named in the top bar, may create and run.
      await login(page, "olga-token");
      await page.locator("[data-testid=principal]", { hasText: "olga" }).waitFor({ timeout: WAIT });
      expect(await page.locator("[data-testid=principal]").textContent()).toBe("olga · operator · default");
      const uid = await newSession(page, "echo", "hello", secured.url);
      await turnOutput(page);
      await page.locator("[data-testid=timeline] button", { hasText: "Fork here" }).first().waitFor({ timeout: WAIT });
      const started = page.locator("[data-testid=timeline] tr[data-kind=executionStart] [data-testid=actor]");
      expect(await started.textContent()).toContain("by olga");
      await shot(page, "principal-operator");
      // consoleInboxNamesWhoAskedForTheTurn: the waiting turn's card names the verified principal.
      const asked = await newSession(page, "ask", "ship it", secured.url);
      await page.locator("[data-testid=state]", { hasText: "waiting" }).waitFor({ timeout: WAIT });
      await page.goto(`${secured.url}#/inbox`);
      const askedBy = page.locator(`[data-testid=inbox] article[data-uid="${asked}"] [data-testid=asked-by]`);
      await askedBy.waitFor({ timeout: WAIT });
      expect(await askedBy.textContent()).toBe(" · turn asked by olga");
      await page.goto(`${secured.url}#/session/${uid}`);
      // A reader: every project, no New session, no Run turn, Suspend, Resume, Fork here or Upgrade.
      await login(page, "rita-token");
      await page.locator("[data-testid=principal]", { hasText: "rita" }).waitFor({ timeout: WAIT });
      expect(await page.locator("[data-testid=principal]").textContent()).toBe("rita · reader · every project");
      await page.locator("[data-testid=timeline] tr").first().waitFor({ timeout: WAIT });
      await page.locator("[data-testid=lacks][data-permission='session.exec']").waitFor({ timeout: WAIT });
      for (const action of ["Run turn", "Suspend", "Resume", "Fork here", "Upgrade to version…"])
        expect(await page.locator("button", { hasText: action }).count()).toBe(0);
      expect(await page.locator("button", { hasText: "Export JSONL" }).count()).toBe(1);
      await shot(page, "principal-reader");
      // Hiding is a courtesy: the host refuses the reader's Suspend itself, naming the permission.
      const refused = await page.evaluate(async (session) => {
        const res = await fetch("/agentsessions.v1.Sessions/Suspend", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer rita-token" },
          body: JSON.stringify({ session }),
        });
        return { status: res.status, body: await res.text() };
      }, uid);
      expect(refused.status).toBe(403);
      expect(refused.body).toContain("principal rita lacks permission session.suspend");
      expect(refused.body).not.toContain("rita-token");
      await page.goto(`${secured.url}#/sessions`);
      await page.locator("[data-testid=lacks][data-permission='session.create']").waitFor({ timeout: WAIT });
      // A JWT logs in the same way: an approver named by its claims.
      await login(page, jwt);
      await page.locator("[data-testid=principal]", { hasText: "jay" }).waitFor({ timeout: WAIT });
      expect(await page.locator("[data-testid=principal]").textContent()).toBe("jay · approver · default");
      await page.locator("[data-testid=lacks][data-permission='session.create']").waitFor({ timeout: WAIT });
      await shot(page, "principal-jwt");
      await page.close();
    } finally {
      await secured.stop();
      rmSync(keys, { recursive: true, force: true });
    }
  });
});
