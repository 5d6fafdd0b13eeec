// Builds the operator console (docs/console.md) into dist/console, which the HTTP listener serves at
// `/`. Invariant: the output is self-contained — every script and style is a file of the build, no CDN
// and no inline script (the listener's Content-Security-Policy allows same-origin scripts only).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    target: "es2022",
  },
});
