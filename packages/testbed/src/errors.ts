/** What went wrong, stable for callers to branch on (never the message text). */
export type TestbedErrorCode =
  /** The options asked for something the test bed cannot set up (a reserved user, an unsafe password). */
  | 'INVALID_OPTIONS'
  /** A helper program (openssl, the Kafka storage tool) exited with an error. */
  | 'COMMAND_FAILED';

/** A failure of the test bed launcher itself, as opposed to one of the servers it starts. */
export class TestbedError extends Error {
  override name = 'TestbedError';
  readonly code: TestbedErrorCode;

  constructor(code: TestbedErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.code = code;
  }
}
