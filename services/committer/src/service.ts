// The committer as a service definition: what `offsetsync committer` and the package's own main run.
import type { ServiceDefinition } from '@offsetsync/runtime';
import { CommitterWorker } from './committer-worker.js';

export const committerService: ServiceDefinition = {
  role: 'committer',
  createWorker: (context) => new CommitterWorker(context),
};
