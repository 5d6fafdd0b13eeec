// An OpenAI-compatible endpoint in the test process that answers like the echo model and counts every
// provider invocation per prompt text. Invariant: it outlives host crashes, so its counts are the
// ground truth for "at most one extra model call per cut".
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

function lastUserText(body: unknown): string {
  const messages = (body as { messages?: { role?: string; content?: unknown }[] }).messages ?? [];
  const last = messages.at(-1);
  if (typeof last?.content === "string") return last.content;
  if (Array.isArray(last?.content)) {
    return last.content.map((p: unknown) => (typeof p === "object" && p !== null && "text" in p ? String((p as { text: unknown }).text) : "")).join("");
  }
  return "";
}

export class CountingModel {
  /** Invocations per prompt text. */
  readonly calls = new Map<string, number>();
  total = 0;
  baseUrl = "";
  private server: Server | undefined;

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      let raw = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (raw += chunk));
      req.on("end", () => {
        let text: string;
        try {
          text = lastUserText(JSON.parse(raw));
        } catch {
          res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "bad json" } }));
          return;
        }
        this.total += 1;
        this.calls.set(text, (this.calls.get(text) ?? 0) + 1);
        const body = { model: "echo", choices: [{ index: 0, message: { role: "assistant", content: `echo:${text}` }, finish_reason: "stop" }] };
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
