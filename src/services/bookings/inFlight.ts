/**
 * What this instance's requests have in flight now: the bookings a creation or cancellation is
 * writing (rows `processing` or `cancelling` owned by this instance) and the Idempotency-Keys a
 * request holds. A row or key this instance owns that no request of its own holds any more was
 * left by a request that died without finishing (the database went away under it): recovery
 * settles it at once, as it does what an instance that is gone left (sync.ts, recoverInFlight).
 * A request holds its ids before it writes them and lets go once it has written its last.
 */
export class InFlight {
  private readonly held = new Map<string, number>();
  /** Writes a request could not make (the database was unreachable), retried by the recovery pass. */
  private readonly pending = new Map<string, () => Promise<void>>();

  /**
   * Keeps `write` for the recovery pass to make (retryPending), holding `id` until it is made. At
   * most MAX_PENDING are kept; beyond that `id` is not held, and recovery releases what it left.
   */
  later(id: string, write: () => Promise<void>): void {
    if (this.pending.size >= MAX_PENDING && !this.pending.has(id)) return;
    this.pending.set(id, write);
  }

  /** Makes the writes kept by later(); those that fail again stay for the next pass. Returns how many were made. */
  async retryPending(): Promise<number> {
    let made = 0;
    for (const [id, write] of [...this.pending]) {
      try {
        await write();
        if (this.pending.get(id) === write) this.pending.delete(id);
        made++;
      } catch {
        // Still unreachable: the next pass tries again.
      }
    }
    return made;
  }

  /** Holds `ids` until the returned function is called (once; later calls do nothing). */
  hold(ids: readonly string[]): () => void {
    for (const id of ids) this.held.set(id, (this.held.get(id) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const id of ids) {
        const n = (this.held.get(id) ?? 0) - 1;
        if (n > 0) this.held.set(id, n);
        else this.held.delete(id);
      }
    };
  }

  /** Whether a request of this instance holds `id`, or a write of it waits for the recovery pass. */
  has(id: string): boolean {
    return this.held.has(id) || this.pending.has(id);
  }

  /** Runs `fn` holding `ids`. */
  async with<T>(ids: readonly string[], fn: () => Promise<T>): Promise<T> {
    const release = this.hold(ids);
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/** Writes kept for the recovery pass at most (a long outage under load must not fill the memory). */
const MAX_PENDING = 10_000;

/** The id under which a request holds an Idempotency-Key (channel and key). */
export function keyInFlight(channelId: string, key: string): string {
  return `idempotency-key\n${channelId}\n${key}`;
}
