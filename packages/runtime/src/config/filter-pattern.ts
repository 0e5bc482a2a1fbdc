// The group and topic filter patterns: one compile function, so the config check compiles a pattern
// exactly as the collector will use it. A pattern valid only without the Unicode flag (`]`, `\-`, `a{`)
// is refused at start-up instead of failing when the collector builds its filter.

/**
 * Flags every filter pattern is compiled with. `u`: group ids and topic names are matched as code
 * points, and the stricter Unicode syntax refuses ambiguous escapes.
 */
const FILTER_PATTERN_FLAGS = 'u';

/** Compiles a group or topic filter pattern; throws a SyntaxError when it is not valid with the flags. */
export function compileFilterPattern(source: string): RegExp {
  return new RegExp(source, FILTER_PATTERN_FLAGS);
}
