// Starts the real test bed once for the whole integration run and hands its addresses to the tests
// through vitest's provide/inject. With OFFSETSYNC_TESTBED=reuse it uses the bed that
// `npm run infra -- up` started and leaves it running.
import type { TestProject } from 'vitest/node';
import { acquireTestbed, releaseTestbed } from '@offsetsync/harness';
import type { TestbedInfo } from './testbed.js';

declare module 'vitest' {
  export interface ProvidedContext {
    testbed: TestbedInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const testbed = await acquireTestbed({ log: (line) => console.log(`[testbed] ${line}`) });
  project.provide('testbed', testbed.info);
  return async () => {
    const failed = project.vitest.state.getCountOfFailedTests() > 0;
    const kept = await releaseTestbed(testbed, { keepLogs: failed });
    if (kept) console.log(`[testbed] tests failed: server logs kept in ${kept}`);
  };
}
