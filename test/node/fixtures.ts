// Test fixtures for the Harness protocol: a recording in-memory EventSink and a scriptable harness
// whose behaviour is chosen by the text of its first input.
import { create } from "@bufbuild/protobuf";
import { MessageSchema, ToolResultSchema, UsageSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { ToolCall, ToolResult, Usage } from "../../src/gen/agentsessions/v1/common_pb.js";
import { HarnessDescriptorSchema, Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import type { HarnessDescriptor } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import type { EventSink, Harness, ModelRequest, ModelResponse, StartInfo } from "../../src/harness/types.js";

export type SinkCall =
  | { readonly kind: "model"; readonly request: ModelRequest }
  | { readonly kind: "toolCall"; readonly call: ToolCall }
  | { readonly kind: "output"; readonly text: string }
  | { readonly kind: "report"; readonly result: ToolResult }
  | { readonly kind: "usage"; readonly usage: Usage };

/** Records every call; answers model calls with "host says: <last input text>" and 7/3 tokens. */
export class RecordingSink implements EventSink {
  readonly calls: SinkCall[] = [];
  #outputWaiters: { text: string; resolve(): void }[] = [];

  async model(request: ModelRequest): Promise<ModelResponse> {
    this.calls.push({ kind: "model", request });
    const last = request.messages.at(-1);
    const text = last?.parts[0]?.part.case === "text" ? last.parts[0].part.value.text : "";
    return {
      message: create(MessageSchema, {
        role: "assistant",
        parts: [{ part: { case: "text", value: { text: `host says: ${text}` } } }],
      }),
      usage: create(UsageSchema, { model: request.model, inputTokens: 7n, outputTokens: 3n }),
    };
  }
  async toolCall(call: ToolCall): Promise<ToolResult> {
    this.calls.push({ kind: "toolCall", call });
    return create(ToolResultSchema, { id: call.id, error: `ran ${call.tool}` });
  }
  async output(text: string): Promise<void> {
    this.calls.push({ kind: "output", text });
    for (const w of this.#outputWaiters.filter((w) => w.text === text)) w.resolve();
  }
  async report(result: ToolResult): Promise<void> {
    this.calls.push({ kind: "report", result });
  }
  async usage(usage: Usage): Promise<void> {
    this.calls.push({ kind: "usage", usage });
  }
  /** Resolves once an output with exactly this text has been recorded. */
  outputSeen(text: string): Promise<void> {
    if (this.calls.some((c) => c.kind === "output" && c.text === text)) return Promise.resolve();
    return new Promise((resolve) => this.#outputWaiters.push({ text, resolve }));
  }
  outputs(): string[] {
    return this.calls.flatMap((c) => (c.kind === "output" ? [c.text] : []));
  }
}

export function textMessage(text: string, role = "user") {
  return create(MessageSchema, { role, parts: [{ part: { case: "text", value: { text } } }] });
}

export function startInfo(executionId: string, command: string, extra: Partial<StartInfo> = {}): StartInfo {
  return {
    sessionUid: "sess-test",
    executionId,
    config: new Uint8Array(),
    history: [],
    inputs: [textMessage(command)],
    resumeFromSeq: 0,
    ...extra,
  };
}

/** A class inside the harness's state: restored with its prototype only if the harness lists it. */
export class Tally {
  total = 0;
  add(n: number): number {
    this.total += n;
    return this.total;
  }
}

/** A harness whose first input's text picks what it does; `count`, `tally` and `blob` are its RAM state. */
export class ScriptedHarness implements Harness {
  static readonly snapshotClasses = [Tally];
  count = 0;
  notes: string[] = [];
  tally = new Tally();
  blob = new Uint8Array(0);

  describe(): HarnessDescriptor {
    return create(HarnessDescriptorSchema, {
      id: "scripted",
      version: "1",
      capabilities: { resumability: Resumability.REQUIRES_MEMORY_SNAPSHOT },
    });
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const first = start.inputs[0]?.parts[0]?.part;
    const command = first?.case === "text" ? first.value.text : "";
    switch (command) {
      case "count":
        this.count += 1;
        this.notes.push(`turn ${this.count}`);
        await sink.output(`count=${this.count}`);
        return;
      case "tally":
        await sink.output(`tally=${this.tally.add(10)}`);
        return;
      case "grow":
        this.blob = new Uint8Array(2.5 * 1024 * 1024).map((_, i) => i % 251);
        await sink.output(`blob=${this.blob.length}`);
        return;
      case "model": {
        const res = await sink.model({ model: "m1", messages: start.inputs, params: { temperature: "0" } });
        const text = res.message.parts[0]?.part.case === "text" ? res.message.parts[0].part.value.text : "";
        await sink.output(`${text} (usage ${res.usage?.inputTokens ?? "none"}/${res.usage?.outputTokens ?? "none"})`);
        return;
      }
      case "effects":
        await sink.output("out");
        await sink.report(create(ToolResultSchema, { id: "t-self", error: "reported" }));
        await sink.usage(create(UsageSchema, { model: "m1", inputTokens: 1n, outputTokens: 2n }));
        {
          const r = await sink.toolCall({
            $typeName: "agentsessions.v1.ToolCall",
            id: "t-1",
            tool: "search",
            mediation: 2,
            idempotencyKey: "k-1",
          });
          await sink.output(`tool said ${r.error}`);
        }
        return;
      case "start-info":
        await sink.output(
          [
            `session=${start.sessionUid}`,
            `exec=${start.executionId}`,
            `seq=${start.resumeFromSeq}`,
            `config=${Buffer.from(start.config).toString()}`,
            `history=${start.history.length}`,
            `principal=${start.identity?.principal?.principal ?? "-"}`,
            `mint=${String(start.identity?.canMintTokens ?? "-")}`,
          ].join(" "),
        );
        return;
      case "throw":
        await sink.output("about to fail");
        throw new HostError(ErrorCode.FailedPrecondition, "scripted failure");
      case "throw-plain":
        throw new Error("plain failure");
      case "wait":
        await sink.output("waiting");
        await new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          signal.addEventListener("abort", () => resolve(), { once: true });
        });
        this.notes.push("aborted");
        throw new HostError(ErrorCode.Cancelled, "harness saw the abort");
      default:
        throw new HostError(ErrorCode.InvalidArgument, `unknown command ${command}`);
    }
  }
}

/** Settles a promise into its error (fails the test if it resolves). */
export async function failureOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e,
  );
}
