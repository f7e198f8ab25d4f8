import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { advertisedImage, type Property } from './properties.js';
import type { PropertyCatalog } from './catalog.js';
import { IMAGE_SIZES, NotFoundError } from '../kernel/index.js';
import type { CallOptions, UpstreamClient } from '../../upstream/client.js';

/**
 * Images for the service's public image route (GET /images/{propertyId}/{imageId}/{size}.png):
 * only an advertised size of an advertised image of a property (its own or a room type's) is
 * served, and only from the provider path the catalog gave for it, so nothing else can be asked of
 * the provider through it. Bytes come through one bounded in-memory cache (IMAGE_CACHE_BYTES,
 * least recently used first out) with a single flight per image: concurrent requests for one
 * image make one provider call.
 *
 * The route takes no credential, so what strangers can make it ask of the provider is bounded: a
 * property or an image the provider does not have is remembered as unknown (IMAGE_NOT_FOUND_TTL_MS,
 * at most NOT_FOUND_ENTRIES, least recently used first out), each property is looked up once however
 * many ask at once, and every provider call of the route counts on the breaker of its own
 * (`public`), so failures there never open the breaker partners' searches and bookings share.
 */

/** Unknown properties and images remembered at most (about 100 bytes each). */
export const NOT_FOUND_ENTRIES = 10_000;

/** The public route's provider calls: on its own breaker. */
const PUBLIC: CallOptions = { circuit: 'public' };

/** An image as the route answers it. */
export interface ServedImage {
  bytes: Buffer;
  contentType: string;
  /** A strong validator of the bytes (quoted, for ETag). */
  etag: string;
}

/** What the image cache did, for tests and metrics. */
export interface ImageCacheStats {
  /** Requests answered from kept bytes. */
  hits: number;
  /** Requests that asked the provider. */
  misses: number;
  /** Requests that waited for a provider call another request had made. */
  joined: number;
  /** Requests answered 404 from what is remembered as unknown, without a provider call. */
  known404: number;
  entries: number;
  bytes: number;
}

/** How long kept bytes are served before the provider is asked again: as long as partners may cache them. */
export const IMAGE_TTL_MS = 24 * 60 * 60 * 1000;

export class ImageCache {
  private readonly cache: LRUCache<string, ServedImage> | null;
  private readonly inFlight = new Map<string, Promise<ServedImage | undefined>>();
  /** Property ids (`p:<id>`) and provider paths (`i:<path>`) the provider does not have, for a while. */
  private readonly unknown: LRUCache<string, true> | null;
  private readonly lookups = new Map<number, Promise<Property | null>>();
  private readonly counts = { hits: 0, misses: 0, joined: 0, known404: 0 };

  constructor(
    private readonly upstream: UpstreamClient,
    options: { maxBytes: number; notFoundTtlMs: number },
  ) {
    this.unknown = options.notFoundTtlMs > 0 ? new LRUCache<string, true>({ max: NOT_FOUND_ENTRIES, ttl: options.notFoundTtlMs }) : null;
    this.cache =
      options.maxBytes > 0
        ? new LRUCache<string, ServedImage>({
            maxSize: options.maxBytes,
            // The bytes and what the entry costs beside them (key, type, validator, objects).
            sizeCalculation: (image, key) => image.bytes.length + key.length * 2 + 256,
            ttl: IMAGE_TTL_MS,
          })
        : null;
  }

  /**
   * The property `id` from the catalog (its content cache, else one provider call however many
   * ask at once), or null when the provider has none (remembered for IMAGE_NOT_FOUND_TTL_MS).
   */
  async property(catalog: PropertyCatalog, id: number): Promise<Property | null> {
    if (this.unknown?.get(`p:${id}`)) {
      this.counts.known404++;
      return null;
    }
    const pending = this.lookups.get(id);
    if (pending) return pending;
    const lookup = catalog
      .getMany([id], PUBLIC)
      .then(([property]) => {
        if (!property) this.unknown?.set(`p:${id}`, true);
        return property ?? null;
      })
      .finally(() => this.lookups.delete(id));
    this.lookups.set(id, lookup);
    return lookup;
  }

  /** The image at the provider path `providerPath`, or undefined when the provider has none. */
  async get(providerPath: string): Promise<ServedImage | undefined> {
    const kept = this.cache?.get(providerPath);
    if (kept) {
      this.counts.hits++;
      return kept;
    }
    if (this.unknown?.get(`i:${providerPath}`)) {
      this.counts.known404++;
      return undefined;
    }
    const pending = this.inFlight.get(providerPath);
    if (pending) {
      this.counts.joined++;
      return pending;
    }
    // One provider call for every request that arrives while it runs; it runs to its own deadline
    // (no caller's signal); a failure is never kept, a 404 is remembered as unknown for a while.
    this.counts.misses++;
    const call = this.fetch(providerPath).finally(() => this.inFlight.delete(providerPath));
    this.inFlight.set(providerPath, call);
    return call;
  }

  stats(): ImageCacheStats {
    return { ...this.counts, entries: this.cache?.size ?? 0, bytes: this.cache?.calculatedSize ?? 0 };
  }

  clear(): void {
    this.cache?.clear();
    this.unknown?.clear();
  }

  private async fetch(providerPath: string): Promise<ServedImage | undefined> {
    const answer = await this.upstream.getImage(providerPath, PUBLIC);
    if (!answer) {
      this.unknown?.set(`i:${providerPath}`, true);
      return undefined;
    }
    const etag = `"${createHash('sha256').update(answer.bytes).digest('base64url').slice(0, 32)}"`;
    const image: ServedImage = { bytes: answer.bytes, contentType: answer.contentType, etag };
    this.cache?.set(providerPath, image);
    return image;
  }
}

const PROPERTY_ID = /^[1-9]\d{0,8}$/;
const IMAGE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * One advertised image size of a property, for the public image route: its bytes, content type
 * and validator. The property comes from the catalog (its content cache; no request context: the
 * route has no caller to charge); 404 NOT_FOUND for anything that is not an advertised size of an
 * advertised image of that property (a malformed id or size, an unknown property or image), which
 * is never asked of the provider (an unknown property once per IMAGE_NOT_FOUND_TTL_MS); 502 when
 * the provider fails.
 */
export async function imageBytes(
  deps: { catalog: PropertyCatalog; images: ImageCache },
  propertyId: string,
  imageId: string,
  size: string,
): Promise<ServedImage> {
  const notFound = () => new NotFoundError(`No image ${imageId} of size ${size} at property ${propertyId}`);
  // Shapes first: a request that cannot name an advertised image costs no provider call.
  if (!PROPERTY_ID.test(propertyId) || !IMAGE_ID.test(imageId) || !(IMAGE_SIZES as readonly string[]).includes(size)) throw notFound();
  const property = await deps.images.property(deps.catalog, Number(propertyId));
  const advertised = property ? advertisedImage(property, imageId, size) : undefined;
  if (!advertised) throw notFound();
  const image = await deps.images.get(advertised.link.providerPath);
  if (!image) throw notFound();
  return image;
}
