import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/**
 * The OpenAPI description of the routes, served as JSON at `/api-docs.json` (no UI: the UI needs a
 * static-file plugin whose current version wants Node 22). Deprecated calls are marked so.
 */
export function publishApiDescription(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Deals, purchases and users service')
    .setDescription('Partner API. Money is in integer cents. See ../shared/spec/service-interface.md for the interface.')
    .setVersion('1')
    .addApiKey({ type: 'apiKey', in: 'query', name: 'api_key' }, 'api_key')
    .addBasicAuth({ type: 'http', scheme: 'basic', description: 'v3 calls: partner username and password' }, 'v3')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'a user access token' }, 'access_token')
    .build();
  SwaggerModule.setup('api-docs', app, () => SwaggerModule.createDocument(app, config), {
    ui: false,
    raw: ['json'],
    jsonDocumentUrl: 'api-docs.json',
  });
}
