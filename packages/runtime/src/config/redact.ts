import type { z } from 'zod';
import { redactUrlCredentials } from '@offsetsync/jetstream';
import { OffsetSyncConfigSchema, type OffsetSyncConfig } from './schema.js';
import { inspectSchema } from './schema-introspection.js';

/** What secrets are replaced with. */
export const REDACTED = '***';

/**
 * Returns a deep copy of `config` with every value of a field marked secret in the schema (passwords,
 * tokens) replaced by {@link REDACTED}, and credentials written into a URL (`nats://user:secret@host`)
 * too, fit for logs and diagnostics. The input is not modified.
 */
export function redactConfig(config: OffsetSyncConfig): OffsetSyncConfig {
  return redactValue(OffsetSyncConfigSchema, config) as OffsetSyncConfig;
}

function redactValue(schema: z.ZodType | undefined, value: unknown): unknown {
  if (value === undefined || value === null) return value;
  const field = schema === undefined ? undefined : inspectSchema(schema);
  if (field?.meta.secret === true) return REDACTED;
  if (Array.isArray(value)) {
    const element = field?.node.type === 'leaf' ? field.node.element : undefined;
    return value.map((item: unknown) => redactValue(element, item));
  }
  if (typeof value === 'object') {
    const node = field?.node;
    return Object.fromEntries(
      Object.entries(value).map(([key, child]) => {
        const childSchema =
          node?.type === 'object' ? node.shape[key] : node?.type === 'record' ? node.value : undefined;
        return [key, redactValue(childSchema, child)];
      }),
    );
  }
  return typeof value === 'string' ? redactUrlCredentials(value) : value;
}
