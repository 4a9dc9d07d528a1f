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
        'Ops and service endpoints need a token whose `scope` contains `ops`.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT (HS256)' })
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
