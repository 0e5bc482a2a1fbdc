import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { ProblemBoard } from '@offsetsync/runtime';
import { RefusalAreas, Refusals } from './refusals.js';

function setup() {
  let now = 1_000;
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const problems = new ProblemBoard(() => now);
  const refusals = new Refusals({
    logger,
    problems,
    clock: () => now,
    logIntervalMs: 60_000,
    holdMs: 600_000,
  });
  const error = (message: string) => new OffsetSyncError(message, { code: ErrorCodes.EVENT_REFUSED });
  return { refusals, problems, lines, error, advance: (ms: number) => (now += ms) };
}

describe('Refusals', () => {
  it('logs a flood of one kind once per interval, saying how many it left out, and each kind on its own', () => {
    const { refusals, lines, error, advance } = setup();
    for (let i = 0; i < 1000; i++) refusals.refused('foreign_link', error(`#${i}`), { subject: `s${i}` });
    refusals.refused('subject_mismatch', error('other kind'), { subject: 'x' });
    expect(lines.map((l) => [l.kind, l.subject])).toEqual([
      ['foreign_link', 's0'],
      ['subject_mismatch', 'x'],
    ]);
    advance(60_000);
    refusals.refused('foreign_link', error('later'), { subject: 'later' });
    expect(lines.at(-1)).toMatchObject({ kind: 'foreign_link', subject: 'later', leftOutOfLog: 999 });
    expect(lines).toHaveLength(3);
  });

  it('keeps a refusal on the heartbeat for the hold period after the last one, then clears it', () => {
    const { refusals, problems, error, advance } = setup();
    refusals.refused('out_of_log_bounds', error('offset 99 above 10'), {});
    refusals.sweep();
    expect(problems.list()).toMatchObject([{ code: 'EVENT_REFUSED', detail: 'offset 99 above 10' }]);
    advance(599_999);
    refusals.sweep();
    expect(problems.list()).toHaveLength(1);
    advance(1);
    refusals.sweep();
    expect(problems.list()).toEqual([]);
  });

  it('files each kind under its own area and logs the first refusal after a quiet spell at once', () => {
    const { refusals, problems, lines, error, advance } = setup();
    const areas = new Set<string>();
    const spy = {
      fail: (area: string) => {
        areas.add(area);
        return true;
      },
      recover: () => undefined,
    };
    const tracked = new Refusals({ logger: pino({ level: 'silent' }), problems: spy, clock: () => 0 });
    tracked.refused('foreign_link', error('a'), {});
    tracked.refused('out_of_log_bounds', error('b'), {});
    expect([...areas]).toEqual([RefusalAreas.foreign_link, RefusalAreas.out_of_log_bounds]);

    refusals.refused('foreign_link', error('first'), {});
    refusals.refused('foreign_link', error('second'), {});
    advance(600_000);
    refusals.sweep();
    expect(problems.list()).toEqual([]);
    expect(lines.at(-1)).toMatchObject({ kind: 'foreign_link', leftOutOfLog: 1 });
    refusals.refused('foreign_link', error('after the quiet spell'), { subject: 'q' });
    expect(lines.at(-1)).toMatchObject({ kind: 'foreign_link', subject: 'q' });
  });
});
