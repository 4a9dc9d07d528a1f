import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { ROOT } from '../support/child.js';
import type { FakeServices } from './fake-services.js';

export interface RunningServices {
  services: FakeServices;
  stop(): Promise<void>;
}

/** The push services' fakes (fake-services.ts) in a process of their own, answering after `latencyMs`. */
export async function startFakeServices(latencyMs: number): Promise<RunningServices> {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'bench/push/fake-services.ts')], {
    cwd: ROOT,
    env: { ...process.env, BENCH_CONFIG: JSON.stringify({ latencyMs }) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const stop = async () => {
    child.stdin.end();
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  };
  try {
    const services = await new Promise<FakeServices>((resolvePromise, reject) => {
      let buffered = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const line = buffered.split('\n').find((l) => l.startsWith('SERVICES '));
        if (line) resolvePromise(JSON.parse(line.slice('SERVICES '.length)) as FakeServices);
      });
      child.on('exit', (code) => reject(new Error(`fake services exited with ${code}`)));
    });
    return { services, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
