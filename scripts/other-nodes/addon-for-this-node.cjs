// Preloaded (`node --require`, through NODE_OPTIONS) into every process of a test run on another
// Node release by scripts/test-other-nodes.mjs. Invariant: a process that loads better-sqlite3's
// native addon from any checkout or installed package (`…/better-sqlite3/build/Release/…`) gets the
// same better-sqlite3 version compiled for this Node's ABI (HARNESSHOST_SQLITE_ADDON), because
// node_modules holds the one compiled for the Node that ran `npm ci`. Nothing else is touched.
"use strict";
const { sep } = require("node:path");

const addon = process.env.HARNESSHOST_SQLITE_ADDON;
const suffix = ["better-sqlite3", "build", "Release", "better_sqlite3.node"].join(sep);
if (addon) {
  const dlopen = process.dlopen;
  process.dlopen = function dlopenForThisNode(module, filename, ...rest) {
    return dlopen.call(this, module, String(filename).endsWith(suffix) ? addon : filename, ...rest);
  };
}
