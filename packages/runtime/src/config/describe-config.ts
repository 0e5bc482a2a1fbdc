import type { z } from 'zod';
import { formatDuration } from './duration.js';
import { envNameForPath } from './env-names.js';
import { OffsetSyncConfigSchema } from './schema.js';
import { describeLeafType, inspectSchema, type InspectedField } from './schema-introspection.js';

/** One row of the configuration reference. */
export interface ConfigFieldDescription {
  /** Dotted path; map keys appear as `<alias>`, array items as `[]` (`clusters.<alias>.sasl.password`). */
  readonly path: string;
  /** Value type: string, integer, boolean, duration, string[], `a | b` for enumerations, ... */
  readonly type: string;
  /** The default as written in a file, or undefined when there is none. */
  readonly default: string | undefined;
  /** Whether the field must be given (when its section is present). */
  readonly required: boolean;
  /** Whether the value is a credential (redacted in logs). */
  readonly secret: boolean;
  /** What the field does. */
  readonly description: string;
  /**
   * The environment variable that sets it (`<ALIAS>` stands for the upper-cased alias), or undefined when
   * the field can only be set as part of an enclosing JSON value (see the enclosing row).
   */
  readonly env: string | undefined;
}

const ALIAS_PLACEHOLDER = '<alias>';

/**
 * Describes every setting of the configuration schema, in schema order: each leaf, plus each array of
 * objects (which the environment sets whole, as JSON) followed by its item fields.
 */
export function describeConfigSchema(schema: z.ZodType = OffsetSyncConfigSchema): ConfigFieldDescription[] {
  const rows: ConfigFieldDescription[] = [];
  walk(schema, [], true, rows);
  return rows;
}

function walk(
  schema: z.ZodType,
  path: string[],
  envAddressable: boolean,
  rows: ConfigFieldDescription[],
): void {
  const field = inspectSchema(schema);
  const { node } = field;
  if (node.type === 'object') {
    for (const [key, child] of Object.entries(node.shape)) walk(child, [...path, key], envAddressable, rows);
    return;
  }
  if (node.type === 'record') {
    const keyMeta = inspectSchema(node.key).meta;
    const placeholder = typeof keyMeta.placeholder === 'string' ? keyMeta.placeholder : ALIAS_PLACEHOLDER;
    walk(node.value, [...path, placeholder], envAddressable, rows);
    return;
  }
  rows.push(describeLeaf(field, path, envAddressable));
  if (node.kind === 'json' && node.element !== undefined) {
    const itemPath = [...path];
    itemPath[itemPath.length - 1] = `${itemPath[itemPath.length - 1] ?? ''}[]`;
    walk(node.element, itemPath, false, rows);
  }
}

function describeLeaf(
  field: InspectedField,
  path: string[],
  envAddressable: boolean,
): ConfigFieldDescription {
  const description = typeof field.meta.description === 'string' ? field.meta.description : '';
  const defaultText = typeof field.meta.defaultText === 'string' ? field.meta.defaultText : undefined;
  return {
    path: path.join('.'),
    type: describeLeafType(field.node),
    default: defaultText ?? (field.hasDefault ? formatDefault(field) : undefined),
    required: !field.optional,
    secret: field.meta.secret === true,
    description,
    env: envAddressable ? envNameForPath(path) : undefined,
  };
}

function formatDefault(field: InspectedField): string {
  const value = field.defaultValue;
  if (field.node.type === 'leaf' && field.node.kind === 'duration' && typeof value === 'number') {
    return formatDuration(value);
  }
  if (Array.isArray(value) && value.length > 0) return value.map((item) => String(item)).join(',');
  return typeof value === 'string' ? value : JSON.stringify(value);
}
