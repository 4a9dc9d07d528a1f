// Errors that services throw. Each carries a code; the API's one exception
// filter maps the code to an HTTP status and an RFC 9457 problem document, so
// no service knows about HTTP.

export type DomainErrorCode =
  | 'invalid_input'
  | 'not_found'
  | 'conflict'
  | 'unauthenticated'
  | 'forbidden'
  | 'payload_too_large'
  | 'rate_limited'
  /** A dependency (an identity provider's keys) cannot be reached: retry. */
  | 'unavailable';

export interface FieldError {
  /** Where the problem is, e.g. `quietHours.start` or `recurrence`. */
  path: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly errors?: FieldError[],
  ) {
    super(message);
    this.name = 'DomainError';
  }

  static invalid(errors: FieldError[], message = 'The request has invalid fields.'): DomainError {
    return new DomainError('invalid_input', message, errors);
  }

  static notFound(what: string): DomainError {
    return new DomainError('not_found', `${what} was not found.`);
  }

  static conflict(message: string): DomainError {
    return new DomainError('conflict', message);
  }
}
