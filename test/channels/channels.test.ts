import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
let creds: IssuedCredentials;

beforeAll(async () => {
  t = await startTestService();
  // The database's default rate limits, which the profile shows.
  creds = await t.channel({ name: 'Seoul Trips', company: 'Seoul Trips Ltd.', tier: 'starter', rateLimit: 'default' });
});
afterAll(() => t.close());

function put(body: string, headers: Record<string, string> = {}) {
  return t.request('/channel/v1/channels/me', {
    method: 'PUT',
    headers: { ...apiKey(creds), 'content-type': 'application/json', ...headers },
    body,
  });
}

async function storedChannel() {
  return t.service.deps.db.prisma.channel.findUniqueOrThrow({ where: { id: creds.user_id } });
}

describe('GET /channel/v1/channels/me', () => {
  it('returns the channel of the credential in the data+meta envelope', async () => {
    const res = await t.request('/channel/v1/channels/me', { headers: apiKey(creds) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body).toEqual({
      data: {
        user_id: creds.user_id,
        name: 'Seoul Trips',
        company: 'Seoul Trips Ltd.',
        tier: 'starter',
        commission_rate: 0,
        rate_limit: { sandbox: 60, production: 600 },
        bank_account: null,
        default_currency: 'KRW',
        tier_updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
      meta: { request_id: res.headers.get('x-request-id'), timestamp: expect.stringMatching(/Z$/) },
    });
  });
});

describe('PUT /channel/v1/channels/me', () => {
  it('updates the profile and settlement account, masking the account number in every answer', async () => {
    const res = await put(
      JSON.stringify({
        name: 'Seoul Trips Global',
        company: null,
        default_currency: 'USD',
        bank_account: { bank_name: 'Shinhan', bank_code: '088', account_number: '110-123-456789', account_holder: 'Seoul Trips' },
      }),
    );
    expect(res.status).toBe(200);
    const { data } = await res.json();
    expect(data).toMatchObject({
      name: 'Seoul Trips Global',
      company: null,
      default_currency: 'USD',
      bank_account: { bank_name: 'Shinhan', bank_code: '088', account_number: '**********6789', account_holder: 'Seoul Trips' },
    });
    const again = await (await t.request('/channel/v1/channels/me', { headers: apiKey(creds) })).json();
    expect(again.data.bank_account.account_number).toBe('**********6789');
    expect(JSON.stringify(again)).not.toContain('123-456789');
    expect((await storedChannel()).bankAccountNumber).toBe('110-123-456789');
  });

  it('leaves omitted fields alone and removes the account with bank_account: null', async () => {
    const res = await put(JSON.stringify({ bank_account: null }));
    const { data } = await res.json();
    expect(data.name).toBe('Seoul Trips Global');
    expect(data.bank_account).toBeNull();
  });

  const bad: [string, string, string[]][] = [
    ['an empty name', '{"name":"  "}', ['name']],
    ['a number for name', '{"name":42}', ['name']],
    ['an unsupported currency', '{"default_currency":"XYZ"}', ['default_currency']],
    ['an account number with letters', '{"bank_account":{"bank_name":"A","bank_code":"088","account_number":"12ab5678","account_holder":"B"}}', ['bank_account.account_number']],
    ['a partial bank account', '{"bank_account":{"bank_name":"A"}}', ['bank_account.bank_code', 'bank_account.account_number', 'bank_account.account_holder']],
    ['an unknown field', '{"name":"A","tier":"starter"}', ['(body)']],
    ['an empty object', '{}', ['(body)']],
    ['a JSON array', '[1,2]', ['(body)']],
  ];
  it.each(bad)('refuses %s with 400 VALIDATION_ERROR naming the fields, changing nothing', async (_name, body, fields) => {
    const before = await storedChannel();
    const res = await put(body);
    expect(res.status).toBe(400);
    const payload = await res.json();
    expect(payload.error.code).toBe('VALIDATION_ERROR');
    expect(payload.error.details.fields.map((f: { field: string }) => f.field).sort()).toEqual([...fields].sort());
    for (const f of payload.error.details.fields) expect(typeof f.reason).toBe('string');
    expect(payload.meta.request_id).toBe(res.headers.get('x-request-id'));
    expect(await storedChannel()).toEqual(before);
  });

  it('refuses malformed JSON with 400 VALIDATION_ERROR', async () => {
    const res = await put('{"name": "unterminated');
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: '(body)', reason: 'malformed JSON' }] } });
  });

  it('refuses a body over 1 MiB with 413 in the envelope', async () => {
    const res = await put(JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }));
    expect(res.status).toBe(413);
    const body = await res.json();
    expect(body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit_bytes: 1048576 } });
    expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('refuses an oversized body sent without Content-Length (chunked) with 413', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 20) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await t.request('/channel/v1/channels/me', {
      method: 'PUT',
      headers: { ...apiKey(creds), 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
  });
});

describe('GraphQL channel and updateChannel (same service as REST)', () => {
  it('reads the same channel as REST', async () => {
    const rest = (await (await t.request('/channel/v1/channels/me', { headers: apiKey(creds) })).json()).data;
    const gql = await t.graphql('{ channel { userId name company tier commissionRate rateLimit { sandbox production } defaultCurrency createdAt } }', {}, apiKey(creds));
    expect(gql.data?.channel).toEqual({
      userId: rest.user_id,
      name: rest.name,
      company: rest.company,
      // GraphQL names the enum value in SCREAMING_SNAKE_CASE; REST keeps the lower-case value.
      tier: rest.tier.toUpperCase(),
      commissionRate: rest.commission_rate,
      rateLimit: rest.rate_limit,
      defaultCurrency: rest.default_currency,
      createdAt: rest.created_at,
    });
  });

  it('updates through the mutation with masking, and REST sees the change', async () => {
    const gql = await t.graphql(
      'mutation($input: UpdateChannelInput!) { updateChannel(input: $input) { name bankAccount { accountNumber bankCode } } }',
      { input: { name: 'Via GraphQL', bankAccount: { bankName: 'KB', bankCode: '004', accountNumber: '123456789012', accountHolder: 'Via' } } },
      apiKey(creds),
    );
    expect(gql.errors).toBeUndefined();
    expect(gql.data?.updateChannel).toEqual({ name: 'Via GraphQL', bankAccount: { accountNumber: '********9012', bankCode: '004' } });
    const rest = (await (await t.request('/channel/v1/channels/me', { headers: apiKey(creds) })).json()).data;
    expect(rest.name).toBe('Via GraphQL');
  });

  it('refuses the values REST refuses with VALIDATION_ERROR, changing nothing', async () => {
    const before = await storedChannel();
    const gql = await t.graphql('mutation { updateChannel(input: { name: "  " }) { name } }', {}, apiKey(creds));
    expect(gql.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    expect(gql.errors?.[0]?.extensions?.details).toEqual({ fields: [{ field: 'input.name', reason: expect.any(String) }] });
    const empty = await t.graphql('mutation { updateChannel(input: {}) { name } }', {}, apiKey(creds));
    expect(empty.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    expect(await storedChannel()).toEqual(before);
  });
});
