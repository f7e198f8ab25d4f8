/**
 * Child process of `npm run bench`: the Hono twin, a bare Hono app on @hono/node-server (no
 * middleware) that answers each request from memory with the service's own answer to it
 * (bench/answers.ts, from TWIN_ANSWERS_FILE, by method and URL): the same status, headers and body,
 * per-request values made afresh, as the plain twin (bench/serve-plain.ts). A request body is read
 * (`c.req.arrayBuffer()`) before answering, as the service reads it. Prints `{"port":…}` as one JSON
 * line on stdout; answers `cpu` over IPC.
 */
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { loadAnswers } from './answers.js';
import { serveTwin } from './children.js';

const file = process.env.TWIN_ANSWERS_FILE;
if (!file) {
  console.error('serve-hono: TWIN_ANSWERS_FILE is required');
  process.exit(2);
}
const { keepAliveTimeoutMs, answers } = loadAnswers(file);

const app = new Hono();
app.all('*', async (c) => {
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') await c.req.arrayBuffer();
  const url = c.req.url;
  const answer = answers.get(`${c.req.method} ${url.slice(url.indexOf('/', url.indexOf('//') + 2))}`);
  if (!answer) return c.body(null, 404);
  const flat = answer.headers();
  const headers: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) headers[flat[i]!] = flat[i + 1]!;
  return c.body(answer.body() as Uint8Array<ArrayBuffer>, answer.status as 200, headers);
});

const server = createAdaptorServer({ fetch: app.fetch }) as Server;
if (keepAliveTimeoutMs) server.keepAliveTimeout = keepAliveTimeoutMs;

serveTwin(server);
