import type { OpenAPIHono } from '@hono/zod-openapi';
import type { HttpEnv } from '../http.js';

/** v2 content (spec §4.6 "Content endpoints"): filled in by the next commit. */
export function v2ContentRoutes(_app: OpenAPIHono<HttpEnv>) {}
