import { QueryFailedError, QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from './problem-details.filter.js';

// What a request meets while PostgreSQL restarts must read as "unavailable" (503), and a real bug must not.
describe('isDatabaseUnavailable', () => {
  it.each([
    ['a released query runner', new QueryRunnerAlreadyReleasedError()],
    // Seen as a 500 in the database-restart test: an EntityManager inside a transaction whose connection died.
    ['a released query runner, through the EntityManager', new QueryRunnerProviderAlreadyReleasedError()],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a shutdown, wrapped by TypeORM', new QueryFailedError('SELECT 1', [], Object.assign(new Error('terminating'), { code: '57P01' }))],
    ['a terminated connection', new Error('Connection terminated unexpectedly')],
  ])('%s', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it('leaves real errors alone', () => {
    expect(isDatabaseUnavailable(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(false);
    expect(isDatabaseUnavailable(new QueryFailedError('SELECT', [], Object.assign(new Error('syntax'), { code: '42601' })))).toBe(false);
  });
});
