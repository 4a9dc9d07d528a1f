import { describe, expect, it, vi } from 'vitest';
import { AppProviders } from './app-providers.js';
import { createPushProviders, type PushProviders } from './provider-registry.js';

const db = { query: async () => ({}) };
const providers = () => createPushProviders({}, { db });

describe('AppProviders', () => {
  it('gives the default app the providers of the environment', async () => {
    const defaults = providers();
    const build = vi.fn();
    const apps = new AppProviders(defaults, { build });
    expect(await apps.forApp('default', null)).toBe(defaults);
    expect(build).not.toHaveBeenCalled();
  });

  it('builds an app once per version, and again after its version changes (a PUT)', async () => {
    const built: PushProviders[] = [];
    const apps = new AppProviders(providers(), {
      build: async () => {
        built.push(providers());
        return { version: built.length, providers: built.at(-1)! };
      },
    });
    const first = await apps.forApp('shop', 1);
    expect(await apps.forApp('shop', 1)).toBe(first);
    const second = await apps.forApp('shop', 2);
    expect(second).not.toBe(first);
    expect(await apps.forApp('shop', 2)).toBe(second);
    expect(built).toHaveLength(2);
    await apps.close();
  });

  it('turns credentials that cannot be used into configuration_error answers, which the delivery marks failing', async () => {
    const apps = new AppProviders(providers(), {
      build: async () => {
        throw new Error('sealed under another NUDGE_SECRET_KEY');
      },
    });
    const ios = (await apps.forApp('shop', 3)).forPlatform('ios');
    expect(ios.name).toBe('apns');
    expect(await ios.send({ token: 't', platform: 'ios', title: 'x', collapseId: 'c' })).toEqual({
      kind: 'configuration_error',
      reason: 'the credentials of app shop cannot be used: sealed under another NUDGE_SECRET_KEY',
    });
  });

  it('does not keep providers it could not build: the next send tries again', async () => {
    let calls = 0;
    const apps = new AppProviders(providers(), {
      build: async () => {
        if (++calls === 1) throw new Error('connection terminated');
        return { version: 1, providers: providers() };
      },
    });
    expect((await apps.forApp('shop', 1)).forPlatform('ios').name).toBe('apns');
    expect((await apps.forApp('shop', 1)).forPlatform('ios').name).toBe('simulated');
    expect(calls).toBe(2);
    await apps.close();
  });

  it('closes replaced providers at close', async () => {
    const old = providers();
    const close = vi.spyOn(old, 'close');
    let version = 0;
    const apps = new AppProviders(providers(), {
      build: async () => ({ version: ++version, providers: version === 1 ? old : providers() }),
    });
    await apps.forApp('shop', 1);
    await apps.forApp('shop', 2);
    expect(close).not.toHaveBeenCalled();
    await apps.close();
    expect(close).toHaveBeenCalled();
  });
});
