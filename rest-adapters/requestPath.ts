import { getPath } from 'hono/utils/url';

/**
 * The path of a request target as the router sees it, so that every rule of the front (the
 * HTTPS rule and its operator exception, the GraphQL endpoint, health) decides on the path that
 * is then routed: @hono/node-server makes a WHATWG URL of the target (dot segments removed,
 * backslashes read as slashes) and Hono routes `getPath` of it (percent-decoded, `%25` kept).
 *
 * A target that only a resolver makes sense of is refused rather than resolved (null): dot
 * segments, plain or encoded (`/admin/../channel`, `/%2e%2e/`), empty segments (`//`),
 * backslashes, encoded slashes or backslashes, and percent-encoded unreserved characters
 * (`/%61dmin`: letters, digits, `-._~`, which RFC 3986 says are never to be encoded). No client
 * sends them (it removes dot segments and decodes unreserved characters before a request is
 * made); a proxy, a log or GraphQL's own endpoint check may read them otherwise than the router
 * does. What remains encodable (a space, a reserved or non-ASCII character) spells none of the
 * front's prefixes, so the path the rules read and the one routed agree. Absolute-form targets
 * (`http://host/path`) are read by their path.
 */
export function routedPath(target: string): string | null {
  let path = target;
  if (path[0] !== '/') {
    const authority = ABSOLUTE_FORM.exec(path);
    if (!authority) return null;
    path = path.slice(authority[0].length);
    if (path === '' || path[0] === '?' || path[0] === '#') path = '/' + path;
    else if (path[0] !== '/') return null;
  }
  const end = END_OF_PATH.exec(path);
  if (end) path = path.slice(0, end.index);
  if (!NOT_PLAIN.test(path)) return path;
  if (AMBIGUOUS.test(path)) return null;
  // Percent-encodings (`%20`): decoded as the router decodes them.
  return getPath({ url: new URL(path, 'http://localhost').href } as Request);
}

const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;
const END_OF_PATH = /[?#]/;
/** What a path needs for the router to read it otherwise than it is written. */
const NOT_PLAIN = /[%\\]|\/\.|\/\//;
const AMBIGUOUS = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)|\/\/|\\|%2f|%5c|%(?:3[0-9]|4[1-9a-f]|5[0-9a]|6[1-9a-f]|7[0-9a]|2d|2e|5f|7e)/i;
