import { type DynamicModule, type ExecutionContext, Injectable, type Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  ThrottlerException,
  ThrottlerGuard,
  ThrottlerModule,
  type ThrottlerLimitDetail,
  type ThrottlerOptions,
  type ThrottlerRequest,
} from '@nestjs/throttler';
import type { Request } from 'express';
import type { Config } from '@nudge/config';
import type { TokenClaims } from '../auth/jwt.js';

const MINUTE_MS = 60_000;
const IP = 'ip';
const USER = 'user';
// Probes and scrapes must never be refused.
const EXEMPT = /^\/(health|metrics)(\/|$|\?)/;

/** A 429 that carries the real wait, which the problem filter puts in Retry-After. */
export class RateLimitedException extends ThrottlerException {
  constructor(readonly retryAfterSeconds: number) {
    super();
  }
}

abstract class OneThrottlerGuard extends ThrottlerGuard {
  protected abstract readonly throttler: string;

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return EXEMPT.test(context.switchToHttp().getRequest<Request>().originalUrl ?? '');
  }

  // Each guard runs one of the two limits: the IP one before authentication,
  // the user one after it (it needs the verified subject).
  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    if (request.throttler.name !== this.throttler) return true;
    return super.handleRequest(request);
  }

  protected override async throwThrottlingException(_context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    throw new RateLimitedException(Math.max(1, detail.timeToBlockExpire));
  }
}

/** Per client IP, before authentication: also slows down token guessing. */
@Injectable()
export class IpRateLimitGuard extends OneThrottlerGuard {
  protected readonly throttler = IP;
}

/** Per user (the verified token subject), after authentication. */
@Injectable()
export class UserRateLimitGuard extends OneThrottlerGuard {
  protected readonly throttler = USER;
}

const authOf = (context: ExecutionContext): TokenClaims | undefined => context.switchToHttp().getRequest<{ auth?: TokenClaims }>().auth;

/**
 * The rate limits as configured (RATE_LIMIT_PER_MINUTE per user,
 * RATE_LIMIT_PER_IP_PER_MINUTE per IP; 0 turns one off). Counters live in the
 * process: with several API processes, each allows the limit.
 */
export function rateLimiting(config: Config): { imports: DynamicModule[]; beforeAuth: Provider[]; afterAuth: Provider[] } {
  const throttlers: ThrottlerOptions[] = [];
  if (config.rateLimitPerIpPerMinute > 0) {
    throttlers.push({ name: IP, ttl: MINUTE_MS, limit: config.rateLimitPerIpPerMinute, getTracker: (req) => `ip:${(req as Request).ip}` });
  }
  if (config.rateLimitPerMinute > 0) {
    throttlers.push({
      name: USER,
      ttl: MINUTE_MS,
      limit: config.rateLimitPerMinute,
      getTracker: (req) => `user:${(req as { auth?: TokenClaims }).auth?.userId}`,
      // Public routes have no user; service-to-service (ops) callers send on behalf of many users.
      skipIf: (context) => !authOf(context) || authOf(context)!.scopes.includes('ops'),
    });
  }
  if (throttlers.length === 0) return { imports: [], beforeAuth: [], afterAuth: [] };
  return {
    imports: [ThrottlerModule.forRoot({ throttlers })],
    beforeAuth: config.rateLimitPerIpPerMinute > 0 ? [{ provide: APP_GUARD, useClass: IpRateLimitGuard }] : [],
    afterAuth: config.rateLimitPerMinute > 0 ? [{ provide: APP_GUARD, useClass: UserRateLimitGuard }] : [],
  };
}
