#!/usr/bin/env node
// offsetsync translator: maps anchored source commits to offsets on its target cluster.
import { runServiceMain } from '@offsetsync/common';
import { Translator } from './translator.js';

await runServiceMain({ role: 'translator', createWorker: (context) => new Translator(context) });
