#!/usr/bin/env node
// offsetsync committer: commits translated offsets on its target cluster and reports what it did.
import { runServiceMain } from '@offsetsync/runtime';
import { committerService } from './service.js';

await runServiceMain(committerService);
