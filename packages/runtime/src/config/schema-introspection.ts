import { z } from 'zod';
import { isDurationSchema } from './duration.js';

/**
 * Reads the structure of the configuration schema so that environment variable names, the configuration
 * reference and redaction all follow the schema instead of hand-written lists.
 */

/** How a leaf setting is written (and parsed from an environment variable). */
export type LeafKind =
  | 'string'
  | 'integer'
  | 'number'
  | 'boolean'
  | 'duration'
  | 'enum'
  | 'literal'
  | 'string-array'
  /** Anything structured that is given whole, as JSON, in the environment (for example `links`). */
  | 'json';

/** The shape of a schema once wrappers (optional, default, transforms...) are peeled off. */
export type SchemaNode =
  | { readonly type: 'object'; readonly shape: Readonly<Record<string, z.ZodType>> }
  | { readonly type: 'record'; readonly key: z.ZodType; readonly value: z.ZodType }
  | {
      readonly type: 'leaf';
      readonly kind: LeafKind;
      readonly values: readonly unknown[];
      readonly element?: z.ZodType;
    };

/** What {@link inspectSchema} learns about one field. */
export interface InspectedField {
  readonly node: SchemaNode;
  /** Whether the field may be left out (it is optional or has a default). */
  readonly optional: boolean;
  /** Whether a default applies when the field is left out. */
  readonly hasDefault: boolean;
  /** The default (only meaningful when `hasDefault`); computed defaults are evaluated. */
  readonly defaultValue: unknown;
  /** Registry metadata merged over every wrapper; the outermost wins. */
  readonly meta: Readonly<Record<string, unknown>>;
}

/** Peels wrappers off `schema` and classifies what is left. */
export function inspectSchema(schema: z.ZodType): InspectedField {
  let current: z.ZodType = schema;
  let optional = false;
  let hasDefault = false;
  let defaultValue: unknown = undefined;
  const meta: Record<string, unknown> = {};

  for (;;) {
    for (const [key, value] of Object.entries(z.globalRegistry.get(current) ?? {})) {
      if (!(key in meta)) meta[key] = value;
    }
    if (isDuration(current)) break;
    if (current instanceof z.ZodOptional) {
      optional = true;
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodDefault) {
      if (!hasDefault) {
        hasDefault = true;
        defaultValue = current.def.defaultValue;
      }
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodPrefault) {
      hasDefault = true;
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodNullable || current instanceof z.ZodReadonly) {
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodPipe) {
      current = current.in as z.ZodType;
    } else {
      break;
    }
  }
  return { node: classify(current), optional: optional || hasDefault, hasDefault, defaultValue, meta };
}

function isDuration(schema: z.ZodType): boolean {
  // `.meta()` and `.describe()` clone a schema and record the original as the clone's parent.
  for (let s: z.ZodType | undefined = schema; s !== undefined; s = s._zod.parent as z.ZodType | undefined) {
    if (isDurationSchema(s)) return true;
  }
  return false;
}

function classify(schema: z.ZodType): SchemaNode {
  const leaf = (kind: LeafKind, values: readonly unknown[] = []): SchemaNode => ({
    type: 'leaf',
    kind,
    values,
  });
  if (isDuration(schema)) return leaf('duration');
  if (schema instanceof z.ZodObject) return { type: 'object', shape: schema.shape };
  if (schema instanceof z.ZodRecord)
    return { type: 'record', key: schema.keyType as z.ZodType, value: schema.valueType as z.ZodType };
  if (schema instanceof z.ZodString) return leaf('string');
  if (schema instanceof z.ZodBoolean) return leaf('boolean');
  if (schema instanceof z.ZodNumber) return leaf(schema.isInt ? 'integer' : 'number');
  if (schema instanceof z.ZodEnum) return leaf('enum', schema.options);
  if (schema instanceof z.ZodLiteral) return leaf('literal', [...(schema.values as ReadonlySet<unknown>)]);
  if (schema instanceof z.ZodArray) {
    const element = schema.element as z.ZodType;
    const inner = inspectSchema(element).node;
    const stringLike = inner.type === 'leaf' && (inner.kind === 'string' || inner.kind === 'enum');
    return { type: 'leaf', kind: stringLike ? 'string-array' : 'json', values: [], element };
  }
  return leaf('json');
}

/** Human-readable type of a leaf, for the configuration reference. */
export function describeLeafType(node: SchemaNode): string {
  if (node.type === 'object') return 'object';
  if (node.type === 'record') return 'map';
  switch (node.kind) {
    case 'enum':
    case 'literal':
      return node.values.map((v) => (typeof v === 'string' ? v : String(v))).join(' | ');
    case 'string-array':
      return 'string[]';
    case 'json':
      return node.element === undefined ? 'json' : 'object[]';
    default:
      return node.kind;
  }
}
