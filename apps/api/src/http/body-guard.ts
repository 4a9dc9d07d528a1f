import type { NextFunction, Request, Response } from 'express';
import { DomainError, type FieldError } from '@nudge/config';

/** Deeper than any body of ours; class-transformer recurses once per level and would overflow the stack. */
export const MAX_JSON_DEPTH = 32;

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/** An error shaped like body-parser's, so the problem filter maps it as it maps theirs. */
function unsupportedMediaType(type: 'content.type.unsupported' | 'charset.unsupported'): Error {
  return Object.assign(new Error('unsupported media type'), { type, status: 415, expose: true });
}

/**
 * Before the JSON body parser: a body that is not JSON is refused with 415
 * instead of being ignored (a PATCH with a form body would otherwise "succeed"
 * with no change), and so is JSON in another charset than UTF-8 (RFC 8259):
 * body-parser would decode UTF-16, and a lone NUL byte as UTF-16 became an
 * empty body, a PATCH that "succeeded".
 */
export function requireJsonBody() {
  return (request: Request, _response: Response, next: NextFunction) => {
    const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
    if (!hasBody || !['POST', 'PUT', 'PATCH'].includes(request.method)) return next();
    const contentType = request.headers['content-type'] ?? '';
    if (!JSON_TYPE.test(contentType)) return next(unsupportedMediaType('content.type.unsupported'));
    const charset = CHARSET.exec(contentType)?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return next(unsupportedMediaType('charset.unsupported'));
    next();
  };
}

/**
 * Before routing: a NUL character in the path or the query string, which no
 * route's rule refuses and PostgreSQL cannot hold in text (a 500 at the first
 * query that compared it, e.g. GET /v1/ops/users/a%00b), is a 400 naming the
 * query parameter, or `path`.
 */
export function guardUrl() {
  return (request: Request, _response: Response, next: NextFunction) => {
    const errors: FieldError[] = [];
    if (/%00/i.test(request.path)) errors.push({ path: 'path', message: 'the path must not contain NUL characters (%00)' });
    for (const [name, value] of Object.entries(request.query ?? {})) {
      const values = (Array.isArray(value) ? value : [value]).map(String);
      if (name.includes('\u0000') || values.some((v) => v.includes('\u0000'))) {
        errors.push({ path: name.replaceAll('\u0000', '\\0'), message: 'query parameters must not contain NUL characters (%00)' });
      }
    }
    next(errors.length > 0 ? DomainError.invalid(errors) : undefined);
  };
}

/**
 * After the JSON body parser: refuses what no DTO rule would catch safely —
 * nesting deeper than MAX_JSON_DEPTH (a stack overflow in the validator, a 500)
 * NUL characters, which PostgreSQL cannot store in text (a 500 at INSERT), and
 * lone UTF-16 surrogates ("\ud800"), which PostgreSQL refuses in jsonb.
 * Walks the body with an explicit stack, so the walk itself cannot overflow.
 */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATE_ALL = new RegExp(LONE_SURROGATE.source, 'g');

export function guardJsonBody() {
  return (request: Request, _response: Response, next: NextFunction) => {
    const body: unknown = request.body;
    if (body === null || typeof body !== 'object') return next();
    const errors: FieldError[] = [];
    const stack: [unknown, string, number][] = [[body, '', 0]];
    while (stack.length > 0 && errors.length < 20) {
      const [value, path, depth] = stack.pop()!;
      if (typeof value === 'string') {
        if (value.includes('\u0000')) errors.push({ path, message: `${path || 'body'} must not contain NUL characters` });
        else if (LONE_SURROGATE.test(value))
          errors.push({ path, message: `${path || 'body'} must be well-formed Unicode (no lone surrogates)` });
        continue;
      }
      if (value === null || typeof value !== 'object') continue;
      if (depth >= MAX_JSON_DEPTH) {
        errors.push({ path, message: `the body is nested deeper than ${MAX_JSON_DEPTH} levels` });
        break;
      }
      for (const [key, child] of Object.entries(value)) {
        const childPath = path ? `${path}.${key}` : key;
        if (key.includes('\u0000'))
          errors.push({ path: childPath.replaceAll('\u0000', '\\0'), message: 'field names must not contain NUL characters' });
        else if (LONE_SURROGATE.test(key))
          errors.push({ path: childPath.replace(LONE_SURROGATE_ALL, '\ufffd'), message: 'field names must be well-formed Unicode' });
        stack.push([child, childPath, depth + 1]);
      }
    }
    if (errors.length > 0) return next(DomainError.invalid(errors.map((e) => ({ ...e, path: e.path.replaceAll('\u0000', '\\0') }))));
    next();
  };
}
