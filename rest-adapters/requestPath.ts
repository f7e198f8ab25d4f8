import { getPath } from 'hono/utils/url';

/**
 * The path of a request target as the router reads it, so that every rule of the front (the
 * HTTPS rule and its exception for operator routes, the GraphQL endpoint, health) decides on the
 * path that is then routed, not on its spelling: @hono/node-server makes a WHATWG URL of the
 * target (dot segments removed, plain or percent-encoded) and Hono routes `getPath` of it
 * (percent-decoded, `%25` and encoded slashes kept). So `/admin/../channel/v1/channels/me` is
 * `/channel/v1/channels/me` here as it is there, and `/%61dmin/v1` is `/admin/v1`. An
 * absolute-form target (`http://host/path`) is read as node-server reads it: a URL of its own,
 * whose host is whatever the WHATWG parser finds (`http:///admin/x` is host `admin`, path `/x`).
 *
 * Null for a target node-server refuses (with a bare 400) before Hono sees it: a backslash before
 * the query, an absolute-form target that is no URL, anything else not starting with `/` (`*`).
 */
export function routedPath(target: string): string | null {
  if (backslashInPath(target)) return null;
  if (target[0] !== '/') {
    // node-server's test, case-sensitive: anything else is read as a path after the Host.
    if (!target.startsWith('http://') && !target.startsWith('https://')) return null;
    try {
      return getPath({ url: new URL(target).href } as Request);
    } catch {
      return null;
    }
  }
  const end = END_OF_PATH.exec(target);
  const path = end ? target.slice(0, end.index) : target;
  if (!NOT_PLAIN.test(path)) return path;
  try {
    // Written after an authority, as node-server writes it (`//a` stays a path, not a host).
    return getPath({ url: new URL(`http://localhost${path}`).href } as Request);
  } catch {
    return null;
  }
}

/** node-server's validateRequestTarget: a backslash before the query. */
function backslashInPath(target: string): boolean {
  const backslash = target.indexOf('\\');
  if (backslash < 0) return false;
  const query = target.indexOf('?');
  return query < 0 || backslash < query;
}

const END_OF_PATH = /[?#]/;
/** What a path needs for the router to read it otherwise than it is written. */
const NOT_PLAIN = /%|\/\./;
