import type { ExecutionResult } from 'graphql';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { SharedSubscriber, SubscriptionEnd, SubscriptionSharing } from '../context.js';
import type { EventBus } from '../events/bus.js';
import type { BookingEventMessage } from '../services/webhooks/index.js';
import { breathe, sendShared, serialisePayload, type SendTarget, type SharedMessage } from './sharedSends.js';

/**
 * Multiplexed graphql-ws subscriptions (Hasura's idea, issue 18): the subscribers with the same
 * channel, scopes, document, operation name and variables form a group, and the group executes
 * each event once and serialises its `next` payload once; the message goes to every subscriber of
 * the group as the same bytes (src/graphql/sharedSends.ts), in slices of the event loop.
 *
 * What stays per subscriber: its place among the channel's subscriptions (taken when it
 * subscribes, through its own operation, then held by the group and given back when it ends; a
 * place lost ends it), and its credential, asked before each event (once per distinct credential
 * and address in the group, through the credential cache): a subscriber whose key or token stopped
 * being good ends with UNAUTHORIZED, the others go on. A subscriber's own operation runs through
 * Yoga's envelop when it subscribes (limits, scopes, its place: the refusals are as before), and
 * its resolver then joins the group (context.ts SubscriptionSharing, src/schema/events.ts);
 * after that the subscriber holds no context, resolver or iterator chain of its own: graphql-ws
 * is handed the Member below.
 *
 * The group: one listener on the channel's events (the bus holds one subscription per channel),
 * started by its first subscriber and closed when its last one has gone. Its execution runs through
 * an envelop like its first subscriber's operation's, so limits, masking and plugins apply as to
 * any subscriber's; it is not charged when it starts (shareCharge in charges.ts), and each event
 * it executes is charged once for the whole group (chargeEvent). Why subscribers end
 * ('revoked', 'lost') goes through the same execution, once for all those ending for that reason
 * at that moment, so their error is exactly the one an operation of their own would report. A
 * subscriber receives the events that reach the group after it joined, in the order they arrived,
 * each once, then its error if it has one, then graphql-ws's `complete`.
 */

/** Events arrived and not yet executed that a group keeps (the oldest go first beyond it). */
export const GROUP_BACKLOG = 1024;

/** At most this many events are executed before they are sent together. */
const ROUND_EVENTS = 32;

/** Starts the group's one execution: the enveloped subscribe of the operation, with `sharing` in its context. */
export type StartGroup = (sharing: Extract<SubscriptionSharing, { role: 'group' }>) => Promise<AsyncIterable<ExecutionResult> | ExecutionResult>;

export interface Multiplexer {
  /**
   * The sharing of one graphql-ws operation (`operationId` on `socket`) in the group of `key`;
   * `start` starts the group's execution if the operation is the group's first subscriber.
   */
  member(key: string, socket: WebSocket, operationId: string, start: StartGroup): SubscriptionSharing;
  /**
   * What graphql-ws iterates for an operation whose resolver joined its group (undefined if it did
   * not, e.g. it was refused): at most one result, the error it ends with, then done.
   */
  joined(sharing: SubscriptionSharing | undefined): AsyncIterableIterator<ExecutionResult> | undefined;
}

export function createMultiplexer(events: Pick<EventBus, 'listen'>, logger: Logger): Multiplexer {
  const groups = new Map<string, Group>();
  const members = new WeakMap<SubscriptionSharing, Member>();
  return {
    member(key, socket, operationId, start) {
      // Dropped once used: a subscriber holds nothing of how its group started.
      let starting: StartGroup | null = start;
      const sharing: SubscriptionSharing = {
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
          members.set(sharing, group.add(socket, operationId, subscriber));
        },
      };
      return sharing;
    },
    joined(sharing) {
      if (!sharing) return undefined;
      const member = members.get(sharing);
      members.delete(sharing);
      return member;
    },
  };
}

/** An event, or why some subscribers end, waiting for the group's execution. */
interface Queued {
  seq: number;
  event: BookingEventMessage | SubscriptionEnd;
}

class Group {
  readonly #members = new Set<Member>();
  /** Subscribers ending, by why: their error is the next execution of that marker. */
  readonly #ending = new Map<SubscriptionEnd, Member[]>();
  /** Events received from the bus so far; each event's number. */
  #arrived = 0;
  /** What the execution took last (its executor reads nothing ahead: the next result is this one's). */
  #current: Queued | null = null;
  readonly #backlog: Queued[] = [];
  #wanted: ReadonlySet<string> | null = null;
  #waiting: ((result: IteratorResult<BookingEventMessage | SubscriptionEnd>) => void) | null = null;
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
    void subscriber.slot.lost.then(() => this.#end(member, 'lost'));
    return member;
  }

  async run(start: StartGroup): Promise<void> {
    try {
      const outcome = await start({ role: 'group', source: (_channelId, wanted) => this.#source(wanted) });
      if (!(Symbol.asyncIterator in outcome)) {
        this.logger.error({ errors: outcome.errors, channelId: this.channelId }, 'shared subscription could not start');
        this.#fail();
        return;
      }
      const results = outcome[Symbol.asyncIterator]();
      this.#results = results;
      if (this.#closed) {
        await results.return?.();
        return;
      }
      let done = false;
      while (!done) {
        // Many groups executing the same event take turns too, not one long turn of the loop.
        await breathe();
        // What has arrived together is executed, then sent together (one write per subscriber).
        const round: SharedMessage[] = [];
        do {
          const next = await results.next();
          if (next.done) {
            done = true;
            break;
          }
          const taken = this.#current;
          if (!taken) continue;
          if (typeof taken.event === 'string') this.#ended(taken.event, next.value);
          else round.push({ seq: taken.seq, payload: serialisePayload(next.value) });
        } while (round.length < ROUND_EVENTS && this.#ready());
        if (round.length) await this.#fanOut(round);
      }
      // The channel's events ended (the bus closed) or the last subscriber has gone.
      this.#close();
      for (const member of [...this.#members, ...[...this.#ending.values()].flat()]) member.finish(null);
    } catch (error) {
      this.logger.error({ err: error, channelId: this.channelId }, 'shared subscription failed');
      this.#fail();
    }
  }

  /** Executed events to the subscribers that were there when each arrived. */
  async #fanOut(round: readonly SharedMessage[]): Promise<void> {
    const recipients: Member[] = [];
    const last = round[round.length - 1]!.seq;
    for (const member of this.#members) if (member.since < last) recipients.push(member);
    if (!recipients.length) return;
    // Each credential (with its address) asked once for the events of this round.
    const verdicts = new Map<string, Promise<boolean>>();
    for (const { subscriber } of recipients) {
      if (!verdicts.has(subscriber.credentialKey)) verdicts.set(subscriber.credentialKey, subscriber.allowed().catch(() => false));
    }
    const allowed = new Map<string, boolean>();
    for (const [credential, verdict] of verdicts) allowed.set(credential, await verdict);
    const targets: SendTarget[] = [];
    for (const member of recipients) {
      if (allowed.get(member.subscriber.credentialKey)) targets.push(member);
      else this.#end(member, 'revoked');
    }
    await sendShared(targets, round);
  }

  /** Whether the execution's next event (or ending) is here already. */
  #ready(): boolean {
    return this.#backlog.some((entry) => this.#passes(entry));
  }

  /** Ends `member` with `why`: nothing more is sent to it; its error is executed next. */
  #end(member: Member, why: SubscriptionEnd): void {
    if (!member.live || this.#closed) return;
    member.live = false;
    this.#members.delete(member);
    const ending = this.#ending.get(why);
    if (ending) {
      ending.push(member);
      return;
    }
    this.#ending.set(why, [member]);
    const marker: Queued = { seq: 0, event: why };
    if (this.#waiting) {
      const wake = this.#waiting;
      this.#waiting = null;
      this.#current = marker;
      wake({ value: why, done: false });
    } else {
      // Ahead of any event waiting: those are not sent to it any more.
      this.#backlog.unshift(marker);
    }
  }

  /** The executed error of `why` to the subscribers ending with it. */
  #ended(why: SubscriptionEnd, result: ExecutionResult): void {
    const ending = this.#ending.get(why) ?? [];
    this.#ending.delete(why);
    for (const member of ending) member.finish(result);
    if (this.#members.size === 0 && this.#ending.size === 0) this.#close();
  }

  #arrive(event: BookingEventMessage): void {
    if (this.#closed) return;
    const entry = { seq: ++this.#arrived, event };
    if (this.#waiting && this.#passes(entry)) {
      const wake = this.#waiting;
      this.#waiting = null;
      this.#current = entry;
      wake({ value: event, done: false });
      return;
    }
    this.#backlog.push(entry);
    if (this.#backlog.length > GROUP_BACKLOG) {
      const oldest = this.#backlog.findIndex((queued) => typeof queued.event !== 'string');
      this.#backlog.splice(oldest, 1);
    }
  }

  #passes({ event }: Queued): boolean {
    return typeof event === 'string' || !this.#wanted || this.#wanted.has(event.type);
  }

  /** The channel's events for the execution, narrowed to the wanted types, from the first join on. */
  #source(wanted: ReadonlySet<string> | null): AsyncIterableIterator<BookingEventMessage | SubscriptionEnd> {
    this.#wanted = wanted;
    const source: AsyncIterableIterator<BookingEventMessage | SubscriptionEnd> = {
      next: () => {
        while (this.#backlog.length) {
          const entry = this.#backlog.shift()!;
          if (!this.#passes(entry)) continue;
          this.#current = entry;
          return Promise.resolve({ value: entry.event, done: false });
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

  /** A subscriber gone (graphql-ws returned its operation: completed by the client, or its socket closed). */
  #leave(member: Member): void {
    this.#members.delete(member);
    for (const [why, ending] of this.#ending) {
      const at = ending.indexOf(member);
      if (at >= 0) ending.splice(at, 1);
      if (!ending.length) this.#ending.delete(why);
    }
    if (this.#members.size === 0 && this.#ending.size === 0) this.#close();
  }

  /** No more events: the last subscriber has gone, or the bus closed. */
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

  /** The execution failed: every subscriber still there ends with graphql-ws's `error`. */
  #fail(): void {
    this.#close();
    const everyone = [...this.#members, ...[...this.#ending.values()].flat()];
    this.#members.clear();
    this.#ending.clear();
    for (const member of everyone) member.fail();
  }
}

/**
 * One subscriber of a group, as graphql-ws iterates it for the subscriber's operation: nothing
 * while the subscriber receives the group's events (sent by the group), then at most one result
 * (the error it ends with) and done. Its place is given back when it ends, however it ends.
 */
class Member implements AsyncIterableIterator<ExecutionResult>, SendTarget {
  live = true;
  #gone = false;
  #last: IteratorResult<ExecutionResult> | Error | null = null;
  #wake: { resolve: (result: IteratorResult<ExecutionResult>) => void; reject: (error: Error) => void } | null = null;

  constructor(
    readonly socket: WebSocket,
    readonly operationId: string,
    readonly subscriber: SharedSubscriber,
    /** The number of the last event that reached the group before this subscriber joined. */
    readonly since: number,
    private readonly leave: (member: Member) => void,
  ) {}

  /** Ends with `result` (its error), or quietly when null: graphql-ws then sends `complete`. */
  finish(result: ExecutionResult | null): void {
    this.#settle(result ? { value: result, done: false } : { value: undefined, done: true });
  }

  /** Ends with graphql-ws's `error` message (the shared execution failed). */
  fail(): void {
    this.#settle(new Error('Live booking events failed on this instance; subscribe again'));
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    const last = this.#last;
    if (last) {
      this.#last = { value: undefined, done: true };
      if (!(last instanceof Error) && last.done) this.#goodbye();
      return last instanceof Error ? Promise.reject(last) : Promise.resolve(last);
    }
    if (this.#gone) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.#wake = { resolve, reject }));
  }

  return(): Promise<IteratorResult<ExecutionResult>> {
    this.#last = { value: undefined, done: true };
    const wake = this.#wake;
    this.#wake = null;
    wake?.resolve({ value: undefined, done: true });
    this.#goodbye();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
    void this.return();
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #settle(last: IteratorResult<ExecutionResult> | Error): void {
    this.live = false;
    const wake = this.#wake;
    if (!wake) {
      this.#last = last;
      if (!(last instanceof Error) && last.done) this.#goodbye();
      return;
    }
    this.#wake = null;
    this.#last = { value: undefined, done: true };
    if (last instanceof Error) wake.reject(last);
    else wake.resolve(last);
    if (last instanceof Error || last.done) this.#goodbye();
  }

  /** Leaves the group and gives the place back (once). */
  #goodbye(): void {
    this.live = false;
    if (this.#gone) return;
    this.#gone = true;
    this.leave(this);
    this.subscriber.slot.release();
  }
}
