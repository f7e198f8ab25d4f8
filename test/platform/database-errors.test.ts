import { createServer } from 'node:net';
import { once } from 'node:events';
import { PrismaPg } from '@prisma/adapter-pg';
import { describe, expect, it } from 'vitest';
import { PrismaClient } from '../../src/generated/prisma/client.js';
import type { GraphQLError } from 'graphql';
import { maskError } from '../../src/graphql/maskError.js';
import { AppError, DatabaseUnavailableError, isDatabaseUnavailable, toAppError } from '../../src/services/kernel/index.js';

/**
 * The one rule that tells a database outage from a fault (services/kernel/prisma.ts
 * isDatabaseUnavailable), and what it becomes: 503 SERVICE_UNAVAILABLE with Retry-After for REST
 * (toAppError) and in GraphQL's extensions (maskError), never INTERNAL_ERROR. The errors are the
 * ones Prisma, its PostgreSQL adapter and node-postgres raise (as seen against a server that is
 * down, restarting or whose backend was terminated), and a few that are not outages.
 */

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const adapterError = (cause: Record<string, unknown>) => ({ name: 'DriverAdapterError', cause });
const known = (code: string, cause?: Record<string, unknown>) =>
  Object.assign(new Error(`Invalid prisma invocation: ${code}`), { name: 'PrismaClientKnownRequestError', code, meta: cause ? { driverAdapterError: adapterError(cause) } : {} });

describe('isDatabaseUnavailable', () => {
  it('is true for a server Prisma cannot reach (as Prisma raises it)', async () => {
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: `postgresql://postgres@127.0.0.1:${await closedPort()}/none`, connectionTimeoutMillis: 1_000 }) });
    try {
      const model = await prisma.channel.findMany({ take: 1 }).catch((e: unknown) => e);
      const raw = await prisma.$queryRaw`SELECT 1`.catch((e: unknown) => e);
      expect(isDatabaseUnavailable(model)).toBe(true);
      expect(isDatabaseUnavailable(raw)).toBe(true);
      expect(toAppError(model)).toBeInstanceOf(DatabaseUnavailableError);
    } finally {
      await prisma.$disconnect();
    }
  });

  it.each([
    ['P1001 unreachable', known('P1001', { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 })],
    ['P1017 the server closed the connection', known('P1017')],
    ['P2024 no connection from the pool in time', known('P2024')],
    ['a terminated backend (57P01) in a raw query', known('P2010', { kind: 'postgres', code: '57P01', message: 'terminating connection due to administrator command' })],
    ['the server starting up (57P03)', known('P2010', { kind: 'postgres', code: '57P03', message: 'the database system is starting up' })],
    ['a connection exception (08006)', known('P2010', { kind: 'postgres', code: '08006' })],
    ['a connection reset', known('P2010', { kind: 'ConnectionClosed' })],
    ['node-postgres: Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    ['node-postgres: a client with a connection error', new Error('Client has encountered a connection error and is not queryable')],
    ['node-postgres: the connect timeout', new Error('Connection terminated due to connection timeout')],
    ['a socket error', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect', errno: -111 })],
  ])('is true for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', known('P2002')],
    ['a missing table', known('P2021', { kind: 'TableDoesNotExist' })],
    ['a check constraint (23514) in a raw query', known('P2010', { kind: 'postgres', code: '23514' })],
    ['a plain error', new Error('something else')],
    ['not an error', 'Connection terminated'],
  ])('is false for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('an outage as the client sees it', () => {
  it('REST: 503 SERVICE_UNAVAILABLE, Retry-After 5, details.retry_after; a booking named when given', () => {
    const mapped = toAppError(new Error('Connection terminated unexpectedly'));
    expect(mapped).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', details: { retry_after: 5 }, headers: { 'Retry-After': '5' } });
    expect(new DatabaseUnavailableError('b-1').details).toEqual({ retry_after: 5, booking_id: 'b-1' });
    // A fault is still masked.
    expect(toAppError(new Error('a bug'))).toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
  });

  it('GraphQL: the same code and details in extensions; a fault stays INTERNAL_ERROR without details', () => {
    const masked = (error: unknown) => (maskError(error, '') as GraphQLError).extensions;
    expect(masked(new Error('Connection terminated unexpectedly'))).toEqual({ code: 'SERVICE_UNAVAILABLE', details: { retry_after: 5 } });
    expect(masked(new Error('a bug'))).toEqual({ code: 'INTERNAL_ERROR' });
    expect(masked(new AppError(409, 'BOOKING_CHANGED', 'changed'))).toEqual({ code: 'BOOKING_CHANGED', details: null });
  });
});
