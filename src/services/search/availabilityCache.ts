import { LRUCache } from 'lru-cache';
import type { CallOptions, UpstreamClient } from '../../upstream/client.js';
import type { AvailabilityRequest } from '../../upstream/protocol.js';
import { UpstreamError } from '../kernel/index.js';
import { SearchAnswer, type ResultsView, type SearchResults } from './results.js';

/**
 * The provider's answers to multi-property searches (`detail: lowest`), shared by every request
 * that asks the provider the same thing for a short time (docs/decisions.md, "Search"):
 *
 * - keyed by the whole provider request (dates, occupancy, filters sent, detail: whatever is sent
 *   is in the key) and the sandbox scenario, so a scenario's answers never meet anyone else's;
 * - single flight: concurrent misses of one key make one provider call (lru-cache's `fetch`),
 *   which runs to its own deadline: a caller that leaves stops waiting, not the others' call;
 * - fresh for `ttlMs` by the service's clock (a clock that went back counts as expired); a
 *   provider failure is never kept;
 * - bounded in memory by an estimate of what each answer holds (results.ts), least recently used
 *   first out.
 *
 * Each answer is parsed and checked against the protocol once, by the provider call that brought
 * it, and read into rows once; requests read pages of it (results.ts).
 */

export interface AvailabilityCacheOptions {
  /** How long an answer is served; 0: every search asks the provider. */
  ttlMs: number;
  /** Estimated bytes all answers may hold. */
  maxBytes: number;
  /** The service's clock. */
  clock: () => Date;
}

/** A multi-property search as the provider is asked it. */
export type LowestRequest = AvailabilityRequest & { detail: 'lowest' };

interface Entry {
  answer: SearchAnswer;
  /** When the provider was asked (service clock, ms). */
  askedAt: number;
}

interface Fetch {
  request: LowestRequest;
  nights: number;
  options: CallOptions;
}

/** What the cache did, for tests and metrics. */
export interface AvailabilityCacheStats {
  /** Searches answered from a kept answer. */
  hits: number;
  /** Searches that asked the provider. */
  misses: number;
  /** Searches that waited for a provider call another search had made. */
  joined: number;
  entries: number;
  /** Estimated bytes held. */
  bytes: number;
}

export class AvailabilityCache {
  private readonly cache: LRUCache<string, Entry, Fetch> | null;
  private readonly counts = { hits: 0, misses: 0, joined: 0 };

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly options: AvailabilityCacheOptions,
  ) {
    this.cache =
      options.ttlMs > 0
        ? new LRUCache<string, Entry, Fetch>({
            maxSize: options.maxBytes,
            sizeCalculation: (entry, key) => Math.ceil(entry.answer.bytes + key.length * 2),
            // The provider call keeps going when its entry is evicted meanwhile: its waiters get
            // the answer all the same.
            ignoreFetchAbort: true,
            fetchMethod: (_key, _stale, { context }) => this.ask(context),
          })
        : null;
  }

  /**
   * The results of a search for `view`: from a kept answer when there is a fresh one, else from
   * the provider (one call for all concurrent askers of the same key).
   */
  async search(request: LowestRequest, view: ResultsView & { nights: number }, options: CallOptions): Promise<SearchResults> {
    if (!this.cache) return (await this.ask({ request, nights: view.nights, options })).answer.results(view);
    const key = `${options.scenario ?? ''}|${JSON.stringify(request)}`;
    const now = this.options.clock().getTime();
    let entry = this.cache.get(key);
    if (entry && now >= entry.askedAt && now - entry.askedAt < this.options.ttlMs) {
      this.counts.hits++;
      return this.read(key, entry, view);
    }
    // Not kept, expired, or being fetched: join the call in flight, or make one.
    const before = this.counts.misses;
    const shared = this.cache.fetch(key, {
      forceRefresh: true,
      // Only the scenario goes with the shared call; each caller's signal stays its own. Its lines
      // carry the request id of the caller that made it.
      context: { request, nights: view.nights, options: { scenario: options.scenario, log: options.log } },
    });
    if (this.counts.misses === before) this.counts.joined++;
    entry = await abortable(shared, options.signal);
    if (!entry) throw new UpstreamError('The inventory provider gave no answer');
    return this.read(key, entry, view);
  }

  stats(): AvailabilityCacheStats {
    return { ...this.counts, entries: this.cache?.size ?? 0, bytes: this.cache?.calculatedSize ?? 0 };
  }

  clear(): void {
    this.cache?.clear();
  }

  private async ask({ request, nights, options }: Fetch): Promise<Entry> {
    this.counts.misses++;
    const askedAt = this.options.clock().getTime();
    const { results } = await this.upstream.availability(request, options);
    return { answer: new SearchAnswer(results, nights), askedAt };
  }

  /** The view's results; an answer that grew (a new currency or order) is measured again. */
  private read(key: string, entry: Entry, view: ResultsView): SearchResults {
    const before = entry.answer.bytes;
    const results = entry.answer.results(view);
    const kept = this.cache?.peek(key);
    if (entry.answer.bytes !== before && kept?.answer === entry.answer) {
      // A new entry object: lru-cache measures a value when it is set, not when it is set again.
      this.cache!.set(key, { ...kept });
    }
    return results;
  }
}

/** `promise`, or the caller's own cancellation when its signal aborts first. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function cancelled(): UpstreamError {
  return new UpstreamError('The request was cancelled');
}
