#!/usr/bin/env node
// offsetsync collector: reads the source cluster's __consumer_offsets and publishes anchored events.
import { runServiceMain } from '@offsetsync/runtime';
import { collectorService } from './service.js';

await runServiceMain(collectorService);
