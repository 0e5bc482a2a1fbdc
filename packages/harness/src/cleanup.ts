// Undo steps for a benchmark or a script that starts servers and processes: each step is registered when
// what it undoes has started, and all of them run, last first, once, whether the run ends, fails or is
// interrupted. (Inside a test, what the harness starts is stopped through vitest's onTestFinished
// instead: see test-scoped.ts.)

/**
 * Undo steps, run last registered first, once, whether the run ends, fails or is interrupted. A step
 * registered while the cleanup runs (something that was starting when it began) runs next.
 */
export class Cleanup {
  private readonly steps: Array<{ what: string; run: () => Promise<unknown> }> = [];
  private running: Promise<void> | undefined;
  /** Whether the run failed (so logs are kept); the run sets it to false when it succeeded. */
  failed = true;

  constructor(private readonly say: (line: string) => void) {}

  push(what: string, run: () => Promise<unknown>): void {
    this.steps.push({ what, run });
  }

  /** True once the cleanup has begun: start nothing new. */
  get stopping(): boolean {
    return this.running !== undefined;
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (let step = this.steps.pop(); step !== undefined; step = this.steps.pop()) {
        try {
          await step.run();
        } catch (error: unknown) {
          this.say(`cleanup: ${step.what} failed: ${String(error)}`);
        }
      }
    })();
    return this.running;
  }
}

/**
 * Installs SIGINT/SIGTERM handlers that run the cleanup and exit 130. Returns a function that tells
 * whether a signal arrived: what fails after it is a consequence, not news, and keeps no logs.
 */
export function stopOnSignals(cleanup: Cleanup, say: (line: string) => void): () => boolean {
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      say(`${signal}: stopping what the benchmark started`);
      void cleanup.run().finally(() => process.exit(130));
    });
  }
  return () => interrupted;
}
