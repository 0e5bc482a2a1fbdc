// The committer as a service definition: what `offsetsync committer` and the package's own main run.
import type { ServiceDefinition } from '@offsetsync/runtime';
import { Committer } from './committer.js';

export const committerService: ServiceDefinition = {
  role: 'committer',
  createWorker: (context) => new Committer(context),
};
