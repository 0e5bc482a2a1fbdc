import { describe, expect, it } from 'vitest';
import { promqlMetricNames } from '../support/promql-metric-names.js';

describe('promqlMetricNames', () => {
  it('finds the metrics of selectors, not functions, keywords, labels, durations or Grafana variables', () => {
    expect(
      promqlMetricNames(
        'histogram_quantile(0.99, sum by (le, source) (rate(lag_ms_bucket{job=~"a|b", x="rate(y)"}[$__rate_interval])))',
      ),
    ).toEqual(['lag_ms_bucket']);
    expect(
      promqlMetricNames(
        '(increase(a_total[15m]) > 0) or ((a_total > 0) unless (a_total offset 15m)) and on (instance) group_left (role) b',
      ),
    ).toEqual(['a_total', 'b']);
    expect(promqlMetricNames('sum without (outcome) (rate(c_total{outcome=~"x"}[5m])) > 1e3')).toEqual([
      'c_total',
    ]);
    expect(promqlMetricNames('x / ignoring(le) y == bool 1')).toEqual(['x', 'y']);
    expect(promqlMetricNames('{__name__="named", job="j"}')).toEqual(['named']);
    expect(promqlMetricNames('max_over_time(g[1h:5m]) - Inf')).toEqual(['g']);
  });
});
