// Typed post-commit effects (docs/protocol.md §13): define, register, emit, dispatch after commit.
export { defineEffect } from "./define.js";
export type { Effect, EffectDefinition } from "./define.js";
import { EffectDispatcher } from "./dispatcher.js";
export { EffectDispatcher, DEFAULT_EFFECT_TIMEOUT_MS } from "./dispatcher.js";
/** @deprecated 0.1's name of EffectDispatcher ("registry" names the harness registry only, docs/architecture.md). */
export const EffectRegistry = EffectDispatcher;
/** @deprecated 0.1's name of EffectDispatcher. */
export type EffectRegistry = EffectDispatcher;
export type {
  CommittedEffect,
  DispatchReport,
  EffectCounters,
  EffectHandler,
  EffectLogger,
  EffectSnapshot,
} from "./dispatcher.js";
export { EffectBatch } from "./batch.js";
export {
  auditRecord,
  webhookPost,
  metricsCount,
  MetricsCounters,
  registerBuiltinEffects,
  auditHandler,
  webhookHandler,
  WEBHOOK_RETRY,
} from "./builtins.js";
export type { BuiltinEffectOptions } from "./builtins.js";
