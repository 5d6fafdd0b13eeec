// Typed post-commit effects (docs/protocol.md §13): define, register, emit, dispatch after commit.
export { defineEffect } from "./define.js";
export type { Effect, EffectDefinition } from "./define.js";
export { EffectRegistry, DEFAULT_EFFECT_TIMEOUT_MS } from "./registry.js";
export type {
  CommittedEffect,
  DispatchReport,
  EffectCounters,
  EffectHandler,
  EffectLogger,
  EffectSnapshot,
} from "./registry.js";
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
