// An in-process host for authors' own tests (docs/testing.md): the real Host — journal, placer, gates,
// tool policy — on a fresh temporary data directory, with the harnesses, model and tools a test gives.
// Invariants: a test host never listens on a port; `close()` releases every runtime and removes the
// temporary directory it made (never one the test passed in); options are checked before anything opens.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HostTool } from "../controller/host-tools.js";
import { Host } from "../host/host.js";
import type { ModelProvider } from "../model/types.js";
import { echoModel } from "../model/echo.js";
import { ScriptedModel, type ScriptStep } from "../model/scripted.js";
import { addInProcessHarnesses, type HarnessSource, moduleSpecs } from "./harness-sources.js";
import { TestSession } from "./test-session.js";
import { countedTools, type ToolFunction, type ToolRun } from "./tools.js";

export interface TestHostOptions {
  /** Harnesses by registry name (DNS labels); the built-ins (echo, counter, ask, …) are served too. */
  readonly harnesses?: Readonly<Record<string, HarnessSource>>;
  /**
   * The model every harness's model calls go to: a list of script steps (a ScriptedModel that fails a
   * call past the end of the script), a ScriptedModel, or any ModelProvider. Default: echo.
   */
  readonly model?: ModelProvider | readonly ScriptStep[];
  /** Host-mediated tools: name → `hostTool({ args, run })`, or a bare function of the arguments. */
  readonly tools?: Readonly<Record<string, HostTool<never> | ToolFunction>>;
  /** Tools that run without approval when a harness calls them CONTROLLER_MEDIATED (the operator's policy). */
  readonly toolsWithoutApproval?: readonly string[];
  /** Where the journal and snapshots live. Default: a new temporary directory, removed by close(). */
  readonly dataDir?: string;
}

export class TestHost {
  private constructor(
    /** The underlying Host, for anything the kit does not wrap. */
    readonly host: Host,
    /** The model the host calls: the ScriptedModel when the options gave script steps. */
    readonly model: ModelProvider,
    /** Every real run of a host-mediated tool, in order (a call answered from its receipt is not a run). */
    readonly toolRuns: readonly ToolRun[],
    private readonly defaultHarness: string | undefined,
    private readonly ownDir: string | undefined,
  ) {}

  static async open(options: TestHostOptions = {}): Promise<TestHost> {
    const harnesses = options.harnesses ?? {};
    const runs: ToolRun[] = [];
    const hostTools = options.tools ? countedTools(options.tools, runs) : undefined;
    const specs = moduleSpecs(harnesses);
    const model = Array.isArray(options.model)
      ? new ScriptedModel(options.model as readonly ScriptStep[], null)
      : ((options.model as ModelProvider | undefined) ?? echoModel);
    const ownDir = options.dataDir === undefined ? mkdtempSync(join(tmpdir(), "harnesshost-test-")) : undefined;
    const dataDir = options.dataDir ?? ownDir ?? "";
    let host: Host;
    try {
      host = await Host.open(
        { dataDir, harnesses: specs, toolsWithoutApproval: [...(options.toolsWithoutApproval ?? [])] },
        { model, ...(hostTools ? { hostTools } : {}) },
      );
    } catch (err) {
      if (ownDir) rmSync(ownDir, { recursive: true, force: true });
      throw err;
    }
    try {
      addInProcessHarnesses(host, harnesses);
    } catch (err) {
      await host.close();
      if (ownDir) rmSync(ownDir, { recursive: true, force: true });
      throw err;
    }
    const names = Object.keys(harnesses);
    return new TestHost(host, model, runs, names.length === 1 ? names[0] : undefined, ownDir);
  }

  /** The model as a ScriptedModel (throws when the host has another model). */
  get script(): ScriptedModel {
    if (!(this.model instanceof ScriptedModel)) throw new TypeError("this test host's model is not a ScriptedModel");
    return this.model;
  }

  /** Creates a session of `harness` (default: the one harness the options gave). */
  async session(harness?: string): Promise<TestSession> {
    const name = harness ?? this.defaultHarness;
    if (name === undefined)
      throw new TypeError("session(): name the harness (the test host was given none or several)");
    const info = await this.host.createSession({ harness: name });
    return new TestSession(this.host, info.uid);
  }

  /** A handle on an existing session. */
  attach(uid: string): TestSession {
    return new TestSession(this.host, uid);
  }

  /** Closes the host and removes the temporary data directory it made. */
  async close(): Promise<void> {
    try {
      await this.host.close();
    } finally {
      if (this.ownDir) rmSync(this.ownDir, { recursive: true, force: true });
    }
  }
}

/** Opens a TestHost (see TestHostOptions); close it when the test ends. */
export function openTestHost(options: TestHostOptions = {}): Promise<TestHost> {
  return TestHost.open(options);
}
