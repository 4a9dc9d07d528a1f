import { createHash } from 'node:crypto';
import {
  applyDecorators,
  type CallHandler,
  createParamDecorator,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  type OnModuleInit,
  UseInterceptors,
} from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request, Response } from 'express';
import { from, lastValueFrom, type Observable } from 'rxjs';
import type { DataSource, EntityManager } from 'typeorm';
import { Clock, DomainError } from '@nudge/config';
import { UserEvents } from '@nudge/users';
import type { TokenClaims } from '../auth/jwt.js';
import { claimKey, forgetKeys, storeAnswer } from './idempotency-keys.repository.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** Set on an answer that is a replay of the first one. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** An idempotency key, in the header or a body field (POST /v1/notifications): 1–255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const TRANSACTION = Symbol('nudge:idempotent-transaction');

type GuardedRequest = Request & { auth?: TokenClaims; [TRANSACTION]?: EntityManager };

/**
 * A creating POST that honours `Idempotency-Key`. Its handler takes
 * `@RequestTransaction()` and hands it to the service, which writes in it (or
 * in a transaction of its own when the request carries no key).
 */
export function Idempotent(): MethodDecorator {
  return applyDecorators(
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: false,
      description:
        '1 to 255 printable ASCII characters. The same key and body again: the first answer (status and body) with `Idempotent-Replayed: true`, nothing created; another body with it: 409; while the first is in flight the second waits for its outcome. An error answer is not kept: fix the request and retry with the same key.',
    }),
  );
}

/**
 * The transaction that holds the request's Idempotency-Key, or undefined
 * when the request has none: the service's creating write must join it.
 */
export const RequestTransaction = createParamDecorator(
  (_data: unknown, context: ExecutionContext): EntityManager | undefined =>
    context.switchToHttp().getRequest<GuardedRequest>()[TRANSACTION],
);

/**
 * HTTP idempotency for creating POSTs (Stripe's `Idempotency-Key`). Keys
 * belong to the token's subject (a user, or the ops caller): another
 * principal's same key is another key. The request is identified by method,
 * path and body (canonical JSON, so key order does not matter).
 *
 * One transaction holds the claim of the key, the handler's writes and the
 * stored answer: they commit together, or — an error answer, a crash, a lost
 * connection — roll back together, so a key never points to nothing and a
 * resource never lacks its key. Error answers are therefore not kept: the
 * client may fix the request and retry with the same key.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<GuardedRequest>();
    const response = context.switchToHttp().getResponse<Response>();
    const key = request.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
    if (key === undefined) return next.handle();
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw DomainError.invalid([{ path: IDEMPOTENCY_KEY_HEADER, message: 'Idempotency-Key must be 1 to 255 printable ASCII characters' }]);
    }
    const principal = request.auth!.userId;
    const requestHash = hashOf(request);
    return from(
      this.dataSource.transaction(async (tx) => {
        const first = await claimKey(tx, { principal, key, requestHash, now: this.clock.now() });
        if (first) {
          if (first.requestHash !== requestHash) {
            throw DomainError.conflict('This Idempotency-Key was already used with a different request.');
          }
          response.status(first.statusCode).setHeader(REPLAYED_HEADER, 'true');
          return first.response;
        }
        request[TRANSACTION] = tx;
        try {
          const answer = await lastValueFrom(next.handle(), { defaultValue: undefined });
          // Nest set the route's status before the interceptors ran; a handler may have changed it since.
          await storeAnswer(tx, { principal, key, statusCode: response.statusCode, response: answer });
          return answer;
        } finally {
          delete request[TRANSACTION];
        }
      }),
    );
  }
}

/**
 * A deleted user's keys go with the user (DELETE /v1/me, in its transaction):
 * their stored answers hold the user's reminders, and an account created again
 * under the same id must not be answered with them.
 */
@Injectable()
export class IdempotencyKeyErasure implements OnModuleInit {
  constructor(private readonly userEvents: UserEvents) {}

  onModuleInit(): void {
    this.userEvents.onDeleted((tx, userId) => forgetKeys(tx, userId));
  }
}

/** Method, path and body: the same key with another of them is another request (409). */
function hashOf(request: Request): string {
  return createHash('sha256')
    .update(`${request.method} ${request.originalUrl}\n${canonicalJson(request.body ?? null)}`)
    .digest('hex');
}

/** JSON with object keys sorted (and undefined members dropped), so that key order does not make another request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    return `{${Object.keys(object)
      .sort()
      .filter((k) => object[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(object[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
