// The launcher lives in packages/testbed (the sandbox runs it from the build); tests import it from here.
export {
  readTestbedFile,
  REPO_ROOT,
  startTestbed,
  stopTestbed,
  testbedStateFile,
  writeTestbedFile,
  type TestbedInfo,
} from '@offsetsync/testbed';
