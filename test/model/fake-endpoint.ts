// A scripted OpenAI-compatible endpoint on 127.0.0.1 (port from the OS) for provider tests: each
// request is recorded, then answered by the next scripted reply in order.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

export type Reply = (res: ServerResponse, req: RecordedRequest) => void;

export class FakeEndpoint {
  readonly requests: RecordedRequest[] = [];
  private readonly replies: Reply[] = [];
  private server: Server | undefined;
  baseUrl = "";

  /** Queues replies for the next requests, in order. */
  reply(...replies: Reply[]): this {
    this.replies.push(...replies);
    return this;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      let raw = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (raw += chunk));
      req.on("end", () => {
        const recorded: RecordedRequest = {
          method: req.method ?? "",
          url: req.url ?? "",
          headers: req.headers,
          body: JSON.parse(raw) as Record<string, unknown>,
        };
        this.requests.push(recorded);
        const next = this.replies.shift();
        if (next === undefined) json(500, { error: { message: "no scripted reply" } })(res, recorded);
        else next(res, recorded);
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
}

/** Streams `chunks` as SSE `data:` events; `[DONE]` last unless `done` is false. */
export function sse(chunks: readonly unknown[], opts: { done?: boolean; hang?: boolean; cut?: boolean } = {}): Reply {
  return (res) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(": keep-alive comment\n\n");
    for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    if (opts.hang === true) return; // leave the stream open; the test aborts or closes the server
    if (opts.cut === true) {
      res.socket?.destroy();
      return;
    }
    if (opts.done !== false) res.write("data: [DONE]\n\n");
    res.end();
  };
}

/** Never answers (the connection stays open until the server closes). */
export const silence: Reply = () => undefined;

export function textChunk(content: string, extra: Record<string, unknown> = {}): unknown {
  return {
    id: "c1",
    object: "chat.completion.chunk",
    model: "gpt-test",
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
    ...extra,
  };
}

export function finishChunk(reason: string): unknown {
  return {
    id: "c1",
    object: "chat.completion.chunk",
    model: "gpt-test",
    choices: [{ index: 0, delta: {}, finish_reason: reason }],
  };
}
