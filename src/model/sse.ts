// Server-sent-events framing for streamed chat completions. Invariant: yields the data of each event
// (its `data:` lines joined by "\n") exactly once, in arrival order, however the bytes are split into
// chunks; comments and other fields are ignored. Lines end in LF or CRLF.
export async function* sseData(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8");
  let buffer = "";
  let data: string[] = [];
  const takeLine = function* (line: string): Generator<string> {
    if (line === "") {
      if (data.length > 0) yield data.join("\n");
      data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== "data") return;
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    data.push(value);
  };
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline !== -1) {
      const raw = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      yield* takeLine(raw.endsWith("\r") ? raw.slice(0, -1) : raw);
      newline = buffer.indexOf("\n");
    }
  }
  buffer += decoder.decode();
  // Be lenient with servers that omit the final blank line: deliver what is pending.
  if (buffer !== "") yield* takeLine(buffer.endsWith("\r") ? buffer.slice(0, -1) : buffer);
  if (data.length > 0) yield data.join("\n");
}
