// The client's bearer-token file, read by the CLI's `--token-file` (the server's own file, with
// digests and principals, is src/server/principals.ts). Invariants: one token per line, optionally
// labelled `TOKEN principal=NAME`; blank lines and lines starting with # are ignored; surrounding
// whitespace is never part of a token; `FILE#NAME` picks the line labelled NAME, plain `FILE` the first.

/** Tokens from a file: one per line (the label, if any, dropped); blank lines and # comments ignored. */
export function parseTokenFile(text: string): string[] {
  return tokenLines(text).map((l) => l.token);
}

function tokenLines(text: string): { token: string; principal: string | undefined }[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const [token = "", label] = l.split(/\s+/);
      return { token, principal: label?.startsWith("principal=") ? label.slice("principal=".length) : undefined };
    });
}

/** The token to send: the line labelled `principal` when one is named, else the first; undefined when none. */
export function pickToken(text: string, principal?: string): string | undefined {
  const lines = tokenLines(text);
  if (principal === undefined) return lines[0]?.token;
  return lines.find((l) => l.principal === principal)?.token;
}
