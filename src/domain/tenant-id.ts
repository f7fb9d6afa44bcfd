/**
 * The syntax of a tenant id (docs/TENANTS.md "Tenant ids"): 1 to 200 characters, letters, digits
 * and `. _ : @ -`, starting with a letter or a digit, with no `..`. A tenant id is used in URL
 * paths (`/api/v1/tenants/{id}`), metric labels, Redis keys and log lines, so it holds no `/`, no
 * space, no control character and no `..` (a path segment that climbs); its first character is
 * never `_` (`_other` is the metrics' label for the tenants beyond their bound) nor `.`.
 * The length bound is the one `metadata.tenant_id` always had.
 */
export const TENANT_ID_PATTERN = '^(?!.*\\.\\.)[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$';

/** The rule in words, for error messages. */
export const TENANT_ID_RULE = 'must be 1 to 200 characters: letters, digits and . _ : @ -, starting with a letter or a digit, without ".."';

const TENANT_ID = new RegExp(TENANT_ID_PATTERN);

/** True when `value` is a string following {@link TENANT_ID_PATTERN}. */
export function isTenantId(value: unknown): value is string {
  return typeof value === 'string' && TENANT_ID.test(value);
}
