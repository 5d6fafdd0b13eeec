// The journal's types in one import: the values it stores and answers (values.ts) and its contract, by
// facet (facets.ts). Re-exports only.
export type * from "./values.js";
export type * from "./facets.js";
export { DURABLE_JOURNAL_METHODS } from "./facets.js";
