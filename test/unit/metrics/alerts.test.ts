// The alert rules (infra/prometheus/alerts.yml) name only metrics the service exposes: a renamed
// metric fails here, not as an alert that can never fire. That each alert fires on its series is
// promtool's to show (alerts.test.yml, run by .ci/run).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { registry } from '../../../services/metrics/metrics';

const rules = readFileSync(new URL('../../../infra/prometheus/alerts.yml', import.meta.url), 'utf8');
const tests = readFileSync(new URL('../../../infra/prometheus/alerts.test.yml', import.meta.url), 'utf8');

describe('the alert rules', () => {
  it('name only metrics of services/metrics/metrics.ts (histograms through _bucket, _sum, _count)', async () => {
    const exposed = new Map((await registry.getMetricsAsJSON()).map((m) => [m.name, String(m.type)]));
    const used = new Set([...rules.matchAll(/\blookup_api_[a-z0-9_]+/g)].map((m) => m[0]));
    expect(used.size).toBeGreaterThan(8);
    for (const name of used) {
      const base = name.replace(/_(bucket|sum|count)$/, '');
      expect(exposed.has(name) || (base !== name && exposed.get(base) === 'histogram'), name).toBe(true);
    }
  });

  it('each alert is tested firing in alerts.test.yml', () => {
    const alerts = [...rules.matchAll(/^\s+- alert: (\S+)$/gm)].map((m) => m[1]!);
    expect(alerts.length).toBeGreaterThanOrEqual(10);
    for (const alert of alerts) {
      // A test of it that expects at least one alert (exp_labels), not only `exp_alerts: []`.
      const fires = new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:(?: &\\w+)?\\n\\s+- exp_labels`).test(tests) || new RegExp(`alertname: ${alert}\\n\\s+exp_alerts: \\*\\w+`).test(tests);
      expect(fires, alert).toBe(true);
    }
  });
});
