import { describe, expect, it } from 'vitest';
import { type CategoryPreference, categoryOrFail, underPreference } from './category-preferences.js';

const user = { timeZone: 'Europe/Berlin', quietHoursStart: '22:00', quietHoursEnd: '07:00' };
const preference = (over: Partial<CategoryPreference> = {}): CategoryPreference => ({
  category: 'medication',
  enabled: true,
  quietHoursStart: null,
  quietHoursEnd: null,
  allowTimeSensitive: true,
  updatedAt: new Date(0),
  ...over,
});

describe('underPreference', () => {
  it("leaves the user's settings alone without a preference", () => {
    expect(underPreference(user, true, undefined)).toEqual({ user, timeSensitive: true, enabled: true });
  });

  it("replaces the user's quiet hours with the category's own, and keeps the user's when it has none", () => {
    const own = underPreference(user, false, preference({ quietHoursStart: '12:00', quietHoursEnd: '13:00' }));
    expect(own.user).toEqual({ timeZone: 'Europe/Berlin', quietHoursStart: '12:00', quietHoursEnd: '13:00' });
    expect(underPreference(user, false, preference()).user).toBe(user);
  });

  it('makes time-sensitive pushes ordinary where the category does not allow them, and says whether it is on', () => {
    expect(underPreference(user, true, preference({ allowTimeSensitive: false })).timeSensitive).toBe(false);
    expect(underPreference(user, false, preference({ allowTimeSensitive: true })).timeSensitive).toBe(false);
    expect(underPreference(user, true, preference({ enabled: false })).enabled).toBe(false);
  });
});

describe('categoryOrFail', () => {
  it('lowercases a valid name and refuses others with a 400 naming the field', () => {
    expect(categoryOrFail('Orders:Shipping_v1.x-2')).toBe('orders:shipping_v1.x-2');
    for (const bad of ['', 'a b', 'é', 'x'.repeat(65), 'a/b']) {
      expect(() => categoryOrFail(bad), bad).toThrow(expect.objectContaining({ errors: [expect.objectContaining({ path: 'category' })] }));
    }
  });
});
