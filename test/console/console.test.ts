// The operator console in a real browser (Debian's chromium-headless-shell driven by playwright-core)
// against a real `harnesshost serve` on loopback: what an operator does, end to end. Each test writes
// a screenshot of its view — into a temp directory, or into docs/console/ (the ones docs/console.md
// shows) when HARNESSHOST_SCREENSHOTS names that directory (`npm run screenshots`).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
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

let consoleDir = "";
let browser: Browser;
let host: ConsoleHost;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  consoleDir = await buildConsole();
  browser = await launchChromium();
  host = await startConsoleHost(consoleDir);
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
async function newSession(page: Page, harness: string, input: string, url = host.url): Promise<string> {
  await page.goto(`${url}#/sessions`);
  await page.locator("select[name=harness]").first().selectOption(harness);
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
    const uid = await newSession(page, "echo", "hello console");
    expect(await turnOutput(page)).toBe("echo:hello console");
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
    await shot(page, "receipt");
    await page.close();
  });

  it("consoleForksAtASeqAndOpensTheChild: Fork here on seq 2 opens a child forked from the parent at 2", async () => {
    const page = await open(host.url);
    const parent = await newSession(page, "echo", "to be forked");
    await turnOutput(page);
    await page.locator("[data-testid=timeline] tr[data-seq='2'] button", { hasText: "Fork here" }).click();
    await page.locator("[data-testid=session-uid]", { hasNotText: parent }).waitFor({ timeout: WAIT });
    const lineage = (await page.locator("[data-testid=lineage]").textContent()) ?? "";
    expect(lineage).toContain(`forked from ${parent} at seq 2`);
    expect(await page.locator("[data-testid=head]").textContent()).toBe("3");
    await page
      .locator("[data-testid=timeline] tr[data-kind=lifecycle]", { hasText: "fork" })
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
    await shot(page, "counter");
    await page.close();
  });

  it("consoleChainBadgeFailsAtTheTamperedSeq: a journal row changed on disk turns the badge red at its seq", async () => {
    const page = await open(host.url);
    const uid = await newSession(page, "echo", "tamper me");
    await turnOutput(page);
    await page.locator("[data-testid=chain]", { hasText: "verified" }).waitFor({ timeout: WAIT });
    const db = new Database(host.journal);
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
    // Every built-in the host serves by default, in name order (one list: BUILTIN_STATICS).
    expect(names).toEqual(BUILTIN_STATICS.map((h) => h.name).sort());
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
});
