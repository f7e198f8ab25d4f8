import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';

/**
 * The operator command line: `npm run admin -- <command> [options] [--json]`. It talks to the
 * running service's operator API (ADMIN_URL) with ADMIN_TOKEN, or with the token the service
 * keeps in DATA_DIR/admin-token, so it works the same on the embedded database and PostgreSQL.
 * With --json it prints exactly one JSON object on stdout.
 */

interface Command {
  usage: string;
  /** allowEmpty: a required option whose empty value means something (`--ips ""` clears). */
  options: Record<string, { required?: boolean; allowEmpty?: boolean }>;
  request(o: Record<string, string>): { method: 'GET' | 'POST' | 'PUT'; path: string; body?: unknown };
}

const COMMANDS: Record<string, Command> = {
  'channel:create': {
    usage: '--name NAME [--company C] [--tier sandbox|starter] [--balance N] [--currency KRW] [--scopes "a b c"]',
    options: { name: { required: true }, company: {}, tier: {}, balance: {}, currency: {}, scopes: {} },
    request: (o) => ({
      method: 'POST',
      path: '/admin/v1/channels',
      body: {
        name: o.name,
        company: o.company,
        tier: o.tier,
        balance: o.balance,
        currency: o.currency,
        scopes: o.scopes?.split(/[\s,]+/).filter(Boolean),
      },
    }),
  },
  'channel:show': {
    usage: '--user-id ID',
    options: { 'user-id': { required: true } },
    request: (o) => ({ method: 'GET', path: `/admin/v1/channels/${encodeURIComponent(o['user-id']!)}` }),
  },
  'channel:topup': {
    usage: '--user-id ID --amount N [--reference REF]',
    options: { 'user-id': { required: true }, amount: { required: true }, reference: {} },
    request: (o) => ({
      method: 'POST',
      path: `/admin/v1/channels/${encodeURIComponent(o['user-id']!)}/topup`,
      body: { amount: o.amount, reference: o.reference },
    }),
  },
  'channel:rate-limit': {
    usage: '--user-id ID [--sandbox N] [--production N] (requests per minute in each environment)',
    options: { 'user-id': { required: true }, sandbox: {}, production: {} },
    request: (o) => ({
      method: 'PUT',
      path: `/admin/v1/channels/${encodeURIComponent(o['user-id']!)}/rate-limit`,
      body: { sandbox: integerOption(o.sandbox), production: integerOption(o.production) },
    }),
  },
  'booking:status': {
    usage: '--id ID --to confirmed|failed|checked_in|checked_out|no_show',
    options: { id: { required: true }, to: { required: true } },
    request: (o) => ({
      method: 'POST',
      path: `/admin/v1/bookings/${encodeURIComponent(o.id!)}/status`,
      body: { status: o.to },
    }),
  },
  'booking:sync': {
    usage: '(compare bookings with the provider now; cancel overdue pending ones)',
    options: {},
    request: () => ({ method: 'POST', path: '/admin/v1/bookings/sync' }),
  },
  'app:suspend': appCommand('suspend'),
  'app:resume': appCommand('resume'),
  'key:rotate': appCommand('rotate-key'),
  // A new client secret, shown once; every access token of the app is revoked with the old one.
  'secret:rotate': appCommand('rotate-secret'),
  'app:ip-allow-list': {
    usage: '--app-id ID --ips "203.0.113.7,198.51.100.0/24" (addresses or CIDR ranges; --ips "" clears: any address)',
    options: { 'app-id': { required: true }, ips: { required: true, allowEmpty: true } },
    request: (o) => ({
      method: 'PUT',
      path: `/admin/v1/apps/${encodeURIComponent(o['app-id']!)}/ip-allow-list`,
      body: { ip_allow_list: o.ips!.split(/[\s,]+/).filter(Boolean) },
    }),
  },
};

/** A whole-number option as a JSON number; anything else as given, for the service to refuse. */
function integerOption(value: string | undefined): number | string | undefined {
  return value !== undefined && /^\d{1,9}$/.test(value) ? Number(value) : value;
}

function appCommand(action: string): Command {
  return {
    usage: '--app-id ID',
    options: { 'app-id': { required: true } },
    request: (o) => ({ method: 'POST', path: `/admin/v1/apps/${encodeURIComponent(o['app-id']!)}/${action}` }),
  };
}

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const json = rest.includes('--json');
  // Own commands only: `constructor` or `toString` is an unknown command, not Object.prototype's member.
  const command = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  try {
    if (!command) throw new UsageError(name ? `unknown command ${name}` : 'no command given');
    const { values } = parseArgs({
      args: rest,
      strict: true,
      options: {
        json: { type: 'boolean' },
        ...Object.fromEntries(Object.keys(command.options).map((k) => [k, { type: 'string' as const }])),
      },
    });
    const options = values as Record<string, string>;
    for (const [key, spec] of Object.entries(command.options)) {
      if (spec.required && (spec.allowEmpty ? options[key] === undefined : !options[key])) {
        throw new UsageError(`--${key} is required`);
      }
    }
    const config = loadConfig();
    const token = config.adminToken ?? readTokenFile(config.dataDir);
    const { method, path, body } = command.request(options);
    const response = await fetch(new URL(path, config.adminUrl), {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const payload = (await response.json().catch(() => ({}))) as { data?: unknown; error?: unknown };
    if (!response.ok) {
      print(json, { error: payload.error ?? { code: 'HTTP_' + response.status, message: response.statusText } });
      return 1;
    }
    print(json, payload.data);
    return 0;
  } catch (error) {
    const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    const message = error instanceof ConfigError || usage ? (error as Error).message : describe(error);
    const help = usage ? `\n${helpText()}` : '';
    if (json) print(true, { error: { code: usage ? 'USAGE' : 'CLI_ERROR', message } });
    else process.stderr.write(`admin: ${message}${help}\n`);
    return usage ? 2 : 1;
  }
}

function readTokenFile(dataDir: string): string {
  const file = join(dataDir, 'admin-token');
  if (!existsSync(file)) {
    throw new Error(`no ADMIN_TOKEN set and no ${file}; start the service once or set ADMIN_TOKEN`);
  }
  return readFileSync(file, 'utf8').trim();
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'the service is not running at ADMIN_URL';
  return (error as Error).message ?? String(error);
}

function print(json: boolean, value: unknown) {
  if (json) {
    process.stdout.write(`${JSON.stringify(value)}\n`);
    return;
  }
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function helpText(): string {
  return ['usage: npm run admin -- <command> [options] [--json]', ...Object.entries(COMMANDS).map(([n, c]) => `  ${n} ${c.usage}`)].join('\n');
}

process.exitCode = await main(process.argv.slice(2));
