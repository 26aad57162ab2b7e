// The Grafana dashboard (infra/grafana/lookup-api.json) draws only metrics the service exposes: a
// renamed metric fails here, not on an operator's empty panel.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { registry } from '../../../services/metrics/metrics';

const dashboard = JSON.parse(readFileSync(new URL('../../../infra/grafana/lookup-api.json', import.meta.url), 'utf8'));

/** Every PromQL expression of the dashboard: panel targets and template queries. */
function expressions(): string[] {
  const fromPanels = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).map((t) => t.expr));
  const fromTemplates = dashboard.templating.list.filter((v: { type: string }) => v.type === 'query').map((v: { query: string }) => v.query);
  return [...fromPanels, ...fromTemplates];
}

/** Metric names in an expression: identifiers followed by `{` (every query here selects by job). */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\b([a-z_][a-z0-9_]*)\{/g)].map((m) => m[1]!);
}

describe('the Grafana dashboard', () => {
  it('uses only metric names the registry exposes (histograms through _bucket, _sum, _count)', async () => {
    const exposed = new Map((await registry.getMetricsAsJSON()).map((m) => [m.name, String(m.type)]));
    const used = new Set(expressions().flatMap(metricNames));
    expect(used.size).toBeGreaterThan(15);
    for (const name of used) {
      const base = name.replace(/_(bucket|sum|count)$/, '');
      const known = exposed.has(name) || (base !== name && exposed.get(base) === 'histogram');
      expect(known, `${name} is not a metric of services/metrics/metrics.ts nor a default metric`).toBe(true);
    }
  });

  it('draws every metric of the service at least once', async () => {
    const used = new Set(expressions().flatMap(metricNames).map((n) => n.replace(/_(bucket|sum|count)$/, '')));
    const ours = (await registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => n.startsWith('lookup_api_'));
    expect(ours.filter((n) => !used.has(n))).toEqual([]);
  });

  it('draws 0, not "No data", for a counter no event has touched yet (a fresh instance exports no labelled series)', () => {
    const countingExpressions = expressions().filter((e) => /\b(rate|increase)\(lookup_api_\w+_(total|count)\{/.test(e) && !e.includes(' / ') && !e.includes('histogram_quantile'));
    expect(countingExpressions.length).toBeGreaterThan(15);
    // `on()`: the 0 only when the left side has no series at all, never beside per-label series.
    for (const expr of countingExpressions) expect(expr, expr).toMatch(/ or on\(\) vector\(0\)$/);
  });

  it('uses no default metric promtool refuses (a gauge named _total)', async () => {
    const exposed = (await registry.getMetricsAsJSON()).filter((m) => String(m.type) !== 'counter' && m.name.endsWith('_total')).map((m) => m.name);
    expect(exposed).toEqual([]);
  });

  it('has unique panel ids and a data source chosen on import', () => {
    const ids = dashboard.panels.map((p: { id: number }) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels) expect(panel.datasource.uid).toBe(`\${datasource}`);
  });
});
