import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { TokenClaims } from './jwt.js';

export const PUBLIC_ROUTE = 'nudge:public';
export const REQUIRED_SCOPE = 'nudge:scope';

/** A route anyone may call: health, metrics, docs, the dashboard's page. */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/** A route for tokens whose `scope` contains the given scope (ops and service calls). */
export const RequireScope = (scope: 'ops') => SetMetadata(REQUIRED_SCOPE, scope);

/** The verified claims of the request's bearer token. */
export const Auth = createParamDecorator((_data: unknown, context: ExecutionContext): TokenClaims => {
  return context.switchToHttp().getRequest().auth;
});
