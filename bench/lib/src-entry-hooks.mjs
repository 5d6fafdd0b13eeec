// Module resolve hooks (registered by bench/lib/src-entry-points.ts): the package's own entry points,
// `harnesshost` and `harnesshost/<subpath>`, resolve to this tree's TypeScript sources instead of dist/.
// Invariant: the mapping is package.json's `exports` read through each entry's types (`./dist/src/…
// .d.ts`, the compiled sources' declarations; `import` names the bundle) with `./dist/` dropped and
// `.d.ts` as `.ts`,
// so a bench that hosts a docs example (which imports the package by name) runs one copy of the code —
// the checkout's — on the host's side and the harness's, whatever dist/ holds or whether it exists.
import { readFileSync } from "node:fs";

const ROOT = new URL("../../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8"));
const sources = new Map();
for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
  const file = typeof target === "string" ? undefined : target?.types;
  if (typeof file !== "string" || !file.startsWith("./dist/src/") || !file.endsWith(".d.ts")) continue;
  const specifier = subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
  sources.set(specifier, new URL(file.slice("./dist/".length).replace(/\.d\.ts$/, ".ts"), ROOT).href);
}

export async function resolve(specifier, context, next) {
  const source = sources.get(specifier);
  return next(source ?? specifier, context);
}
