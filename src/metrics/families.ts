import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * Children of a labelled metric, kept by their label values (nested maps, no string built per
 * call): prom-client's `labels()` validates and copies on every call, so the hot paths ask it once
 * per label set and keep what it gave. Label values come from fixed sets (the callers bound them).
 */
export class Children<T> {
  private readonly root = new Map<string | number, unknown>();

  constructor(private readonly make: (values: string[]) => T) {}

  /** The child of one, two or three label values (in the metric's label order). */
  get(a: string | number, b?: string | number, c?: string | number): T {
    let found = this.root.get(a);
    if (b === undefined) return (found as T | undefined) ?? this.made(this.root, a, [a]);
    if (!found) this.root.set(a, (found = new Map()));
    const second = found as Map<string | number, unknown>;
    let inner = second.get(b);
    if (c === undefined) return (inner as T | undefined) ?? this.made(second, b, [a, b]);
    if (!inner) second.set(b, (inner = new Map()));
    const third = inner as Map<string | number, unknown>;
    return (third.get(c) as T | undefined) ?? this.made(third, c, [a, b, c]);
  }

  private made(level: Map<string | number, unknown>, key: string | number, values: (string | number)[]): T {
    const child = this.make(values.map(String));
    level.set(key, child);
    return child;
  }
}

/** Durations in seconds: from a cached GraphQL parse (tens of microseconds) to a slow provider call. */
export const FAST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function histogram(registry: Registry, name: string, help: string, labelNames: readonly string[], buckets = FAST_BUCKETS) {
  const metric = new Histogram({ name, help, labelNames: [...labelNames], buckets, registers: [registry] });
  return { metric, children: new Children((values) => metric.labels(...values)) };
}

export function counter(registry: Registry, name: string, help: string, labelNames: readonly string[]) {
  const metric = new Counter({ name, help, labelNames: [...labelNames], registers: [registry] });
  return { metric, children: new Children((values) => metric.labels(...values)) };
}

export function gauge(registry: Registry, name: string, help: string, labelNames: readonly string[] = []) {
  return new Gauge({ name, help, labelNames: [...labelNames], registers: [registry] });
}
