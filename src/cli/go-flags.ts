// Go-style flags for scripts written against the reference's agentctl: its flag package accepts
// `-name value` and `-name=value` for long flags. Invariant: only a single-dash token naming one of
// the command's long options (more than one letter) is rewritten, and never a token in a value
// position, so short options and values that begin with "-" keep their meaning.
import type { ParseArgsConfig } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** `args` with every Go-style `-long[=v]` of a known option spelled `--long[=v]`. */
export function acceptGoStyleFlags(args: readonly string[], options: Options): string[] {
  const out: string[] = [];
  let expectsValue = false;
  for (const arg of args) {
    if (expectsValue) {
      out.push(arg);
      expectsValue = false;
      continue;
    }
    if (arg === "--") {
      out.push(...args.slice(out.length));
      break;
    }
    let token = arg;
    const single = /^-([a-z][a-z0-9-]+)(=.*)?$/.exec(arg);
    if (single?.[1] !== undefined && Object.hasOwn(options, single[1])) token = `-${arg}`;
    const long = /^--([^=]+)(=.*)?$/.exec(token);
    if (long?.[1] !== undefined && long[2] === undefined && options[long[1]]?.type === "string") expectsValue = true;
    out.push(token);
  }
  return out;
}
