import type { Hono } from 'hono';
import type { AppDeps } from '../src/context.js';
import { imageBytes } from '../src/services/catalog/index.js';
import type { HttpEnv } from './env.js';

/**
 * GET (and HEAD) /images/{propertyId}/{imageId}/{size}.png: the public image route the image links
 * of every surface point at (imageHref). No credential (an <img> sends none), so it is mounted
 * beside the health routes, outside the versions' credential check and rate limit; the front still
 * gives it the request id, the security headers, CORS, the HTTPS rule, the shutdown gate and the
 * request deadline. Only advertised images are served (services/catalog/images.ts); anything else
 * is 404 NOT_FOUND in the error envelope, a provider failure 502 UPSTREAM_ERROR.
 *
 * An image at one path never changes, so it is cacheable by anyone for a day and immutable, with a
 * strong ETag (304 on If-None-Match). Cross-Origin-Resource-Policy: cross-origin replaces the
 * service's same-site default, so partners' pages on other sites can show it.
 */

const CACHE_CONTROL = 'public, max-age=86400, immutable';

export function imageRoutes(app: Hono<HttpEnv>, deps: AppDeps): void {
  app.get('/images/:propertyId/:imageId/:file', async (c) => {
    const file = c.req.param('file');
    const size = file.endsWith('.png') ? file.slice(0, -'.png'.length) : '';
    const image = await imageBytes(deps, c.req.param('propertyId'), c.req.param('imageId'), size);
    const headers = {
      // On the 304 too: the adapter would otherwise default a 304's type to text/plain.
      'Content-Type': image.contentType,
      'Cache-Control': CACHE_CONTROL,
      ETag: image.etag,
      'Cross-Origin-Resource-Policy': 'cross-origin',
    };
    if (matches(c.req.header('if-none-match'), image.etag)) return c.body(null, 304, headers);
    // A Buffer over an ArrayBuffer (never shared memory): the bytes as they are, not copied.
    return c.body(image.bytes as Uint8Array<ArrayBuffer>, 200, { ...headers, 'Content-Length': String(image.bytes.length) });
  });
}

/** If-None-Match against the image's validator (RFC 9110 §13.1.2: weak comparison, `*` matches any). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
