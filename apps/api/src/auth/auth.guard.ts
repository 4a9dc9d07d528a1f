import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Clock, DomainError } from '@nudge/config';
import { PUBLIC_ROUTE, REQUIRED_SCOPE } from './auth.decorators.js';
import { InvalidTokenError } from './jwt.js';
import { KeysUnavailableError, TokenVerifier } from './token-verifier.js';

/** Every route needs a valid bearer token unless it is marked @Public(). */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: TokenVerifier,
    private readonly clock: Clock,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;

    const request = context.switchToHttp().getRequest();
    const header: unknown = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(header) : null;
    if (!match) throw new DomainError('unauthenticated', 'A bearer token is required.');
    try {
      request.auth = await this.verifier.verify(match[1], this.clock.now());
    } catch (error) {
      if (error instanceof InvalidTokenError) throw new DomainError('unauthenticated', `Unauthorized: ${error.message}.`);
      if (error instanceof KeysUnavailableError)
        throw new DomainError('unavailable', `The token cannot be checked now: ${error.message}; retry shortly.`);
      throw error;
    }
    const scope = this.reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, targets);
    if (scope && !request.auth.scopes.includes(scope)) {
      throw new DomainError('forbidden', `This endpoint needs a token with the "${scope}" scope.`);
    }
    return true;
  }
}
