/**
 * The typed TypeScript client of the channel API (docs/client.md): openapi-fetch over the types
 * openapi-typescript generates from the service's OpenAPI documents (v1.ts, v2.ts; do not edit
 * those, run `npm run client:generate`). Calls are by path and method, typed by the document:
 *
 *   const v1 = createChannelV1Client({ baseUrl: 'https://api.example.com', credential: { apiKey } });
 *   const { data, error } = await v1.GET('/bookings/{id}', { params: { path: { id } } });
 */
import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { components as V1Components, paths as V1Paths } from './v1.js';
import type { components as V2Components, paths as V2Paths } from './v2.js';

export type { V1Components, V1Paths, V2Components, V2Paths };
export type ChannelV1Client = Client<V1Paths>;
export type ChannelV2Client = Client<V2Paths>;

/** The base path of each version on the service's origin (the `servers` of its document). */
export const V1_BASE_PATH = '/channel/v1';
export const V2_BASE_PATH = '/api/channel/v2';

/**
 * How requests authenticate: a channel API key (X-Api-Key; every scope of its app; servers only),
 * or an OAuth access token (Authorization: Bearer oat_...; v1 only), given as is or as a function
 * asked before each request (see oauthTokenSource). v2 takes the API key.
 */
export type Credential = { apiKey: string } | { bearer: string | (() => string | Promise<string>) };

export interface ChannelClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The service's origin, e.g. `https://api.example.com`; the version's base path is added. */
  baseUrl: string;
  /** Sent on every request; without it, give the header per call (or only call the token endpoint). */
  credential?: Credential;
}

/** The middleware that puts the credential on each request. */
export function credentialMiddleware(credential: Credential): Middleware {
  return {
    async onRequest({ request }) {
      if ('apiKey' in credential) {
        request.headers.set('X-Api-Key', credential.apiKey);
      } else {
        const token = typeof credential.bearer === 'function' ? await credential.bearer() : credential.bearer;
        request.headers.set('Authorization', `Bearer ${token}`);
      }
      return request;
    },
  };
}

function create<Paths extends {}>(basePath: string, { baseUrl, credential, ...options }: ChannelClientOptions): Client<Paths> {
  const client = createClient<Paths>({ ...options, baseUrl: `${baseUrl.replace(/\/+$/, '')}${basePath}` });
  if (credential) client.use(credentialMiddleware(credential));
  return client;
}

/** A client of REST v1 (token-chained: availability → price check → book_token → POST /bookings). */
export function createChannelV1Client(options: ChannelClientOptions): ChannelV1Client {
  return create<V1Paths>(V1_BASE_PATH, options);
}

/** A client of REST v2 (link-chained: follow the `links` each answer returns; see linkQuery). */
export function createChannelV2Client(options: ChannelClientOptions): ChannelV2Client {
  return create<V2Paths>(V2_BASE_PATH, options);
}

// ---- OAuth client credentials (v1) ----

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Space-separated subset of the app's scopes; all of them when absent. */
  scope?: string;
}

export type AccessToken = V1Components['schemas']['TokenResponse'];

/** An access token from POST /channel/v1/oauth/token (client_credentials); throws the OAuth error. */
export async function requestAccessToken(client: ChannelV1Client, credentials: ClientCredentials): Promise<AccessToken> {
  const { data, error, response } = await client.POST('/oauth/token', {
    body: {
      grant_type: 'client_credentials',
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
      ...(credentials.scope === undefined ? {} : { scope: credentials.scope }),
    },
  });
  if (!data) throw new Error(`token endpoint answered ${response.status}: ${JSON.stringify(error)}`);
  return data;
}

/**
 * A bearer credential that fetches a token when it has none or the one it has expires within
 * `marginSeconds` (60 by default), one request at a time: `{ bearer: oauthTokenSource(...) }`.
 * `tokenClient` needs no credential (the token endpoint authenticates the client by its secret).
 */
export function oauthTokenSource(tokenClient: ChannelV1Client, credentials: ClientCredentials, marginSeconds = 60): () => Promise<string> {
  let current: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;
  return () => {
    if (current && Date.now() < current.renewAt) return Promise.resolve(current.token);
    pending ??= requestAccessToken(tokenClient, credentials)
      .then((t) => {
        current = { token: t.access_token, renewAt: Date.now() + (Number(t.expires_in) - marginSeconds) * 1000 };
        return t.access_token;
      })
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
}

// ---- v2 links ----

/** A v2 link: `href` relative to the origin, carrying its token. */
export type Link = V2Components['schemas']['Link'];

/**
 * The query of the call a v2 link names (its `token`), for the typed client:
 *
 *   await v2.POST('/bookings', { params: { query: linkQuery(check.links.book) }, body });
 *   await v2.GET('/bookings/retrieve', { params: { query: linkQuery(booking.links.retrieve) } });
 */
export function linkQuery(link: Pick<Link, 'href'>): { token: string } {
  const token = new URL(link.href, 'http://link.invalid').searchParams.get('token');
  if (!token) throw new Error(`a v2 link without a token: ${link.href}`);
  return { token };
}

/**
 * The parameters of a price-check link (step 2): the path's propertyId, roomId and rateId and
 * the token.
 *
 *   await v2.GET('/properties/{propertyId}/rooms/{roomId}/rates/{rateId}', { params: priceCheckParams(link) });
 */
export function priceCheckParams(link: Pick<Link, 'href'>): {
  path: { propertyId: string; roomId: string; rateId: string };
  query: { token: string };
} {
  const match = /\/properties\/([^/?]+)\/rooms\/([^/?]+)\/rates\/([^/?]+)(\?|$)/.exec(link.href);
  if (!match) throw new Error(`not a price-check link: ${link.href}`);
  const [propertyId, roomId, rateId] = [match[1]!, match[2]!, match[3]!].map(decodeURIComponent) as [string, string, string];
  return { path: { propertyId, roomId, rateId }, query: linkQuery(link) };
}
