/**
 * The PostgreSQL schema names the store accepts (its `schema` option, config `postgresSchema`):
 * lower-case letters, digits and `_`, not starting with a digit, at most 63 characters (the
 * server's identifier limit). Such a name needs no quoting in SQL and cannot inject any.
 */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
