import { describe, expect, it } from 'vitest';
import { maskPushToken } from './mask-token.js';

describe('maskPushToken', () => {
  it('shows only the last four characters', () => {
    expect(maskPushToken('740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bba1b2')).toBe('…a1b2');
    expect(maskPushToken('sim-invalid-abcd')).toBe('…abcd');
  });

  it('hides short tokens entirely', () => {
    expect(maskPushToken('abc1234')).toBe('…');
    expect(maskPushToken('')).toBe('…');
  });
});
