// What an operation carries for observability from the RPC that started it to the placement,
// controller and runtime code it runs (explicitly, never through async-local storage, so an operation
// with tracing off pays nothing for it). Invariant: optional everywhere — code called without one
// (the in-process CLI, tests, library users) behaves exactly the same, with nothing correlated.
export interface OpContext {
  /** The call's x-request-id (src/server/request-id.ts). */
  readonly requestId?: string;
}

export const NO_CONTEXT: OpContext = {};
