// The translator as a service definition: what `offsetsync translator` and the package's own main run.
import type { ServiceDefinition } from '@offsetsync/runtime';
import { TranslatorWorker } from './translator-worker.js';

export const translatorService: ServiceDefinition = {
  role: 'translator',
  createWorker: (context) => new TranslatorWorker(context),
};
