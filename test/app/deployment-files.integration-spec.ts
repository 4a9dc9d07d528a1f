import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig, VARIABLES } from '@nudge/config';

// There is no Docker engine here; this checks what can be checked without one.
describe('docker-compose.yml', () => {
  const compose = parse(readFileSync('docker-compose.yml', 'utf8'));
  const known = new Set(VARIABLES.map((v) => v.name));

  it('runs PostgreSQL, the API and a worker, each with a healthcheck', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'postgres', 'worker']);
    for (const service of Object.values<any>(compose.services)) expect(service.healthcheck?.test).toBeDefined();
  });

  it('sets only variables that the config schema knows, with values it accepts', () => {
    for (const name of ['api', 'worker']) {
      const env: Record<string, string> = compose.services[name].environment;
      for (const variable of Object.keys(env)) expect(known, `${name}: ${variable}`).toContain(variable);
      const resolved = Object.fromEntries(
        Object.entries(env).map(([k, v]) => [k, String(v).startsWith('${AUTH_JWT_SECRET') ? 'x'.repeat(40) : String(v)]),
      );
      expect(() => loadConfig(resolved)).not.toThrow();
      expect(loadConfig(resolved).role).toBe(name);
    }
  });

  it("gives the worker longer to stop than its shutdown can take (Docker's default of 10 s would SIGKILL it mid-stop)", () => {
    // QueueModule's shutdownDeadlineMs (30 s) + the handlers' wind-down (at most 1 s) + the last writes (at most 5 s).
    const grace = /^(\d+)s$/.exec(String(compose.services.worker.stop_grace_period));
    expect(grace, 'worker.stop_grace_period in seconds').not.toBeNull();
    expect(Number(grace![1])).toBeGreaterThan(30 + 1 + 5);
  });

  it('builds from a Dockerfile whose commands start the built apps', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    expect(dockerfile).toMatch(/npm ci/);
    // Production runs the current LTS (its ICU carries current tzdata), in both stages.
    expect(dockerfile.match(/^FROM node:(\d+)/gm)).toEqual(['FROM node:24', 'FROM node:24']);
    expect(dockerfile).toMatch(/npm run build/);
    for (const name of ['api', 'worker']) {
      const command: string[] = compose.services[name].command;
      expect(command[1]).toMatch(/^dist\/apps\/(api|worker)\/src\/main\.js$/);
    }
  });
});
