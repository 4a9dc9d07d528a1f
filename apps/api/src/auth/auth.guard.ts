import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Clock, CONFIG, type Config, DomainError } from '@nudge/config';
import { PUBLIC_ROUTE, REQUIRED_SCOPE } from './auth.decorators.js';
import { InvalidTokenError, verifyToken } from './jwt.js';

/** Every route needs a valid bearer token unless it is marked @Public(). */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(CONFIG) private readonly config: Config,
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
      request.auth = await verifyToken(this.config.authJwtSecret, match[1], this.clock.now());
    } catch (error) {
      if (error instanceof InvalidTokenError) throw new DomainError('unauthenticated', `Unauthorized: ${error.message}.`);
      throw error;
    }
    const scope = this.reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, targets);
    if (scope && !request.auth.scopes.includes(scope)) {
      throw new DomainError('forbidden', `This endpoint needs a token with the "${scope}" scope.`);
    }
    return true;
  }
}
