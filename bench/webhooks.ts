/**
 * The webhook scenario of `npm run bench`: booking events delivered end to end to a webhook
 * receiver, in two parts against one service process:
 *
 * 1. bookings → webhooks: virtual users make real v1 bookings (bench/flow.ts) while the outbox
 *    dispatcher delivers their events (2 per confirmed booking) to one webhook subscribed to every
 *    event type; per event, the latency from its occurred_at to its arrival at the receiver;
 * 2. outbox backlog drain: `backlog` events committed into the outbox at once (one INSERT … SELECT,
 *    one commit, one NOTIFY; copies of real events), then the time until the receiver has them
 *    all: the dispatcher's own capacity, with no booking traffic competing for the machine.
 *
 * The receiver (bench/receiver.ts) and the service (bench/serve-service.ts) are processes of their
 * own; the virtual users run in the orchestrating process.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { ask, profiled, startChild, stopChild, wallNow } from './children.js';
import { postgresCpu, type PostgresCpu } from './cpu.js';
import { runFlows, type FlowResult } from './flow.js';

export interface WebhookBenchOptions {
  /** What the service runs on, for the report (e.g. "PostgreSQL + Redis"). */
  label: string;
  /** BENCH_SERVICE_ENV of serve-service.ts. */
  serviceEnv: Record<string, string>;
  /** Opening balance of the channel (production pays bookings from it). */
  balance?: bigint;
  users: number;
  warmupSeconds: number;
  seconds: number;
  properties: number;
  /** Events written into the outbox at once for the drain. */
  backlog: number;
  /** Webhooks subscribed to every event (each event is delivered to each); default 1. */
  endpoints?: number;
  /** How long to wait for the receiver to have every event of a part. */
  timeoutMs: number;
}

export interface Percentiles {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface WebhookBenchResult {
  label: string;
  endpoints: number;
  env: Record<string, string>;
  concurrency: number;
  pollIntervalMs: number;
  flow: {
    flows: FlowResult;
    /** Events the bookings of the measured window wrote (outbox rows). */
    events: number;
    /** events × endpoints. */
    deliveries: number;
    /** Distinct deliveries that arrived. */
    delivered: number;
    /** Window from the first flow started to the last booking answered, s. */
    bookingSeconds: number;
    /** Events written per second over that window. */
    producedPerSecond: number;
    /** Deliveries per second, from the window's start to the last arrival. */
    deliveredPerSecond: number;
    /** Last booking answered → last event arrived, ms. */
    tailMs: number;
    /** occurred_at → arrival, ms. */
    latency: Percentiles;
    stages: Stages;
    /** Service CPU µs from the first booking to the last arrival ÷ events delivered (the bookings' own work included). */
    cpuUsPerEvent: number;
    /** PostgreSQL's CPU over the same window (PostgreSQL runs only). */
    postgres: PostgresCpu | null;
  };
  drain: {
    events: number;
    deliveries: number;
    delivered: number;
    /** Commit → last arrival, s. */
    seconds: number;
    perSecond: number;
    /** Commit → first arrival, ms. */
    firstMs: number;
    /** CPU time of the service process ÷ wall time during the drain (1 = one core busy). */
    cpuShare: number;
    /** Service CPU µs over the drain ÷ deliveries received. */
    cpuUsPerDelivery: number;
    /** PostgreSQL's CPU over the drain (PostgreSQL runs only). */
    postgres: PostgresCpu | null;
    /** Commit → arrival, ms. */
    latency: Percentiles;
    stages: Stages;
    /** Requests of the drain whose Standard Webhooks signature verified, and those that did not. */
    verified: number;
    badSignatures: number;
  };
  receiver: { received: number; duplicates: number; verified: number; badSignatures: number; badBodies: number };
  deliveries: { status: string; n: number; attempts: number }[];
  /** PostgreSQL only: what the service's sessions were doing during the drain (pg_stat_activity samples). */
  sessions: SessionSamples | null;
  problems: string[];
}

/** From the database: occurred_at → fanned out (published_at), and → first attempt started (ms). */
export interface Stages {
  n: number;
  fan_out_p50: number | null;
  fan_out_p99: number | null;
  to_send_p50: number | null;
  to_send_p99: number | null;
}

export interface SessionSamples {
  samples: number;
  /** Average number of the service's sessions in each state, most frequent first: "state | wait | statement". */
  states: { what: string; sessions: number }[];
}

/**
 * Samples pg_stat_activity every 20 ms for the sessions of one application_name (the service's,
 * set in its DATABASE_URL) until stopped: how many were running, waiting on a lock (and in which
 * statement), or idle in a transaction while the service had not yet sent the next statement.
 */
function sampleSessions(url: string, applicationName: string): { stop(): Promise<SessionSamples> } {
  const client = new pg.Client({ connectionString: url });
  const counts = new Map<string, number>();
  let samples = 0;
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query<{ state: string; wait: string; statement: string }>(
        `SELECT state, coalesce(wait_event_type || ':' || wait_event, 'no wait') AS wait,
           left(regexp_replace(regexp_replace(query, '"[a-z0-9_]+"\\.', '', 'g'), '\\s+', ' ', 'g'), 72) AS statement
         FROM pg_stat_activity WHERE application_name = $1`,
        [applicationName],
      );
      samples++;
      for (const r of rows) {
        const what = r.state === 'idle' ? 'idle' : `${r.state} | ${r.wait} | ${r.statement.trim()}`;
        counts.set(what, (counts.get(what) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop.finally(() => client.end());
      const states = [...counts]
        .map(([what, n]) => ({ what, sessions: n / Math.max(1, samples) }))
        .sort((a, b) => b.sessions - a.sessions);
      return { samples, states };
    },
  };
}

interface ReceiverReport {
  arrivals: [number, number][];
  received: number;
  unique: number;
  duplicates: number;
  verified: number;
  badSignatures: number;
  badBodies: number;
  types: Record<string, number>;
}

export interface Cpu {
  user: number;
  system: number;
  at: number;
}

/** CPU time used between two `cpu` answers ÷ the wall time between them (1 = one core). */
export function cpuShare(a: Cpu, b: Cpu): number {
  return (b.user - a.user + b.system - a.system) / 1000 / (b.at - a.at);
}

/** CPU µs used between two `cpu` answers. */
export function cpuUsed(a: Cpu, b: Cpu): number {
  return b.user - a.user + b.system - a.system;
}

export function percentiles(values: number[]): Percentiles {
  if (!values.length) return { count: 0, p50: 0, p99: 0, max: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]! };
}

/** Creates the webhook: POST /channel/v1/webhooks, or the GraphQL mutation where that route is not there. */
async function createWebhook(port: number, apiKey: string, url: string): Promise<{ id: string; secret: string; via: string }> {
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  const rest = await fetch(`http://127.0.0.1:${port}/channel/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url }) });
  const restBody = (await rest.json()) as { data?: { id: string; secret: string } };
  if (rest.status === 201 && restBody.data) return { id: restBody.data.id, secret: restBody.data.secret, via: 'POST /channel/v1/webhooks' };
  if (rest.status !== 404) throw new Error(`POST /channel/v1/webhooks answered ${rest.status}: ${JSON.stringify(restBody).slice(0, 300)}`);
  const gql = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      query: 'mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { secret webhook { id } } }',
      variables: { input: { url } },
    }),
  });
  const body = (await gql.json()) as { data?: { createWebhook?: { secret: string; webhook: { id: string } } }; errors?: unknown };
  const created = body.data?.createWebhook;
  if (!created) throw new Error(`createWebhook failed: ${JSON.stringify(body).slice(0, 300)}`);
  return { id: created.webhook.id, secret: created.secret, via: 'GraphQL createWebhook' };
}

/** Waits until the receiver has `expected` distinct deliveries; resolves false at the deadline. */
async function receiverHas(receiver: ChildProcess, expected: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { unique } = await ask<{ unique: number }>(receiver, { cmd: 'count' });
    if (unique >= expected) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function outboxTotal(service: ChildProcess): Promise<number> {
  return (await ask<{ total: number }>(service, { cmd: 'outboxCount' })).total;
}

export async function runWebhookBench(options: WebhookBenchOptions): Promise<WebhookBenchResult> {
  const problems: string[] = [];
  const env: Record<string, string> = {
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    ...options.serviceEnv,
  };
  // On PostgreSQL the service's sessions carry an application_name of their own, for the sampler.
  const databaseUrl = env.DATABASE_URL;
  const applicationName = databaseUrl ? `bench_webhooks_${process.pid}_${Date.now()}` : undefined;
  const serviceEnv = { ...env };
  if (databaseUrl && applicationName) {
    const url = new URL(databaseUrl);
    url.searchParams.set('application_name', applicationName);
    serviceEnv.DATABASE_URL = url.toString();
  }
  const receiver = await startChild<{ port: number }>('receiver.ts');
  try {
    const service = await startChild<{ port: number; apiKey: string; channelId: string }>('serve-service.ts', {
      env: {
        BENCH_SERVICE_ENV: JSON.stringify(serviceEnv),
        ...(options.balance ? { BENCH_CHANNEL_BALANCE: String(options.balance) } : {}),
      },
    });
    try {
      const { port, apiKey } = service.info;
      const endpoints = options.endpoints ?? 1;
      const secrets: string[] = [];
      for (let i = 0; i < endpoints; i++) {
        const hook = await createWebhook(port, apiKey, `http://127.0.0.1:${receiver.info.port}/hook/${i}`);
        secrets.push(hook.secret);
        if (i === 0) process.stderr.write(`  webhook created through ${hook.via}\n`);
      }
      await ask(receiver.child, { cmd: 'secrets', secrets });
      const flowOptions = { port, apiKey, users: options.users, properties: options.properties };

      // Warm-up: bookings and their deliveries, unrecorded.
      let nextFlow = 0;
      if (options.warmupSeconds > 0) {
        const warm = await runFlows({ ...flowOptions, warmupSeconds: 0, seconds: options.warmupSeconds });
        nextFlow = warm.nextFlow;
        if (!(await receiverHas(receiver.child, (await outboxTotal(service.child)) * endpoints, options.timeoutMs))) {
          problems.push('the warm-up events did not all arrive');
        }
      }

      // 1. bookings → webhooks.
      await ask(receiver.child, { cmd: 'reset' });
      const before = await outboxTotal(service.child);
      const flowPg = databaseUrl && applicationName ? postgresCpu(databaseUrl, applicationName) : undefined;
      await flowPg?.start();
      const flowCpu0 = await ask<Cpu>(service.child, { cmd: 'cpu' });
      const started = wallNow();
      const flows = await profiled(service.child, `webhooks bookings ${options.label}`, () =>
        runFlows({ ...flowOptions, warmupSeconds: 0, seconds: options.seconds, firstFlow: nextFlow }),
      );
      const bookingsDone = wallNow();
      const events = (await outboxTotal(service.child)) - before;
      if (!(await receiverHas(receiver.child, events * endpoints, options.timeoutMs))) {
        problems.push(`bookings → webhooks: not every event arrived within ${options.timeoutMs / 1000} s`);
      }
      const flowCpu1 = await ask<Cpu>(service.child, { cmd: 'cpu' });
      const flowPostgres = (await flowPg?.stop()) ?? null;
      const f = await ask<ReceiverReport>(receiver.child, { cmd: 'report' });
      const lastFlowArrival = f.arrivals.reduce((m, [a]) => Math.max(m, a), 0);
      const flowPart = {
        flows,
        events,
        deliveries: events * endpoints,
        delivered: f.unique,
        bookingSeconds: (bookingsDone - started) / 1000,
        producedPerSecond: events / ((bookingsDone - started) / 1000),
        deliveredPerSecond: f.unique / ((lastFlowArrival - started) / 1000),
        tailMs: lastFlowArrival - bookingsDone,
        latency: percentiles(f.arrivals.map(([a, o]) => a - o)),
        cpuUsPerEvent: cpuUsed(flowCpu0, flowCpu1) / Math.max(1, f.unique),
        postgres: flowPostgres,
      };
      const stepFailures = Object.entries(flows.steps).filter(([, s]) => s.failures.size);
      if (stepFailures.length) {
        problems.push(`booking steps failed: ${stepFailures.map(([step, s]) => `${step} ${[...s.failures].map(([k, n]) => `${k}: ${n}`).join(', ')}`).join('; ')}`);
      }

      // 2. Outbox backlog drain.
      const drainStarted = wallNow();
      await ask(receiver.child, { cmd: 'reset' });
      const sampler = databaseUrl && applicationName ? sampleSessions(databaseUrl, applicationName) : undefined;
      const drainPg = databaseUrl && applicationName ? postgresCpu(databaseUrl, applicationName) : undefined;
      await drainPg?.start();
      const cpu0 = await ask<Cpu>(service.child, { cmd: 'cpu' });
      const { committedAt } = await profiled(service.child, `webhooks drain ${options.label}`, async () => {
        const inserted = await ask<{ inserted: number; committedAt: number }>(service.child, { cmd: 'outbox', count: options.backlog });
        if (!(await receiverHas(receiver.child, options.backlog * endpoints, options.timeoutMs))) {
          problems.push(`backlog drain: not every event arrived within ${options.timeoutMs / 1000} s`);
        }
        return inserted;
      });
      const cpu1 = await ask<Cpu>(service.child, { cmd: 'cpu' });
      const drainPostgres = (await drainPg?.stop()) ?? null;
      const sessions = (await sampler?.stop()) ?? null;
      const d = await ask<ReceiverReport>(receiver.child, { cmd: 'report' });
      const fromCommit = d.arrivals.map(([a]) => a - committedAt);
      const lastDrain = fromCommit.reduce((m, v) => Math.max(m, v), 0);
      const drainPart = {
        events: options.backlog,
        deliveries: options.backlog * endpoints,
        delivered: d.unique,
        seconds: lastDrain / 1000,
        perSecond: d.unique / (lastDrain / 1000),
        firstMs: fromCommit.reduce((m, v) => Math.min(m, v), Number.POSITIVE_INFINITY),
        cpuShare: cpuShare(cpu0, cpu1),
        cpuUsPerDelivery: cpuUsed(cpu0, cpu1) / Math.max(1, d.unique),
        postgres: drainPostgres,
        latency: percentiles(fromCommit),
        verified: d.verified,
        badSignatures: d.badSignatures,
      };
      if (d.verified < d.unique) problems.push(`backlog drain: ${d.unique - d.verified} deliveries without a valid signature`);

      // The last attempts may still be recording their outcome: wait (briefly) for none to be pending.
      let deliveries: { status: string; n: number; attempts: number }[] = [];
      for (const deadline = Date.now() + 10_000; ; ) {
        deliveries = await ask(service.child, { cmd: 'deliveries' });
        if (!deliveries.some((r) => r.status === 'pending') || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const notDelivered = deliveries.filter((r) => r.status !== 'delivered');
      if (notDelivered.length) problems.push(`deliveries not delivered: ${notDelivered.map((r) => `${r.status} ${r.n}`).join(', ')}`);
      const flowStages = await ask<Stages>(service.child, { cmd: 'stages', since: started, until: drainStarted });
      const drainStages = await ask<Stages>(service.child, { cmd: 'stages', since: drainStarted, until: wallNow() + 60_000 });
      const duplicates = f.duplicates + d.duplicates;
      const badSignatures = f.badSignatures + d.badSignatures;
      const badBodies = f.badBodies + d.badBodies;
      if (badSignatures) problems.push(`${badSignatures} deliveries with a signature that does not verify`);
      if (badBodies) problems.push(`${badBodies} deliveries with an unexpected body`);
      return {
        label: options.label,
        endpoints,
        env,
        concurrency: Number(env.WEBHOOK_CONCURRENCY ?? 50),
        pollIntervalMs: Number(env.EVENTS_POLL_INTERVAL_MS ?? 1000),
        flow: { ...flowPart, stages: flowStages },
        drain: { ...drainPart, stages: drainStages },
        receiver: { received: f.received + d.received, duplicates, verified: f.verified + d.verified, badSignatures, badBodies },
        deliveries,
        sessions,
        problems,
      };
    } finally {
      await stopChild(service.child);
    }
  } finally {
    await stopChild(receiver.child);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function num(value: number, digits = 0): string {
  return Number.isFinite(value) ? value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';
}

/** PostgreSQL's CPU per unit, "sessions / all processes"; empty without PostgreSQL. */
export function pgPer(cpu: PostgresCpu | null, units: number): string {
  if (!cpu) return '';
  const per = (v: number | null) => (v === null || units <= 0 ? 'n/a' : num(v / units));
  return `${per(cpu.sessions)} / ${per(cpu.server)}`;
}

/** The README block of the webhook scenario. */
export function webhookSection(results: WebhookBenchResult[]): string {
  const first = results[0];
  if (!first) return '';
  const f0 = first.flow.flows;
  const lines = [
    `One webhook subscribed to every event type; receiver \`bench/receiver.ts\` (answers 200 at once, then verifies the ` +
      `Standard Webhooks signature of every delivery). Dispatcher defaults: WEBHOOK_CONCURRENCY ${first.concurrency}, ` +
      `EVENTS_POLL_INTERVAL_MS ${first.pollIntervalMs} (woken by NOTIFY on commit). Bookings: ${f0.users} virtual users for ` +
      `${f0.seconds} s, after an unrecorded warm-up whose events are delivered first. Backlog: ${num(first.drain.events)} events ` +
      'committed in one statement.',
    '',
    '**Bookings → webhooks** (events written by real v1 bookings while the dispatcher delivers them):',
    '',
    '| Service | Bookings/s | Events | Delivered | Events/s written | Events/s delivered | occurred_at → received p50 ms | p99 ms | max ms | last booking → last delivery ms | service CPU µs/event | PostgreSQL CPU µs/event (service\'s sessions / all) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map((r) => {
      const f = r.flow;
      return (
        `| ${r.label} | ${num(f.flows.flowsPerSecond, 1)} | ${num(f.events)} | ${num(f.delivered)} | ${num(f.producedPerSecond, 1)} | ` +
        `${num(f.deliveredPerSecond, 1)} | ${num(f.latency.p50, 1)} | ${num(f.latency.p99, 1)} | ${num(f.latency.max, 1)} | ${num(f.tailMs, 1)} | ` +
        `${num(f.cpuUsPerEvent)} | ${pgPer(f.postgres, f.delivered)} |`
      );
    }),
    '',
    '**Outbox backlog drain** (the events committed at once, no other traffic; latencies from the commit; one delivery per event and webhook, ' +
      'each signature checked by the receiver):',
    '',
    '| Service | Events | Deliveries received | Deliveries/s | valid signatures | commit → first delivery ms | commit → received p50 ms | p99 ms | max ms (drain time) | service CPU (cores) | service CPU µs/delivery | PostgreSQL CPU µs/delivery (service\'s sessions / all) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map((r) => {
      const d = r.drain;
      return (
        `| ${r.label} | ${num(d.events)} | ${num(d.delivered)} | ${num(d.perSecond, 1)} | ${num(d.verified)} | ${num(d.firstMs, 1)} | ${num(d.latency.p50, 1)} | ` +
        `${num(d.latency.p99, 1)} | ${num(d.latency.max, 1)} | ${num(d.cpuShare, 2)} | ${num(d.cpuUsPerDelivery)} | ${pgPer(d.postgres, d.delivered)} |`
      );
    }),
    '',
    'Where the time goes, from the database (ms; timestamps of millisecond precision): occurred_at → fanned out (the ' +
      "event's published_at: the clock read when the fan-out that wrote its delivery began), then → the first attempt started (the claim, " +
      'and the wait for a free slot of WEBHOOK_CONCURRENCY); the rest of "received" is the POST itself.',
    '',
    '| Service | Part | Deliveries | occurred_at → fanned out p50 | p99 | fanned out → attempt started p50 | p99 |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...results.flatMap((r) =>
      ([['bookings → webhooks', r.flow.stages], ['backlog drain', r.drain.stages]] as const).map(
        ([part, st]) =>
          `| ${r.label} | ${part} | ${num(st.n)} | ${num(st.fan_out_p50 ?? Number.NaN, 1)} | ${num(st.fan_out_p99 ?? Number.NaN, 1)} | ` +
          `${num(st.to_send_p50 ?? Number.NaN, 1)} | ${num(st.to_send_p99 ?? Number.NaN, 1)} |`,
      ),
    ),
    '',
    ...results.map((r) => {
      const statuses = r.deliveries.map((d) => `${d.status} ${num(d.n)}`).join(', ');
      const attempts = r.deliveries.reduce((n, d) => n + d.attempts, 0);
      const deliveries = r.deliveries.reduce((n, d) => n + d.n, 0);
      return (
        `${r.label}: ${num(r.receiver.received)} requests received (warm-up excluded), ${num(r.receiver.verified)} with a valid signature, ` +
        `${r.receiver.badSignatures} invalid, ${r.receiver.duplicates} duplicates; deliveries in the database (warm-up included): ${statuses}, ` +
        `${num(attempts)} attempts for ${num(deliveries)} deliveries.`
      );
    }),
  ];
  for (const r of results) {
    if (!r.sessions) continue;
    const top = r.sessions.states.filter((x) => x.what !== 'idle').slice(0, 5);
    const idle = r.sessions.states.find((x) => x.what === 'idle')?.sessions ?? 0;
    lines.push(
      '',
      `What the service's PostgreSQL sessions were doing during the drain (${r.label}; pg_stat_activity sampled ${num(r.sessions.samples)} times, ` +
        `average number of sessions; state | wait | statement):`,
      '',
      ...top.map((x) => `- ${num(x.sessions, 2)}: \`${x.what}\``),
      `- ${num(idle, 2)}: idle`,
    );
  }
  return lines.join('\n');
}
