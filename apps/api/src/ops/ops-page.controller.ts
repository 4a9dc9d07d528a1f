import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { DomainError } from '@nudge/config';
import { Public } from '../auth/auth.decorators.js';

/**
 * The page's own scripts, styles and API calls only: no inline script or
 * style, no third party, not framable. The token the operator types never
 * leaves for another origin.
 */
export const OPS_PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * apps/api/public/ops, found by walking up from this file: the source runs
 * from apps/api/src/ops (tests, tsx) and the build from
 * dist/apps/api/src/ops, and both sit under the folder that holds apps/api/public
 * (the Dockerfile copies it beside dist/). The working directory is the last resort.
 */
export function findOpsPageFolder(): string {
  const relative = join('apps', 'api', 'public', 'ops');
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, relative);
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return join(process.cwd(), relative);
}

/**
 * GET /ops: the operator dashboard, plain ES modules and CSS served as they
 * are (no build step). The page is public; every figure on it comes from the
 * ops API, which needs an ops-scoped token.
 */
@ApiExcludeController()
@Public()
@Controller('ops')
export class OpsPageController {
  private readonly folder = findOpsPageFolder();
  // Only the files present at boot, so a request never names a path.
  private readonly assets = new Set(
    existsSync(this.folder) ? readdirSync(this.folder).filter((name) => /^[a-z0-9-]+\.(js|css|svg)$/.test(name)) : [],
  );

  @Get()
  page(@Res() response: Response): Promise<void> {
    return this.send(response, 'index.html');
  }

  @Get(':asset')
  asset(@Param('asset') asset: string, @Res() response: Response): Promise<void> {
    if (!this.assets.has(asset)) throw DomainError.notFound('The file');
    return this.send(response, asset);
  }

  private async send(response: Response, name: string): Promise<void> {
    let body: Buffer;
    try {
      body = await readFile(join(this.folder, name));
    } catch {
      throw DomainError.notFound('The dashboard');
    }
    response
      .status(200)
      .set({
        'Content-Type': TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream',
        'Content-Security-Policy': OPS_PAGE_CSP,
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        // Small files that change with a deploy: revalidate rather than cache stale code.
        'Cache-Control': 'no-cache',
      })
      .send(body);
  }
}
