import type { LightMyRequestResponse } from 'fastify';
import { hashApiKey } from '../../src/tenancy/api-keys';
import type { ApiFixture } from './api-fixture';

/** API keys of the route tests: one for tenant `acme`, one for `globex`, and an admin key. */
export const TEST_KEYS = { acme: 'key-acme-123', globex: 'key-globex-456', admin: 'key-admin-789' };

/** The config entries (`apiKeys`) of {@link TEST_KEYS}. */
export const testApiKeys = [
  { sha256: hashApiKey(TEST_KEYS.acme), tenant: 'acme' },
  { sha256: hashApiKey(TEST_KEYS.globex), tenant: 'globex' },
  { sha256: hashApiKey(TEST_KEYS.admin), admin: true },
];

/** `app.inject` of the fixture's current app with `Authorization: Bearer <key>` (none for null) and an optional JSON body. */
export function requestAs(fixture: () => ApiFixture) {
  return (key: string | null, method: string, url: string, payload?: unknown): Promise<LightMyRequestResponse> =>
    fixture().app.inject({
      method: method as 'GET',
      url,
      headers: key ? { authorization: `Bearer ${key}` } : {},
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
}
