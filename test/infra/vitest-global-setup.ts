// Starts the real test bed once for the whole integration run and hands its addresses to the tests
// through vitest's provide/inject. With OFFSETSYNC_TESTBED=reuse it uses the bed that
// `npm run infra -- up` started and leaves it running.
import type { TestProject } from 'vitest/node';
import { readTestbedFile, startTestbed, stopTestbed, testbedStateFile, type TestbedInfo } from './testbed.js';

declare module 'vitest' {
  export interface ProvidedContext {
    testbed: TestbedInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.OFFSETSYNC_TESTBED === 'reuse') {
    const info = await readTestbedFile(testbedStateFile());
    if (!info)
      throw new Error(
        `OFFSETSYNC_TESTBED=reuse but ${testbedStateFile()} does not exist: run 'npm run infra -- up'`,
      );
    project.provide('testbed', info);
    return () => Promise.resolve();
  }
  const info = await startTestbed({ log: (line) => console.log(`[testbed] ${line}`) });
  project.provide('testbed', info);
  return async () => {
    const failed = project.vitest.state.getCountOfFailedTests() > 0;
    const kept = await stopTestbed(info, { keepLogs: failed });
    if (kept) console.log(`[testbed] tests failed: server logs kept in ${kept}`);
  };
}
