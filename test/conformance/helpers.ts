// Shared helpers for the conformance-suite tests: run the CLI in-process, a deterministic
// OpenAI-compatible endpoint on 127.0.0.1 (port from the OS), and a small XML well-formedness check.
import { expect } from "vitest";
import { ChatEndpoint } from "../fixtures/chat-endpoint.js";
import { main } from "../../src/cli/run.js";

export async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

export interface JsonReport {
  harness: string;
  tier: string;
  passed: number;
  failed: number;
  skipped: number;
  checks: { id: string; tier: string; status: "pass" | "fail" | "skip"; evidence: string }[];
}

export function failedIds(report: Pick<JsonReport, "checks">): string[] {
  return report.checks.filter((c) => c.status === "fail").map((c) => c.id);
}

/**
 * A chat-completions endpoint whose answer is a pure function of the request (so the control twin and
 * the subject get the same completion): "seen <n> messages, last: <text of the last message>".
 */
export class DeterministicChatEndpoint extends ChatEndpoint {
  constructor() {
    super((body) => {
      const messages = body.messages ?? [];
      const last = messages.at(-1)?.content;
      const text = typeof last === "string" ? last : JSON.stringify(last ?? "");
      return `seen ${messages.length} messages, last: ${text}`;
    });
  }
}

/**
 * Checks XML well-formedness for the subset a JUnit report uses: one prolog, properly nested and
 * closed elements, quoted attributes, and no raw `<` or `&` outside markup. Returns the problem or "".
 */
export function xmlProblem(xml: string): string {
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, "");
  const stack: string[] = [];
  const token = /<\/?([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < body.length && (m = token.exec(body)) !== null) {
    pos = token.lastIndex;
    const [whole, name, , selfClose, text] = m;
    if (text !== undefined) {
      if (/&(?!(amp|lt|gt|quot|apos);)/.test(text))
        return `unescaped & in text near ${JSON.stringify(text.slice(0, 40))}`;
      continue;
    }
    if (whole.startsWith("</")) {
      if (stack.pop() !== name) return `mismatched </${name}>`;
    } else if (selfClose !== "/") stack.push(name!);
  }
  if (pos < body.length) return `malformed markup at offset ${pos}: ${JSON.stringify(body.slice(pos, pos + 40))}`;
  if (stack.length > 0) return `unclosed <${stack.at(-1)}>`;
  return "";
}

/** The memory checks a vm image of a RAM counter passes (memory.refused-on-filesystem is skipped on vm). */
const VM_COUNTER_PASSES = [
  "restore-continues",
  "restore-after-node-kill",
  "fork-children",
  "fork-randomness",
  "corrupt-snapshot-refused",
];

/** Fails unless the pretty conformance report `out` shows each of VM_COUNTER_PASSES as PASS. */
export function expectVmCounterPasses(out: string): void {
  for (const id of VM_COUNTER_PASSES) expect(out).toMatch(new RegExp(`^memory\\.${id}\\s+memory\\s+PASS`, "m"));
}
