import type { MiddlewareHandler } from 'hono';
import type { AppDeps } from '../../src/context.js';
import { PREFIX } from '../../src/services/access/index.js';
import { isOperatorToken } from '../../src/services/channels/index.js';
import { ForbiddenError, UnauthorizedError } from '../../src/services/kernel/index.js';
import type { HttpEnv } from '../env.js';

/** Who may use an operator surface (the operator API, /metrics). */
export interface OperatorRule {
  /** The surface, as refusals name it ("The operator API", "Metrics"). */
  name: string;
  /** Callers elsewhere than loopback are served (with the operator token), and the setting that says so. */
  allowRemote: boolean;
  remoteSetting: string;
  /** Loopback callers are served without the operator token (/metrics). */
  loopbackOpen?: boolean;
}

/**
 * The operator check, one for every operator surface: partner credentials (X-Api-Key, a channel's
 * bearer token) are refused with 403 FORBIDDEN; a caller that is not local (a loopback peer that
 * is not one of TRUSTED_PROXIES: anything through a proxy is remote) is refused with 403 FORBIDDEN unless the surface's
 * setting allows remote callers; then the operator token (Authorization: Bearer <ADMIN_TOKEN>) is
 * needed, 401 UNAUTHORIZED without it or with a wrong one; except on loopback for a surface
 * open there.
 */
export function operatorOnly(deps: AppDeps, rule: OperatorRule): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const authorization = c.req.header('authorization') ?? '';
    const bearer = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
    if (c.req.header('x-api-key') || bearer?.startsWith(PREFIX.accessToken)) {
      throw new ForbiddenError(`${rule.name} is refused to partner credentials`);
    }
    const loopback = c.get('local');
    if (!rule.allowRemote && !loopback) {
      throw new ForbiddenError(`${rule.name} answers only on loopback (set ${rule.remoteSetting}=true)`);
    }
    if (loopback && rule.loopbackOpen) return next();
    if (!bearer) throw new UnauthorizedError('Send the operator token as Authorization: Bearer <ADMIN_TOKEN>');
    if (!(await isOperatorToken(deps.db.prisma, deps.config.adminToken, bearer))) {
      throw new UnauthorizedError('The operator token is not valid');
    }
    await next();
  };
}
