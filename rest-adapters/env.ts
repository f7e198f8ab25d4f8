import type { RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { Logger } from 'pino';
import type { RequestContext } from '../src/context.js';

/** Hono's per-request variables, shared by every adapter. */
export type HttpEnv = {
  Bindings: { incoming?: { socket?: { remoteAddress?: string; encrypted?: boolean } } };
  Variables: {
    requestId: string;
    logger: Logger;
    clientIp: string | undefined;
    ctx: RequestContext;
  };
};

/** The handler of a documented route, typed by its definition (routes.ts beside handlers.ts). */
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, HttpEnv>;
