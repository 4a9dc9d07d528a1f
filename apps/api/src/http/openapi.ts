import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

/**
 * Routes served but deliberately absent from the OpenAPI document: the
 * document itself (/docs, /docs-json, /docs-yaml), the Prometheus scrape
 * (/metrics) and the dashboard page with its files (/ops). None is JSON that
 * a client programs against. Everything else, health probes included, is documented.
 */
export const UNDOCUMENTED_ROUTES = [/^\/docs(-json|-yaml)?(\/|$)/, /^\/metrics$/, /^\/ops(\/|$)/];

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Nudge')
    .setDescription(
      'Reminders and push notifications for mobile apps. Errors are RFC 9457 application/problem+json. ' +
        'Bearer tokens are HS256 signed with AUTH_JWT_SECRET, or RS256/ES256 from an identity provider when AUTH_JWKS_URL is set. ' +
        'Ops and service endpoints need a token whose scopes contain `ops`.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT (HS256; RS256 or ES256 with AUTH_JWKS_URL)' })
    .build();
  return SwaggerModule.createDocument(app, config);
}

/** The document at /docs (Swagger UI) and /docs-json. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
  });
}
