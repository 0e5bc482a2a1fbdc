/** Thrown by a probe to stop waiting at once: the thing waited for can no longer happen. */
export class GiveUp extends Error {
  override name = 'GiveUp';
}

/** Polls `probe` until it returns a value (not undefined) or the deadline passes. Never a fixed sleep. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { timeoutMs: number; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 100;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error: unknown) {
      if (error instanceof GiveUp) throw error;
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const reason = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${what}${reason}`, {
        cause: lastError,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
