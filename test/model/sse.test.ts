// SSE framing yields each event's data once and in order, however the bytes are chunked.
import { describe, expect, it } from "vitest";
import { sseData } from "../../src/model/sse.js";

async function collect(pieces: string[]): Promise<string[]> {
  const encoder = new TextEncoder();
  async function* chunks() {
    for (const piece of pieces) yield encoder.encode(piece);
  }
  const out: string[] = [];
  for await (const data of sseData(chunks())) out.push(data);
  return out;
}

describe("sseData", () => {
  it("reassembles events split across chunks, with CRLF, comments and multi-line data", async () => {
    const stream = ': hello\n\ndata: {"a":1}\r\n\r\nevent: x\ndata: line1\ndata:line2\nid: 7\n\ndata: [DONE]\n\n';
    const whole = await collect([stream]);
    expect(whole).toEqual(['{"a":1}', "line1\nline2", "[DONE]"]);
    const byteByByte = await collect([...stream]);
    expect(byteByByte).toEqual(whole);
  });

  it("keeps multi-byte characters split across chunks intact", async () => {
    const bytes = new TextEncoder().encode("data: héllo 🌍\n\n");
    async function* chunks() {
      for (const b of bytes) yield Uint8Array.of(b);
    }
    const out: string[] = [];
    for await (const data of sseData(chunks())) out.push(data);
    expect(out).toEqual(["héllo 🌍"]);
  });

  it("delivers a final event that lacks the trailing blank line", async () => {
    expect(await collect(["data: a\n\ndata: b"])).toEqual(["a", "b"]);
  });
});
