import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError, OffsetTranslated, parseCommitMetadata } from '@offsetsync/contracts';
import type { CommitAnswer } from '@offsetsync/kafka';
import { ProblemBoard } from '@offsetsync/runtime';
import { commitEntry, commitFailure, TargetCalls } from './target-calls.js';
import type { TargetCluster } from './work-item.js';

/** How the target refuses a commit for a group with live members (see commit-result.ts). */
const groupActive = () => new OffsetSyncError('refused', { code: ErrorCodes.GROUP_ACTIVE });
const brokerError = () =>
  new OffsetSyncError('commitOffsets failed', {
    code: ErrorCodes.KAFKA_BROKER_ERROR,
    details: { brokerError: 'TOPIC_AUTHORIZATION_FAILED', brokerCode: 29 },
  });

function answer(error?: OffsetSyncError): CommitAnswer {
  return { topic: 't', partition: 0, ...(error === undefined ? {} : { error }) };
}

describe('commitEntry', () => {
  it("commits the record's offset with offsetsync's mark of origin and version", () => {
    const entry = commitEntry('src', OffsetTranslated.fromPartial({ topic: 't', partition: 3 }), {
      version: { offsetsPartition: 4, offsetsOffset: 5 },
      targetOffset: 99,
      appliedAtMs: 0,
      sourceCommitTimestampMs: 0,
    });
    expect(entry).toMatchObject({ topic: 't', partition: 3, offset: 99 });
    expect(parseCommitMetadata(entry.metadata)?.mark).toEqual({
      origin: 'src',
      offsetsPartition: 4,
      offsetsOffset: 5,
    });
  });
});

describe('commitFailure', () => {
  it('is the first error that is not a group with live members', () => {
    expect(commitFailure([answer(), answer(groupActive())])).toBeUndefined();
    const failure = brokerError();
    expect(commitFailure([answer(groupActive()), answer(failure), answer(brokerError())])).toBe(failure);
  });
});

describe('TargetCalls', () => {
  it('files a failed read or commit under its own area and code, and clears it when the call works', async () => {
    const problems = new ProblemBoard(() => 1);
    let fail: { fetch?: Error; commit?: Error; answer?: OffsetSyncError } = {};
    const cluster: TargetCluster = {
      fetchCommittedOffsets: () => (fail.fetch ? Promise.reject(fail.fetch) : Promise.resolve([])),
      partitionBounds: () => Promise.resolve([]),
      describeGroup: () => Promise.resolve({ state: 'Empty', protocolType: '', memberCount: 0 }),
      commitOffsets: () =>
        fail.commit ? Promise.reject(fail.commit) : Promise.resolve([answer(fail.answer)]),
    };
    const warnings: string[] = [];
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) },
    );
    const calls = new TargetCalls(cluster, problems, logger);
    const codes = () => problems.list().map((p) => p.code);

    fail = {
      fetch: new OffsetSyncError('down', { code: ErrorCodes.KAFKA_UNREACHABLE }),
      answer: brokerError(),
    };
    await expect(calls.fetchCommittedOffsets('g', ['t'])).rejects.toThrow('down');
    await calls.commitOffsets('g', []);
    expect(codes()).toEqual([ErrorCodes.KAFKA_UNREACHABLE, ErrorCodes.KAFKA_BROKER_ERROR]);
    // A refused partition is logged once, not on every retry (a thrown error is its caller's to log).
    await calls.commitOffsets('g', []);
    expect(warnings).toEqual(['the target refused to commit partitions of a group; its events are retried']);

    // A group with live members is the group's state, not a problem of the committer.
    fail = { answer: groupActive() };
    await calls.fetchCommittedOffsets('g', ['t']);
    await calls.commitOffsets('g', []);
    expect(codes()).toEqual([]);
    fail = { commit: groupActive() };
    await expect(calls.commitOffsets('g', [])).rejects.toThrow('refused');
    expect(codes()).toEqual([]);

    // An error no one classified is a bug: INTERNAL.
    fail = { commit: new Error('bug') };
    await expect(calls.commitOffsets('g', [])).rejects.toThrow('bug');
    expect(codes()).toEqual([ErrorCodes.INTERNAL]);
  });
});
