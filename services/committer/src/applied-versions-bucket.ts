// The applied-versions KV bucket kept in place while the committer runs. The bucket has one replica by
// default, so it can be lost (a JetStream server's storage gone) or deleted by hand; every KV call then
// fails with "stream not found", and without this the committer would retry every event for ever without
// saying why. When a failed call looks like a missing bucket and JetStream confirms the bucket's stream is
// gone, the committer says so and creates the bucket again, as it does at start. That is safe: the
// records are rebuilt by the next commits, and until then offsetsync's commit marks on the target keep
// every partition from moving back to an older version (invariant 7, see apply-decision.ts).
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import {
  JetStreamApiError,
  provisionKvBucket,
  verifyKvBucket,
  type ProvisioningMode,
} from '@offsetsync/jetstream';
import type { Logger } from '@offsetsync/runtime';
import type { JetStreamClient, JetStreamManager } from 'nats';

/** JetStream's error code for a stream that does not exist. */
const STREAM_NOT_FOUND = 10059;
/** How often at most JetStream is asked whether the bucket exists while KV calls keep failing. */
const CHECK_INTERVAL_MS = 1_000;

/**
 * Whether a failed KV call looks like the bucket's stream is gone: JetStream answered "stream not found"
 * to a read, or no stream took a write (NATS status 503, no responders). Follows the causes. Pure.
 */
export function suggestsMissingBucket(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof JetStreamApiError && e.errCode === STREAM_NOT_FOUND) return true;
    if (e instanceof OffsetSyncError && e.details?.status === 503) return true;
  }
  return false;
}

/** Whether nats.js reports a stream as not found. */
function isStreamNotFound(error: unknown): boolean {
  const api = (error as { api_error?: { err_code?: number } } | undefined)?.api_error;
  return api?.err_code === STREAM_NOT_FOUND || (error as { code?: string } | undefined)?.code === '404';
}

/** What the bucket keeper needs. */
export interface AppliedVersionsBucketOptions {
  /** The bucket's name (`names.bucket('applied-versions')`). */
  name: string;
  /** Replicas when the bucket is created (`nats.streamReplicas`). */
  replicas: number;
  js: JetStreamClient;
  jsm: JetStreamManager;
  logger: Logger;
  /** `create`: create the bucket when missing; `verify`: only check it (`nats.provisioning`). Default: `create`. */
  mode?: ProvisioningMode;
  clock?: () => number;
}

/** Creates the applied-versions bucket at start and again when it went missing while running. */
export class AppliedVersionsBucket {
  private readonly clock: () => number;
  private checking: Promise<unknown> | undefined;
  private lastCheck: { atMs: number; error: OffsetSyncError | undefined } | undefined;

  constructor(private readonly options: AppliedVersionsBucketOptions) {
    this.clock = options.clock ?? Date.now;
  }

  get stream(): string {
    return `KV_${this.options.name}`;
  }

  /** Opens the bucket, creating it when missing (start-up); in `verify` mode only checks that it exists. */
  async provision(): Promise<void> {
    if (this.options.mode === 'verify') await verifyKvBucket(this.options.jsm, this.options.name);
    else await provisionKvBucket(this.options.js, this.options.name, this.options.replicas);
  }

  /**
   * The error to report for a failed KV call: `error` itself, unless the bucket turned out to be missing;
   * then a retryable NATS_PROVISIONING error saying so, and whether it was created again. Asks JetStream
   * at most once a second; concurrent callers share one check.
   */
  async explain(error: unknown): Promise<unknown> {
    if (!suggestsMissingBucket(error)) return error;
    const last = this.lastCheck;
    if (last !== undefined && this.clock() - last.atMs < CHECK_INTERVAL_MS) return last.error ?? error;
    this.checking ??= this.check().finally(() => (this.checking = undefined));
    return (await this.checking) ?? error;
  }

  private async check(): Promise<OffsetSyncError | undefined> {
    const { name, logger } = this.options;
    let verdict: OffsetSyncError | undefined;
    try {
      await this.options.jsm.streams.info(this.stream);
      // The bucket is there: the call failed for another reason, reported as it is.
      verdict = undefined;
    } catch (infoError: unknown) {
      if (!isStreamNotFound(infoError)) {
        verdict = undefined;
      } else {
        logger.warn(
          { bucket: name, mode: this.options.mode ?? 'create' },
          "the applied-versions bucket was missing (deleted or lost); creating it again (with nats.provisioning: verify, run `offsetsync provision`). Until its records are rebuilt, offsetsync's commit marks on the target keep every partition from moving back",
        );
        try {
          await this.provision();
          logger.info({ bucket: name }, 'the applied-versions bucket was created again');
          verdict = new OffsetSyncError(`applied-versions bucket ${name} was missing; created it again`, {
            code: ErrorCodes.NATS_PROVISIONING,
            retryable: true,
          });
        } catch (createError: unknown) {
          logger.error(
            { err: createError, bucket: name },
            'the applied-versions bucket is missing and could not be created; events are retried until it exists again (provision it)',
          );
          verdict = new OffsetSyncError(
            `applied-versions bucket ${name} is missing and could not be created`,
            {
              code: ErrorCodes.NATS_PROVISIONING,
              retryable: true,
              cause: createError,
            },
          );
        }
      }
    }
    this.lastCheck = { atMs: this.clock(), error: verdict };
    return verdict;
  }
}
