import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { counter, FAST_BUCKETS, histogram } from '../../src/metrics/families.js';

/**
 * The service's own counters and histograms (src/metrics/families.ts) record in place and give
 * prom-client's registry their values at scrape time. What a scrape shows must be what
 * prom-client's own Counter and Histogram would show for the same observations: the same samples
 * (names, label sets, values), the same HELP and TYPE lines.
 */

/** The samples of an exposition as `name{sorted labels} value` lines, and its HELP/TYPE lines. */
function samples(text: string): string[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      if (line.startsWith('#')) return line;
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not an exposition line: ${line}`);
      const labels = [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => `${k}="${v}"`).sort();
      return `${match[1]}{${labels.join(',')}} ${match[3]}`;
    })
    .sort();
}

const OBSERVATIONS: [string, string, number][] = [
  ['GET', '/channel/v1/properties/{id}', 0.0004],
  ['GET', '/channel/v1/properties/{id}', 0.0005],
  ['GET', '/channel/v1/properties/{id}', 0.0031],
  ['POST', '/channel/v1/bookings', 0.42],
  ['POST', '/channel/v1/bookings', 12],
  ['GET', 'unmatched', 0],
];

describe("the service's metric families", () => {
  it('a labelled histogram shows the buckets, sum and count prom-client would', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const family = histogram(ours, 'http_seconds', 'Requests', ['method', 'route']);
    const reference = new Histogram({ name: 'http_seconds', help: 'Requests', labelNames: ['method', 'route'], buckets: FAST_BUCKETS, registers: [theirs] });
    for (const [method, route, seconds] of OBSERVATIONS) {
      family.children.get(method, route).observe(seconds);
      reference.labels(method, route).observe(seconds);
    }
    expect(samples(await ours.metrics())).toEqual(samples(await theirs.metrics()));
    expect(await ours.metrics()).toContain('http_seconds_bucket{method="POST",route="/channel/v1/bookings",le="+Inf"} 2');
  });

  it('a histogram without labels shows its zeros before anything is observed, then its observations', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const family = histogram(ours, 'parse_seconds', 'Parses', []);
    const reference = new Histogram({ name: 'parse_seconds', help: 'Parses', buckets: FAST_BUCKETS, registers: [theirs] });
    expect(samples(await ours.metrics())).toEqual(samples(await theirs.metrics()));
    family.metric.observe(0.0002);
    reference.observe(0.0002);
    expect(samples(await ours.metrics())).toEqual(samples(await theirs.metrics()));
  });

  it('counters, with labels and without, show what prom-client would; reset goes back to zero', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const labelled = counter(ours, 'operations_total', 'Operations', ['operation', 'outcome']);
    const single = counter(ours, 'errors_total', 'Errors', []);
    const referenceLabelled = new Counter({ name: 'operations_total', help: 'Operations', labelNames: ['operation', 'outcome'], registers: [theirs] });
    const referenceSingle = new Counter({ name: 'errors_total', help: 'Errors', registers: [theirs] });
    expect(samples(await ours.metrics())).toEqual(samples(await theirs.metrics()));
    for (const [operation, outcome] of [['Book', 'ok'], ['Book', 'ok'], ['Book', 'client_error'], ['other', 'ok']] as const) {
      labelled.children.get(operation, outcome).inc();
      referenceLabelled.labels(operation, outcome).inc();
    }
    single.metric.inc();
    referenceSingle.inc();
    expect(samples(await ours.metrics())).toEqual(samples(await theirs.metrics()));
    expect(await ours.metrics()).toContain('operations_total{operation="Book",outcome="ok"} 2');
    ours.resetMetrics();
    expect(samples(await ours.metrics()).filter((line) => !line.startsWith('#')).every((line) => line.endsWith(' 0'))).toBe(true);
  });

  it('a merged registry (with Node\'s default metrics, as GET /metrics serves) shows them too', async () => {
    const ours = new Registry();
    histogram(ours, 'http_seconds', 'Requests', ['method']).children.get('GET').observe(0.2);
    const served = Registry.merge([ours, new Registry()]);
    expect(await served.metrics()).toContain('http_seconds_count{method="GET"} 1');
  });

  it('a child is asked for with as many label values as its family has labels', () => {
    const family = histogram(new Registry(), 'x_seconds', 'X', ['a', 'b']);
    expect(() => family.children.get('only-one')).toThrow(/takes the labels a, b/);
    expect(() => family.metric).toThrow(/takes the labels a, b/);
  });
});
