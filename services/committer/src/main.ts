#!/usr/bin/env node
// offsetsync committer: commits translated offsets on its target cluster and reports what it did.
import { runServiceMain } from '@offsetsync/common';
import { Committer } from './committer.js';

await runServiceMain({ role: 'committer', createWorker: (context) => new Committer(context) });
