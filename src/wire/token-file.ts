// The bearer-token file format, read by `serve --token-file` (every token accepted) and by the CLI's
// own `--token-file` (the first token sent). Invariant: one token per line; blank lines and lines
// starting with # are ignored; surrounding whitespace is never part of a token.

/** Tokens from a file: one per line; blank lines and lines starting with # are ignored. */
export function parseTokenFile(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}
