// Prints docs/operations.md's limits table from src/limits/table.ts (paste it between the markers;
// test/limits/limits.test.ts fails until the doc matches).
import { limitsTableMarkdown } from "../src/limits/index.js";

process.stdout.write(`${limitsTableMarkdown()}\n`);
