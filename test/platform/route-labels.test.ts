import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day } from '../helpers/flow.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * The route template an answer is counted and logged under (the `route` label of
 * channel_http_request_duration_seconds and the request line's `route`) is the route that
 * answers, whoever refuses: the credential check (401) before the handler, the front (413) before
 * any router ran.
 */

interface Line {
  msg: string;
  reqId?: string;
  route?: string;
  status?: number;
}

const LIMIT = 2_000;
let t: TestService;
let who: IssuedCredentials;
const lines: Line[] = [];

beforeAll(async () => {
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
  t = await startTestService({ BODY_LIMIT_BYTES: String(LIMIT) }, { logger });
  who = await t.channel();
});
afterAll(() => t.close());

/** The count of the HTTP histogram for `method`, `route` and `status`. */
async function counted(method: string, route: string, status: number): Promise<number> {
  const res = await t.request('/metrics');
  expect(res.status).toBe(200);
  const text = await res.text();
  const prefix = 'channel_http_request_duration_seconds_count{';
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    if (line.includes(`method="${method}"`) && line.includes(`route="${route}"`) && line.includes(`status="${status}"`)) sum += Number(line.split(' ').at(-1));
  }
  return sum;
}

/** The request line of the answer `res`. */
function requestLine(res: Response): Line | undefined {
  const id = res.headers.get('x-request-id');
  return lines.find((l) => l.msg === 'request' && l.reqId === id);
}

const AVAILABILITY = '/api/channel/v2/properties/availability';
const query = () => `?checkin=${day(30)}&checkout=${day(32)}&occupancy=2&property_id=1`;

describe('route templates of refused answers', () => {
  it('a 401 on GET /api/channel/v2/properties/availability is counted and logged under that route', async () => {
    const before = await counted('GET', AVAILABILITY, 401);
    const res = await t.request(`${AVAILABILITY}${query()}`);
    expect(res.status).toBe(401);
    expect(await counted('GET', AVAILABILITY, 401)).toBe(before + 1);
    expect(await counted('GET', '/api/channel/v2/properties/{id}', 401)).toBe(0);
    expect(requestLine(res)).toMatchObject({ route: AVAILABILITY, status: 401 });
  });

  it('the same route answered 200 carries the same template, a property id its own', async () => {
    const ok = await t.request(`${AVAILABILITY}${query()}`, { headers: apiKey(who) });
    expect(ok.status).toBe(200);
    expect(requestLine(ok)).toMatchObject({ route: AVAILABILITY, status: 200 });
    const property = await t.request('/api/channel/v2/properties/1', { headers: apiKey(who) });
    expect(property.status).toBe(200);
    expect(requestLine(property)).toMatchObject({ route: '/api/channel/v2/properties/{id}' });
    expect(await counted('GET', AVAILABILITY, 200)).toBeGreaterThan(0);
  });

  it('a 413 of the front is counted under the route the body was sent to, an unknown path as unmatched', async () => {
    const big = { method: 'POST', headers: { ...apiKey(who), 'content-type': 'application/json' }, body: 'x'.repeat(LIMIT + 1) };
    const before = await counted('POST', '/channel/v1/bookings', 413);
    const res = await t.request('/channel/v1/bookings', big);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(requestLine(res)).toMatchObject({ route: '/channel/v1/bookings', status: 413 });
    expect(await counted('POST', '/channel/v1/bookings', 413)).toBe(before + 1);
    const unknown = await t.request('/no/such/route', big);
    expect(unknown.status).toBe(413);
    expect(requestLine(unknown)?.route).toBeUndefined();
    expect(await counted('POST', 'unmatched', 413)).toBeGreaterThan(0);
  });
});
