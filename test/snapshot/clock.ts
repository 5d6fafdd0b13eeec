// Test helper: wait for the wall clock to move on, by polling with a deadline (never a guessed sleep).

/** Resolves once Date.now() is past `ms`; throws if that takes longer than five seconds. */
export async function clockPast(ms: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() <= ms) {
    if (Date.now() > deadline) throw new Error(`the clock did not pass ${ms}`);
    await new Promise((r) => setImmediate(r));
  }
}
