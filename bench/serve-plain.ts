/**
 * Child process of `npm run bench`: the plain twin, a bare `node:http` server that answers each
 * request with the service's own answer to it (bench/answers.ts, from the file TWIN_ANSWERS_FILE,
 * looked up by method and URL): the same status, every header the service sent with the same
 * names and values (per-request values such as the request id made afresh, Date and Keep-Alive by
 * node:http as for the service), the same body. A request body, if any, is read to its end first.
 * A request the file has no answer for gets a 404 (counted as non-2xx by the bench).
 * Prints `{"port":…}` as one JSON line on stdout; answers `cpu` over IPC (process.cpuUsage()).
 */
import { createServer } from 'node:http';
import { loadAnswers } from './answers.js';
import { serveTwin } from './children.js';

const file = process.env.TWIN_ANSWERS_FILE;
if (!file) {
  console.error('serve-plain: TWIN_ANSWERS_FILE is required');
  process.exit(2);
}
const { keepAliveTimeoutMs, answers } = loadAnswers(file);

const server = createServer((req, res) => {
  req.resume();
  req.once('end', () => {
    const answer = answers.get(`${req.method} ${req.url}`);
    if (!answer) {
      res.writeHead(404, { 'content-length': 0 });
      res.end();
      return;
    }
    res.writeHead(answer.status, answer.headers());
    res.end(answer.body());
  });
});
if (keepAliveTimeoutMs) server.keepAliveTimeout = keepAliveTimeoutMs;

serveTwin(server);
