/**
 * The `content` group of `npm run bench` (`npm run bench -- content`): the content file
 * (`GET /channel/v1/content/files/content`, JSON and CSV, `Accept-Language: en-US`) of a large
 * catalog (BENCH_CONTENT_SIZE properties, default 100,000; the provider out of process:
 * `npm run simulator` with SIMULATOR_SIZE), downloaded by a client that reads the stream as it
 * comes and keeps nothing. The service's memory is read from /proc/<pid>/status while it streams:
 * VmRSS before, VmRSS sampled every 20 ms, and VmHWM (the kernel's own peak, reset before each
 * download through /proc/<pid>/clear_refs where the kernel allows it). A file that the service
 * built in memory would show as a peak growing with the file; a streamed one as a flat line.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'undici';
import { simulatorStats, startChild, startSimulator, stopChild, type Child, type SimulatorChild } from './children.js';
import { endLine, fmt, loadAverage, runLine, type GroupObject } from './report.js';
import type { ServiceSource } from './service-dir.js';

export interface ContentOptions {
  source: ServiceSource;
  /** Properties in the provider's catalog. */
  size: number;
}

export interface ContentResult {
  section: string;
  problems: string[];
  objects: GroupObject[];
}

type ServiceInfo = { port: number; apiKey: string; channelId: string };

/** kB fields of /proc/<pid>/status, in bytes. */
function procStatus(pid: number): { rss: number; hwm: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return null;
  }
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0, the process's owner); false where it cannot. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface Download {
  format: 'json' | 'csv';
  status: number;
  bytes: number;
  /** CSV: lines (the header included); JSON: not counted. */
  lines: number | null;
  ttfbMs: number;
  durationMs: number;
  rssBefore: number;
  /** Highest VmRSS sampled every 20 ms while the file came. */
  rssPeakSampled: number;
  /** VmHWM after the download (reset before it when `peakReset`). */
  hwm: number;
  peakReset: boolean;
  /** Provider catalog pages served for this download (GET /properties). */
  providerPages: number;
  contentLanguage: string | null;
}

async function download(port: number, apiKey: string, pid: number, simulatorUrl: string, format: 'json' | 'csv'): Promise<Download> {
  // Let what the previous download left settle, then start from here.
  await new Promise((r) => setTimeout(r, 1_000));
  const before = procStatus(pid);
  const peakReset = resetPeak(pid);
  const pagesBefore = (await simulatorStats(simulatorUrl))['GET /properties'] ?? 0;
  let peak = before?.rss ?? 0;
  const sampler = setInterval(() => {
    const s = procStatus(pid);
    if (s && s.rss > peak) peak = s.rss;
  }, 20);
  const t0 = performance.now();
  try {
    const res = await request(`http://127.0.0.1:${port}/channel/v1/content/files/content?format=${format}`, {
      headers: { 'x-api-key': apiKey, 'accept-language': 'en-US' },
      bodyTimeout: 600_000,
      headersTimeout: 120_000,
    });
    const ttfbMs = performance.now() - t0;
    let bytes = 0;
    let lines = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (format === 'csv') for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    }
    const durationMs = performance.now() - t0;
    const after = procStatus(pid);
    const language = res.headers['content-language'];
    return {
      format,
      status: res.statusCode,
      bytes,
      lines: format === 'csv' ? lines : null,
      ttfbMs,
      durationMs,
      rssBefore: before?.rss ?? NaN,
      rssPeakSampled: Math.max(peak, after?.rss ?? 0),
      hwm: after?.hwm ?? NaN,
      peakReset,
      providerPages: ((await simulatorStats(simulatorUrl))['GET /properties'] ?? 0) - pagesBefore,
      contentLanguage: typeof language === 'string' ? language : null,
    };
  } finally {
    clearInterval(sampler);
  }
}

const MB = 1024 * 1024;
const mb = (bytes: number) => fmt(bytes / MB, 1);

export async function contentGroup(o: ContentOptions): Promise<ContentResult> {
  const head = runLine('content', o.source);
  const loadStart = loadAverage();
  let simulator: SimulatorChild | undefined;
  let service: Child<ServiceInfo> | undefined;
  const problems: string[] = [];
  try {
    process.stderr.write(`content: the provider with ${fmt(o.size)} properties (npm run simulator)\n`);
    simulator = await startSimulator(o.size);
    service = await startChild<ServiceInfo>('serve-service.ts', { env: { BENCH_SERVICE_ENV: JSON.stringify({ UPSTREAM_URL: simulator.url }) } });
    const pid = service.child.pid!;
    const downloads: Download[] = [];
    for (const format of ['json', 'csv'] as const) {
      const d = await download(service.info.port, service.info.apiKey, pid, simulator.url, format);
      downloads.push(d);
      process.stderr.write(
        `  ${format}: ${d.status}, ${mb(d.bytes)} MB in ${fmt(d.durationMs / 1000, 1)} s; RSS ${mb(d.rssBefore)} MB before, ` +
          `peak ${mb(d.rssPeakSampled)} MB sampled, VmHWM ${mb(d.hwm)} MB${d.peakReset ? '' : ' (not reset)'}; ${d.providerPages} provider pages\n`,
      );
      if (d.status !== 200) problems.push(`${format}: status ${d.status}`);
      if (d.contentLanguage !== 'en-US') problems.push(`${format}: Content-Language ${d.contentLanguage ?? 'missing'}, not en-US`);
    }
    const loadEnd = loadAverage();
    const peakOf = (d: Download) => (d.peakReset ? Math.max(d.hwm, d.rssPeakSampled) : d.rssPeakSampled);
    const rows = downloads.map(
      (d) =>
        `| ${d.format.toUpperCase()} | ${d.status} | ${mb(d.bytes)} | ${d.lines === null ? '' : fmt(d.lines)} | ${fmt(d.providerPages)} | ${fmt(d.ttfbMs, 0)} | ` +
        `${fmt(d.durationMs / 1000, 1)} | ${mb(d.bytes / (d.durationMs / 1000))} | ${mb(d.rssBefore)} | ${mb(peakOf(d))} | ${mb(peakOf(d) - d.rssBefore)} |`,
    );
    const section = [
      `### Content file of ${fmt(o.size)} properties: memory while it streams (provider out of process)`,
      '',
      head,
      '',
      `\`GET /channel/v1/content/files/content?format=json\`, then \`format=csv\`, with \`Accept-Language: en-US\`, from one service process ` +
        `(sandbox, PGlite) whose provider is \`npm run simulator\` with \`SIMULATOR_SIZE=${o.size}\`; the client (undici, in the bench process) reads ` +
        'the body as it comes and keeps nothing. RSS of the service process from /proc/<pid>/status: before the download, and the peak while it ' +
        `streamed (the higher of VmRSS sampled every 20 ms and VmHWM${downloads.every((d) => d.peakReset) ? ', reset before each download through /proc/<pid>/clear_refs' : ', which could not be reset here, so only the samples count'}).`,
      '',
      '| File | Status | MB | CSV lines | Provider pages | First byte ms | Seconds | MB/s | RSS before MB | RSS peak MB | Peak − before MB |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
      ...(problems.length ? ['', `**Warning:** ${problems.join('; ')}.`] : []),
      '',
      endLine(),
    ].join('\n');
    const objects: GroupObject[] = downloads.map((d) => ({
      scenario: `content file of ${fmt(o.size)} properties`,
      target: `${d.format.toUpperCase()}, provider out of process`,
      unit: 'download',
      perSecond: null,
      latencyMs: null,
      cpuUsPerUnit: { process: null },
      ratios: {},
      count: d.status === 200 ? 1 : 0,
      failures: d.status === 200 ? 0 : 1,
      details: {
        bytes: d.bytes,
        csvLines: d.lines,
        providerPages: d.providerPages,
        firstByteMs: d.ttfbMs,
        durationMs: d.durationMs,
        rssBeforeBytes: d.rssBefore,
        rssPeakBytes: peakOf(d),
        rssPeakSampledBytes: d.rssPeakSampled,
        vmHwmBytes: d.hwm,
        vmHwmReset: d.peakReset,
        contentLanguage: d.contentLanguage,
      },
      service: { commit: o.source.commit, dirty: o.source.dirty, via: o.source.via, nodeEnv: o.source.nodeEnv },
      loadAverage: { start: loadStart, end: loadEnd },
      settings: { properties: o.size, acceptLanguage: 'en-US' },
    }));
    return { section, problems, objects };
  } finally {
    if (service) await stopChild(service.child);
    if (simulator) await stopChild(simulator.child);
  }
}
