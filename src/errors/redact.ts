// Secrets never leave in an error. Invariant: every error text the host journals (ERROR records) or
// returns (status details) passes through redactSecrets, which removes every secret this process was
// told about (model API keys, bearer tokens) and anything shaped like a credential (a Bearer value, an
// `sk-…` key, `api_key=…`/`token: …` pairs, a URL's password).
const known = new Set<string>();

/** Secrets shorter than this are not registered (replacing them would mangle ordinary words). */
const MIN_SECRET_CHARS = 8;

/** Registers a secret this process holds, so any error text echoing it is redacted. */
export function registerSecret(secret: string): void {
  if (secret.length >= MIN_SECRET_CHARS) known.add(secret);
}

const REDACTED = "[redacted]";
const PATTERNS: readonly [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`],
  [/\bsk-[A-Za-z0-9_-]{6,}/g, `sk-${REDACTED}`],
  [
    /\b((?:x-)?(?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|passwd)\b["']?\s*[:=]\s*["']?)[^\s"',;&}]+/gi,
    `$1${REDACTED}`,
  ],
  [/(\/\/[^/\s:@]+:)[^@\s/]+@/g, `$1${REDACTED}@`],
];

export function redactSecrets(text: string): string {
  let out = text;
  for (const secret of known) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
