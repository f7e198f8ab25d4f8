import { RateLimitError, ServiceUnavailableError } from '../kernel/index.js';

/**
 * The content files' places (GET /channel/v1/content/files/{catalog,content}): a download holds
 * memory (the page it writes, the one read ahead) and provider calls for as long as it runs, so
 * at most DOWNLOADS_PER_CHANNEL run at once for one channel and DOWNLOADS_PER_INSTANCE on this
 * instance, counted here, in memory (each instance counts its own). A place is taken before the
 * first provider call and given back when the download ends, fails, or its reader goes away or
 * is cut for reading nothing (DOWNLOAD_WRITE_TIMEOUT_MS, rest-adapters/stream.ts).
 */

/** Seconds a refused download is told to wait (Retry-After): about what a file of a few MB takes. */
export const DOWNLOAD_RETRY_AFTER_SECONDS = 5;

/** A download's place; release() gives it back (once, however often it is called). */
export interface DownloadSlot {
  release(): void;
}

export class DownloadSlots {
  private readonly perChannel = new Map<string, number>();
  private running = 0;

  constructor(private readonly limits: { perChannel: number; perInstance: number }) {}

  /**
   * A place for a download of `channelId`; 429 RATE_LIMIT_EXCEEDED when the channel already runs
   * its DOWNLOADS_PER_CHANNEL, 503 SERVICE_UNAVAILABLE when the instance runs DOWNLOADS_PER_INSTANCE
   * (both with Retry-After).
   */
  take(channelId: string): DownloadSlot {
    const own = this.perChannel.get(channelId) ?? 0;
    if (own >= this.limits.perChannel) {
      throw new RateLimitError(
        DOWNLOAD_RETRY_AFTER_SECONDS,
        `A channel downloads at most ${this.limits.perChannel} content files at once; finish one, or retry in ${DOWNLOAD_RETRY_AFTER_SECONDS} s`,
        { limit: this.limits.perChannel },
      );
    }
    if (this.running >= this.limits.perInstance) {
      throw new ServiceUnavailableError(
        `Too many content files are being downloaded right now; retry in ${DOWNLOAD_RETRY_AFTER_SECONDS} s`,
        { retry_after: DOWNLOAD_RETRY_AFTER_SECONDS, limit: this.limits.perInstance },
        { 'Retry-After': String(DOWNLOAD_RETRY_AFTER_SECONDS) },
      );
    }
    this.perChannel.set(channelId, own + 1);
    this.running++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.running--;
        const left = (this.perChannel.get(channelId) ?? 1) - 1;
        if (left > 0) this.perChannel.set(channelId, left);
        else this.perChannel.delete(channelId);
      },
    };
  }

  /** Downloads running on this instance (tests). */
  get inProgress(): number {
    return this.running;
  }
}
