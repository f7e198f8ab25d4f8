import type { ExecutionResult } from 'graphql';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { SharedSubscriber, SubscriptionEnd, SubscriptionSharing } from '../context.js';
import type { EventBus } from '../events/bus.js';
import type { BookingEventMessage } from '../services/webhooks/index.js';
import { sendShared, serialisePayload, type SendTarget } from './sharedSends.js';

/**
 * Multiplexed graphql-ws subscriptions (Hasura's idea, issue 18): the subscribers with the same
 * channel, scopes, document, operation name and variables form a group, and the group executes
 * each event once and serialises its `next` payload once; the message goes to every subscriber of
 * the group as the same bytes (src/graphql/sharedSends.ts), in slices of the event loop.
 *
 * What stays per subscriber: its place among the channel's subscriptions (taken when it
 * subscribes, given back when it ends, and ending it if lost), and its credential, asked before
 * each event (once per distinct credential and address in the group, through the credential
 * cache): a subscriber whose key or token stopped being good gets its UNAUTHORIZED and ends, the
 * others go on. Its own operation (graphql-ws's, run through Yoga's envelop) only ever produces
 * that ending: its resolver joins the group and gets back only why it ends (context.ts
 * SubscriptionSharing, src/schema/events.ts).
 *
 * The group: one listener on the channel's events (the bus holds one subscription per channel),
 * started by its first subscriber and closed when its last one leaves. Its execution runs through
 * the envelop of the first subscriber's operation, so limits, masking and plugins apply as they
 * would to any subscriber's; it is charged nothing (shareCharge in rateLimit.ts). A subscriber
 * receives the events that reach the group after it joined, in the order they arrived, each once.
 */

/** Events arrived and not yet executed that a group keeps (the oldest go first beyond it). */
export const GROUP_BACKLOG = 1024;

/** Starts the group's one execution: the enveloped subscribe of the operation, with `sharing` in its context. */
export type StartGroup = (sharing: Extract<SubscriptionSharing, { role: 'group' }>) => Promise<AsyncIterable<ExecutionResult> | ExecutionResult>;

export interface Multiplexer {
  /**
   * The sharing of one graphql-ws operation (`operationId` on `socket`) in the group of `key`;
   * `start` starts the group's execution if the operation is the group's first subscriber.
   */
  member(key: string, socket: WebSocket, operationId: string, start: StartGroup): SubscriptionSharing;
}

export function createMultiplexer(events: Pick<EventBus, 'listen'>, logger: Logger): Multiplexer {
  const groups = new Map<string, Group>();
  return {
    member(key, socket, operationId, start) {
      // Dropped once used: a subscriber holds nothing of how its group started.
      let starting: StartGroup | null = start;
      return {
        role: 'member',
        join(subscriber) {
          const startGroup = starting;
          if (!startGroup) throw new Error('a subscription joins its group once');
          starting = null;
          let group = groups.get(key);
          if (!group) {
            const created: Group = new Group(subscriber.channelId, events, logger, () => {
              if (groups.get(key) === created) groups.delete(key);
            });
            groups.set(key, created);
            void created.run(startGroup);
            group = created;
          }
          return group.add(socket, operationId, subscriber);
        },
      };
    },
  };
}

interface Arrived {
  seq: number;
  event: BookingEventMessage;
}

class Group {
  readonly #members = new Set<Member>();
  /** Events received from the bus so far; each event's number. */
  #arrived = 0;
  /** The number of the event the execution took last (the executor reads no event ahead). */
  #current = 0;
  readonly #backlog: Arrived[] = [];
  #wanted: ReadonlySet<string> | null = null;
  #waiting: ((result: IteratorResult<BookingEventMessage>) => void) | null = null;
  #closed = false;
  #results: AsyncIterator<ExecutionResult> | undefined;
  readonly #unlisten: () => void;

  constructor(
    readonly channelId: string,
    events: Pick<EventBus, 'listen'>,
    private readonly logger: Logger,
    private readonly forget: () => void,
  ) {
    // Listening from the first subscriber's join on, before the execution has started.
    this.#unlisten = events.listen(channelId, (event) => this.#arrive(event), () => this.#close());
  }

  add(socket: WebSocket, operationId: string, subscriber: SharedSubscriber): Member {
    const member = new Member(socket, operationId, subscriber, this.#arrived, (m) => this.#leave(m));
    this.#members.add(member);
    void subscriber.slot.lost.then(() => member.end('lost'));
    return member;
  }

  async run(start: StartGroup): Promise<void> {
    try {
      const outcome = await start({ role: 'group', source: (_channelId, wanted) => this.#source(wanted) });
      if (!(Symbol.asyncIterator in outcome)) {
        this.logger.error({ errors: outcome.errors, channelId: this.channelId }, 'shared subscription could not start');
        this.#finish('failed');
        return;
      }
      const results = outcome[Symbol.asyncIterator]();
      this.#results = results;
      if (this.#closed) {
        await results.return?.();
        return;
      }
      for (;;) {
        const next = await results.next();
        if (next.done) break;
        await this.#fanOut(next.value, this.#current);
      }
      // The channel's events ended (the bus closed) or the last subscriber left.
      this.#finish(null);
    } catch (error) {
      this.logger.error({ err: error, channelId: this.channelId }, 'shared subscription failed');
      this.#finish('failed');
    }
  }

  /** One result of the execution to the subscribers that were there when its event arrived. */
  async #fanOut(result: ExecutionResult, seq: number): Promise<void> {
    const recipients: Member[] = [];
    for (const member of this.#members) if (member.since < seq) recipients.push(member);
    if (!recipients.length) return;
    const payload = serialisePayload(result);
    // Each credential (with its address) asked once for this event.
    const verdicts = new Map<string, Promise<boolean>>();
    for (const { subscriber } of recipients) {
      if (!verdicts.has(subscriber.credentialKey)) verdicts.set(subscriber.credentialKey, subscriber.allowed().catch(() => false));
    }
    const allowed = new Map<string, boolean>();
    for (const [credential, verdict] of verdicts) allowed.set(credential, await verdict);
    const targets: SendTarget[] = [];
    for (const member of recipients) {
      if (allowed.get(member.subscriber.credentialKey)) targets.push(member);
      else member.end('revoked');
    }
    await sendShared(targets, payload);
  }

  #arrive(event: BookingEventMessage): void {
    if (this.#closed) return;
    const seq = ++this.#arrived;
    if (this.#waiting && this.#passes(event)) {
      const wake = this.#waiting;
      this.#waiting = null;
      this.#current = seq;
      wake({ value: event, done: false });
      return;
    }
    this.#backlog.push({ seq, event });
    if (this.#backlog.length > GROUP_BACKLOG) this.#backlog.shift();
  }

  #passes(event: BookingEventMessage): boolean {
    return !this.#wanted || this.#wanted.has(event.type);
  }

  /** The channel's events for the execution, narrowed to the wanted types, from the first join on. */
  #source(wanted: ReadonlySet<string> | null): AsyncIterableIterator<BookingEventMessage> {
    this.#wanted = wanted;
    const source: AsyncIterableIterator<BookingEventMessage> = {
      next: () => {
        while (this.#backlog.length) {
          const { seq, event } = this.#backlog.shift()!;
          if (!this.#passes(event)) continue;
          this.#current = seq;
          return Promise.resolve({ value: event, done: false });
        }
        if (this.#closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.#waiting = resolve));
      },
      return: () => {
        this.#close();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]: () => source,
    };
    return source;
  }

  #leave(member: Member): void {
    this.#members.delete(member);
    if (this.#members.size === 0) this.#close();
  }

  /** No more events: the last subscriber left, or the bus closed. */
  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.forget();
    this.#unlisten();
    this.#backlog.length = 0;
    const wake = this.#waiting;
    this.#waiting = null;
    wake?.({ value: undefined, done: true });
    void this.#results?.return?.().catch(() => {});
  }

  /** Ends every subscriber still there: with `why`, or quietly (complete) when null. */
  #finish(why: SubscriptionEnd | null): void {
    this.#close();
    for (const member of [...this.#members]) member.end(why);
  }
}

/**
 * One subscriber of a group, as the iterator its resolver returns: it yields nothing while the
 * subscriber receives the group's events, then at most one SubscriptionEnd (which its own
 * operation reports as the error that ends it) and is done.
 */
class Member implements AsyncIterableIterator<SubscriptionEnd>, SendTarget {
  live = true;
  #ending: SubscriptionEnd | null = null;
  #wake: ((result: IteratorResult<SubscriptionEnd>) => void) | null = null;

  constructor(
    readonly socket: WebSocket,
    readonly operationId: string,
    readonly subscriber: SharedSubscriber,
    /** The number of the last event that reached the group before this subscriber joined. */
    readonly since: number,
    private readonly leave: (member: Member) => void,
  ) {}

  /** Ends this subscriber: it is sent nothing more; `why` (if any) is what its operation reports. */
  end(why: SubscriptionEnd | null): void {
    if (!this.live) return;
    this.live = false;
    this.leave(this);
    if (why === null) {
      this.#settle({ value: undefined, done: true });
      return;
    }
    const wake = this.#wake;
    if (wake) {
      this.#wake = null;
      wake({ value: why, done: false });
    } else {
      this.#ending = why;
    }
  }

  next(): Promise<IteratorResult<SubscriptionEnd>> {
    if (this.#ending) {
      const value = this.#ending;
      this.#ending = null;
      return Promise.resolve({ value, done: false });
    }
    if (!this.live) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.#wake = resolve));
  }

  return(): Promise<IteratorResult<SubscriptionEnd>> {
    this.#ending = null;
    if (this.live) {
      this.live = false;
      this.leave(this);
    }
    this.#settle({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<SubscriptionEnd>> {
    void this.return();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #settle(result: IteratorResult<SubscriptionEnd>): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.(result);
  }
}
