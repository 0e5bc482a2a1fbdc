import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { metrics } from '@opentelemetry/api';
import { headers } from 'nats';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ErrorCodes,
  Names,
  OffsetCommitted,
  OffsetTranslated,
  TranslationOutcome,
  type Version,
} from '@offsetsync/contracts';
import { ProblemBoard } from '@offsetsync/runtime';
import { OutcomeCounters } from '../outcome-counters.js';
import { Refusals } from '../refusals.js';
import {
  coalesceBatch,
  foreignLinkRefusal,
  Intake,
  readTranslation as readOnSubject,
  subjectDisagreement,
  subjectRefusal,
  translationOutcomeName,
} from './intake.js';
import type { InboundMessage, WorkItem } from './work-item.js';

const link = { source: 'src', target: 'dst', mode: 'commit' } as const;
const names = new Names('t');
/** The subject a translator of the link publishes the test's default key on. */
const SUBJECT = names.translated('src', 'dst', { group: 'g', topic: 'orders', partition: 0 });
const v = (offsetsPartition: number, offsetsOffset: number): Version => ({ offsetsPartition, offsetsOffset });

function translatedBytes(partial: Partial<OffsetTranslated> = {}): Uint8Array {
  return OffsetTranslated.encode(
    OffsetTranslated.fromPartial({
      sourceCluster: 'src',
      targetCluster: 'dst',
      group: 'g',
      topic: 'orders',
      partition: 0,
      targetOffset: 7,
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
      version: v(1, 2),
      ...partial,
    }),
  ).finish();
}

function message(data: Uint8Array, type: string | undefined = 'OffsetTranslated', subject = SUBJECT) {
  const hdrs = headers();
  if (type !== undefined) hdrs.set('Offsetsync-Event', type);
  const settled: string[] = [];
  const inbound: InboundMessage = {
    subject,
    data,
    headers: hdrs,
    info: { redeliveryCount: 1 },
    ack: () => settled.push('ack'),
    nak: () => settled.push('nak'),
    term: () => settled.push('term'),
  };
  return { inbound, settled };
}

/** readTranslation for the test's link and names. */
const readTranslation = (inbound: InboundMessage, l: typeof link) => readOnSubject(inbound, l, names);

describe('readTranslation', () => {
  it('takes a translation with a target offset to commit, and one without a type header as OffsetTranslated', () => {
    expect(readTranslation(message(translatedBytes()).inbound, link)).toMatchObject({ kind: 'commit' });
    expect(readTranslation(message(translatedBytes(), undefined).inbound, link)).toMatchObject({
      kind: 'commit',
      translation: { targetOffset: 7, version: v(1, 2) },
    });
  });

  it('tells pending and refused translations apart from those to commit', () => {
    const pending = translatedBytes({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
      targetOffset: -1,
    });
    const refused = translatedBytes({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_REFUSED,
      targetOffset: -1,
    });
    expect(readTranslation(message(pending).inbound, link)).toMatchObject({
      kind: 'not-translated',
      outcome: 'not_translated_pending',
    });
    expect(readTranslation(message(refused).inbound, link)).toMatchObject({
      kind: 'not-translated',
      outcome: 'not_translated_refused',
    });
  });

  it('files what it cannot use under a typed code, naming an outcome by its name', () => {
    const read = (data: Uint8Array, type?: string) => readTranslation(message(data, type).inbound, link);
    expect(read(new Uint8Array([0xff, 0xff, 0xff]))).toMatchObject({
      kind: 'malformed',
      error: { code: ErrorCodes.DECODE_ERROR },
    });
    expect(
      read(OffsetCommitted.encode(OffsetCommitted.fromPartial({})).finish(), 'OffsetCommitted'),
    ).toMatchObject({
      kind: 'malformed',
      error: { code: ErrorCodes.DECODE_ERROR, message: 'event type OffsetCommitted' },
    });
    expect(read(translatedBytes(), 'OffsetFromTheFuture')).toMatchObject({
      kind: 'malformed',
      error: { code: ErrorCodes.UNKNOWN_RECORD },
    });
    expect(read(translatedBytes({ targetOffset: -1 }))).toMatchObject({
      error: { message: 'target offset -1' },
    });
    expect(
      read(translatedBytes({ outcome: TranslationOutcome.TRANSLATION_OUTCOME_UNSPECIFIED })),
    ).toMatchObject({
      kind: 'malformed',
      error: {
        code: ErrorCodes.UNKNOWN_RECORD,
        message: 'translation outcome TRANSLATION_OUTCOME_UNSPECIFIED',
      },
    });
    expect(translationOutcomeName(42 as TranslationOutcome)).toBe('unrecognized (42)');
  });

  it("refuses a translation whose body names another link than the subject's, whatever else is wrong with it", () => {
    for (const body of [
      { targetCluster: 'elsewhere' },
      { sourceCluster: 'other' },
      { targetCluster: 'elsewhere', partition: -1, version: undefined },
    ]) {
      expect(readTranslation(message(translatedBytes(body)).inbound, link)).toMatchObject({
        kind: 'refused',
        refusal: 'foreign_link',
        error: { code: ErrorCodes.EVENT_REFUSED },
        disagreement: {
          subject: SUBJECT,
          bodyLink: `${body.sourceCluster ?? 'src'} -> ${body.targetCluster ?? 'dst'}`,
          servedLink: 'src -> dst',
        },
      });
    }
  });

  it("refuses a translation of the link whose body names another key than its subject's", () => {
    const onOtherKey = names.translated('src', 'dst', { group: 'other', topic: 'orders', partition: 3 });
    expect(
      readTranslation(message(translatedBytes(), 'OffsetTranslated', onOtherKey).inbound, link),
    ).toMatchObject({
      kind: 'refused',
      refusal: 'subject_mismatch',
      error: { code: ErrorCodes.EVENT_REFUSED },
      disagreement: { subject: onOtherKey, expectedSubject: SUBJECT, differs: ['group', 'partition'] },
    });
    // A malformed body stays malformed: its subject cannot even be derived.
    expect(
      readTranslation(
        message(translatedBytes({ partition: -1 }), 'OffsetTranslated', onOtherKey).inbound,
        link,
      ),
    ).toMatchObject({ kind: 'malformed' });
  });
});

describe('subject checks', () => {
  const key = fc.record({
    group: fc.string({ maxLength: 12 }),
    topic: fc.string({ minLength: 1, maxLength: 12 }),
    partition: fc.nat(1000),
  });
  const body = (k: { group: string; topic: string; partition: number }) =>
    OffsetTranslated.fromPartial({ sourceCluster: 'src', targetCluster: 'dst', ...k, version: v(0, 1) });

  it('accepts every key on its own subject, and refuses it on the subject of any other key', () => {
    fc.assert(
      fc.property(key, key, (a, b) => {
        expect(subjectRefusal(body(a), names.translated('src', 'dst', a), link, names)).toBeUndefined();
        const same = a.group === b.group && a.topic === b.topic && a.partition === b.partition;
        const refusal = subjectRefusal(body(a), names.translated('src', 'dst', b), link, names);
        expect(refusal === undefined).toBe(same);
        if (!same) expect(refusal?.disagreement.differs).not.toEqual([]);
      }),
    );
  });

  it('names the subject tokens that differ, and a different layout as such', () => {
    expect(subjectDisagreement('p.translated.a.b.g.t.0', 'p.translated.a.c.g.t.1')).toEqual([
      'target',
      'partition',
    ]);
    expect(subjectDisagreement('p.translated.a.b.g', 'p.translated.a.b.g.t.0')).toEqual(['layout']);
  });

  it('refuses a body of another link only', () => {
    expect(foreignLinkRefusal(body({ group: 'g', topic: 't', partition: 0 }), SUBJECT, link)).toBeUndefined();
    expect(
      foreignLinkRefusal(body({ group: 'g', topic: 't', partition: 0 }), SUBJECT, {
        source: 'src',
        target: 'x',
      }),
    ).toMatchObject({ refusal: 'foreign_link' });
  });
});

describe('Intake', () => {
  function intake() {
    const problems = new ProblemBoard(() => 1);
    const counters = new OutcomeCounters(metrics.getMeter('test'));
    const handled: (Version | undefined)[] = [];
    const step = new Intake({
      names: new Names('t'),
      link,
      tracer: new BasicTracerProvider().getTracer('test'),
      logger: pino({ level: 'silent' }),
      counters,
      problems,
      refusals: new Refusals({ logger: pino({ level: 'silent' }), problems, clock: () => 1 }),
      onHandled: (version) => handled.push(version),
    });
    return { step, problems, counters, handled };
  }

  it('settles what has nothing to commit, and files an unusable event until a batch reads cleanly', () => {
    const { step, problems, counters, handled } = intake();
    const garbage = message(new Uint8Array([0xff, 0xff]));
    const pending = message(
      translatedBytes({ outcome: TranslationOutcome.TRANSLATION_OUTCOME_PENDING, targetOffset: -1 }),
    );
    const toCommit = message(translatedBytes());
    const items = step.accept([garbage.inbound, pending.inbound, toCommit.inbound]);

    expect(items.map((i) => i.key)).toEqual([
      new Names('t').linkKey('src', 'dst', { group: 'g', topic: 'orders', partition: 0 }),
    ]);
    expect(toCommit.settled).toEqual([]);
    expect(garbage.settled).toEqual(['term']);
    expect(pending.settled).toEqual(['ack']);
    expect(handled).toEqual([v(1, 2)]);
    expect(counters.snapshot()).toEqual({ malformed: 1, not_translated_pending: 1 });
    expect(problems.list().map((p) => [p.code, p.detail])).toEqual([
      [ErrorCodes.DECODE_ERROR, expect.stringContaining('undecodable OffsetTranslated') as unknown],
    ]);

    step.accept([message(translatedBytes()).inbound]);
    expect(problems.list()).toEqual([]);
  });
});

describe('Intake refusals', () => {
  it('terminates and counts a refused translation without taking its version as progress or clearing unusable ones', () => {
    const problems = new ProblemBoard(() => 1);
    const counters = new OutcomeCounters(metrics.getMeter('test'));
    const handled: (Version | undefined)[] = [];
    const step = new Intake({
      names,
      link,
      tracer: new BasicTracerProvider().getTracer('test'),
      logger: pino({ level: 'silent' }),
      counters,
      problems,
      refusals: new Refusals({ logger: pino({ level: 'silent' }), problems, clock: () => 1 }),
      onHandled: (version) => handled.push(version),
    });
    step.accept([message(new Uint8Array([0xff, 0xff])).inbound]);
    const foreign = message(translatedBytes({ sourceCluster: 'other', version: v(9, 9) }));
    expect(step.accept([foreign.inbound])).toEqual([]);
    expect(foreign.settled).toEqual(['term']);
    expect(handled).toEqual([]);
    expect(counters.snapshot()).toEqual({ malformed: 1, refused_foreign_link: 1 });
    expect(problems.list().map((p) => p.code)).toEqual([ErrorCodes.DECODE_ERROR, ErrorCodes.EVENT_REFUSED]);
  });
});

describe('coalesceBatch', () => {
  it('keeps the newest translation per key by group and reports the others stale, naming the newer version', () => {
    const item = (key: string, group: string, version: Version) => ({ key, group, version }) as WorkItem;
    const older = item('a', 'g1', v(1, 1));
    const newer = item('a', 'g1', v(1, 5));
    const other = item('b', 'g2', v(0, 3));
    const { newestByGroup, supersededByGroup } = coalesceBatch([older, other, newer], 1000);
    expect([...newestByGroup]).toEqual([
      ['g1', [newer]],
      ['g2', [other]],
    ]);
    expect([...supersededByGroup]).toEqual([['g1', [older]]]);
    expect(older.fate).toEqual({
      kind: 'report',
      counted: 'skipped_stale_version',
      report: {
        outcome: 'STALE_VERSION',
        targetOffset: -1,
        detail: 'superseded by version 1:5 in the same batch',
        appliedAtMs: 1000,
      },
    });
    expect(newer.fate).toBeUndefined();
  });
});
