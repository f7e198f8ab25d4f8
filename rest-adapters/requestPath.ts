import { getPath } from 'hono/utils/url';

/**
 * The path of a request target as the router reads it, so that every rule of the front (the
 * HTTPS rule and its exception for operator routes, the GraphQL endpoint, health) decides on the
 * path that is then routed, not on its spelling: @hono/node-server makes a WHATWG URL of the
 * target (dot segments removed, plain or percent-encoded; backslashes read as slashes) and Hono
 * routes `getPath` of it (percent-decoded, `%25` and encoded slashes kept). So
 * `/admin/../channel/v1/channels/me` is `/channel/v1/channels/me` here as it is there, and
 * `/%61dmin/v1` is `/admin/v1`. An absolute-form target (`http://host/path`) is read by its path;
 * a target that is neither (`*`) is returned as it is (the router answers it as no route).
 */
export function routedPath(target: string): string {
  let path = target;
  if (path[0] !== '/') {
    const authority = ABSOLUTE_FORM.exec(path);
    if (!authority) return target;
    path = path.slice(authority[0].length);
    if (path === '' || path[0] === '?' || path[0] === '#') path = '/' + path;
  }
  const end = END_OF_PATH.exec(path);
  if (end) path = path.slice(0, end.index);
  if (!NOT_PLAIN.test(path)) return path;
  try {
    // Written after an authority, as @hono/node-server writes it (`//a` stays a path, not a host).
    return getPath({ url: new URL(`http://localhost${path}`).href } as Request);
  } catch {
    return target;
  }
}

const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;
const END_OF_PATH = /[?#]/;
/** What a path needs for the router to read it otherwise than it is written. */
const NOT_PLAIN = /[%\\]|\/\./;
