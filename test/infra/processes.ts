// The launcher lives in packages/testbed (the sandbox runs it from the build); tests import it from here.
export { isAlive, stopProcess } from '@offsetsync/testbed';
