// The in-memory journal against the shared backend contract.
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { journalConformance } from "./conformance.js";

journalConformance("memory", async () => {
  const journal = new MemoryJournal();
  return { journal, cleanup: () => journal.close() };
});
