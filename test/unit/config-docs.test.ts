// docs/configuration.md is generated from the config schema; this fails when someone changed the schema
// (or the generator) without regenerating it.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeConfigSchema } from '@offsetsync/runtime';
import { CONFIGURATION_DOC, renderConfigurationDoc } from '../../scripts/gen-config-docs.js';

describe('docs/configuration.md', () => {
  it('is up to date with the config schema (run `npm run docs:config` to regenerate it)', async () => {
    const expected = await renderConfigurationDoc();
    const actual = existsSync(CONFIGURATION_DOC) ? readFileSync(CONFIGURATION_DOC, 'utf8') : '';
    expect(
      actual === expected,
      'docs/configuration.md is out of date with the config schema: run `npm run docs:config` and commit the result',
    ).toBe(true);
  });

  it('lists every setting with its environment variable and a description', async () => {
    const doc = await renderConfigurationDoc();
    for (const field of describeConfigSchema()) {
      expect(doc).toContain(`\`${field.path}\``);
      if (field.env !== undefined) expect(doc).toContain(`\`${field.env}\``);
      expect(field.description, field.path).not.toBe('');
    }
  });
});
