// The CLI entry used by bin/harnesshost.js: loads every command module, then runs main.
import "./commands/all.js";
export { main } from "./main.js";
