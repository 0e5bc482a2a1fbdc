#!/usr/bin/env node
// offsetsync translator: maps anchored source commits to offsets on its target cluster.
import { runServiceMain } from '@offsetsync/runtime';
import { translatorService } from './service.js';

await runServiceMain(translatorService);
