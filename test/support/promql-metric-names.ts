// The metric names a PromQL expression reads, for the check that every metric an alert rule or a dashboard
// panel uses is one the services export. Not a PromQL parser: strings, label matchers, ranges and label
// lists are blanked out first, then an identifier is a metric name unless it is a keyword, a function
// (followed by `(`), part of a number or duration, or a Grafana variable (`$__rate_interval`).

/** Words of PromQL that read like identifiers but name no metric. */
const KEYWORDS: ReadonlySet<string> = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'and',
  'or',
  'unless',
  'atan2',
  'inf',
  'nan',
]);

/** The metric names `expr` reads, sorted, each once. */
export function promqlMetricNames(expr: string): string[] {
  const names = new Set<string>();
  // A selector may name its metric as a matcher: {__name__="x"}.
  for (const match of expr.matchAll(/__name__\s*=\s*"([^"]+)"/g)) names.add(match[1]!);
  const blanked = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/#[^\n]*/g, ' ')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi, ' ');
  for (const match of blanked.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = match[0];
    const before = blanked[match.index - 1] ?? ' ';
    // 5m, 1.5e3, $__rate_interval, ${datasource}
    if (/[0-9.$]/.test(before) || (before === '{' && blanked[match.index - 2] === '$')) continue;
    if (KEYWORDS.has(word.toLowerCase())) continue;
    const after = blanked.slice(match.index + word.length).trimStart();
    if (after.startsWith('(')) continue;
    names.add(word);
  }
  return [...names].sort();
}
