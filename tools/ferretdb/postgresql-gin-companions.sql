-- postgresql-gin-companions.sql -- makes FerretDB 1.24's PostgreSQL backend use the indexes it is
-- asked for. Loaded by .ci/services.sh into the private PostgreSQL cluster it starts for
-- CI_FERRETDB_BACKEND=postgresql (the cluster benchmark); not needed by, or used with, MongoDB.
--
-- Why: FerretDB creates a MongoDB index {f1: 1, f2: 1} as a btree on ((_jsonb -> 'f1'), (_jsonb ->
-- 'f2')), but it pushes an equality filter {f1: v} down as `_jsonb -> $1 @> $2` (jsonb
-- containment; internal/backends/postgresql/query.go, filterEqual). A btree cannot answer `@>`, so
-- every pushed-down query was a sequential scan: updateOne({_id}) took 12.5 ms on 20,000 documents.
--
-- What: an event trigger that, after every CREATE INDEX of a btree whose columns are expressions
-- `_jsonb -> 'field'`, creates one GIN index (jsonb_path_ops, which serves `@>`) per such field,
-- unless the table has one already. Together with plan_cache_mode = force_custom_plan (set on the
-- server's command line), so that the planner sees the key `$1` as the constant it is and can
-- match the index expression, the same updateOne takes 1.3 ms.
--
-- Guarantee: only adds indexes; FerretDB's own tables, indexes and metadata are untouched, so
-- query results are the same. The trigger ignores the GIN indexes it creates (not btree).

CREATE OR REPLACE FUNCTION ferretdb_gin_companions() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
  cmd record;
  tbl regclass;
  method text;
  expr text;
  k int;
  field text;
  name text;
BEGIN
  FOR cmd IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE object_type = 'index' LOOP
    SELECT i.indrelid::regclass, am.amname INTO tbl, method
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
     WHERE i.indexrelid = cmd.objid;
    CONTINUE WHEN method IS DISTINCT FROM 'btree';
    FOR k IN 1 .. (SELECT indnatts FROM pg_index WHERE indexrelid = cmd.objid) LOOP
      expr := pg_get_indexdef(cmd.objid, k, true);
      field := substring(expr FROM '^\(?_jsonb -> ''([^'']+)''::text\)?$');
      CONTINUE WHEN field IS NULL;
      name := left(split_part(tbl::text, '.', 2), 30) || '_gin_' || left(md5(field), 12);
      EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s USING gin ((_jsonb -> %L) jsonb_path_ops)',
                     name, tbl, field);
    END LOOP;
  END LOOP;
END
$$;

DROP EVENT TRIGGER IF EXISTS ferretdb_gin_companions;
CREATE EVENT TRIGGER ferretdb_gin_companions ON ddl_command_end
  WHEN TAG IN ('CREATE INDEX')
  EXECUTE FUNCTION ferretdb_gin_companions();
