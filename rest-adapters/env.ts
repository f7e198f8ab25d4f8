import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { RequestContext } from '../src/context.js';

/** Hono's per-request variables, shared by every adapter. */
export type HttpEnv = {
  /** What @hono/node-server hands over: the node request (with the front's exchange) and response. */
  Bindings: { incoming: IncomingMessage; outgoing: ServerResponse };
  Variables: {
    requestId: string;
    clientIp: string | undefined;
    /** The caller is on this host, not behind a proxy (Exchange.local). */
    local: boolean;
    ctx: RequestContext;
  };
};

/** The handler of a documented route, typed by its definition (routes.ts beside handlers.ts). */
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, HttpEnv>;
