import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect } from 'node:net';

/**
 * A redis-server of one test's own on a free loopback port, which the test may freeze (SIGSTOP, as
 * a stalled host) and thaw, or kill: never the machine's shared Redis, which other tests use.
 * Nothing is persisted. `available` is false where redis-server is not installed.
 */
export interface PrivateRedis {
  readonly url: string;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export const redisServerAvailable = spawnSync('redis-server', ['--version']).status === 0;

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once something accepts connections on `port`, or rejects after `timeoutMs`. */
async function accepting(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  await accepting(port, 10_000);
  let frozen = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    freeze() {
      frozen = true;
      child.kill('SIGSTOP');
    },
    thaw() {
      frozen = false;
      child.kill('SIGCONT');
    },
    async close() {
      if (child.exitCode !== null) return;
      if (frozen) child.kill('SIGCONT');
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
