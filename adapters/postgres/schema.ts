/**
 * The PostgreSQL schema of a store, created on first use and versioned.
 *
 *   <schema>.schema_version  one row: the layout version below (a newer one is refused)
 *   <schema>.files           one row per file: path, parent dir, size, mtime, where its last chunk starts
 *   <schema>.chunks          the bytes: (file_id, off) → data, at most CHUNK_BYTES each
 *
 * Every mutation is one call of a function below, so it is one statement and one transaction:
 * it locks the file's row (concurrent appends from any number of connections queue there),
 * changes chunks and the file row, and NOTIFYs `<schema>_changes` with the path, which
 * PostgreSQL delivers to listeners only if the transaction commits.
 *
 * An append adds one chunk row at the file's end; when the last chunk plus the new bytes stay
 * within TOP_UP_BYTES it tops up that chunk instead (`data || new`), so a session written an entry
 * at a time keeps a few rows per 16 KiB while no append rewrites more than 16 KiB.
 */
import type pg from "pg";
import { StorageError } from "../../src/port.js";

/** The layout this code reads and writes. */
const SCHEMA_VERSION = 1;

/** Largest chunk row: writes and large appends are cut into rows of this size. */
export const CHUNK_BYTES = 256 << 10;

/** An append tops up the last chunk while that chunk stays within this many bytes. */
export const TOP_UP_BYTES = 16 << 10;

/** Longest path NOTIFY carries (its payload limit is 8000 bytes); a longer one notifies "" (the root). */
const NOTIFY_PATH_BYTES = 7900;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,39}$/;

/** The schema name, checked: it becomes an identifier in DDL, where parameters cannot go. */
export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new StorageError("invalid", `invalid PostgreSQL schema name ${JSON.stringify(schema)}: use 1-40 of a-z, 0-9, _ (not starting with a digit)`);
  }
  return schema;
}

/** The NOTIFY channel of a store. */
export function changeChannel(schema: string): string {
  return `${schema}_changes`;
}

function ddl(s: string): string {
  const channel = `'${changeChannel(s)}'`;
  const notify = `PERFORM pg_notify(${channel}, CASE WHEN octet_length(p_path) <= ${NOTIFY_PATH_BYTES} THEN p_path ELSE '' END);`;
  const now = "extract(epoch FROM clock_timestamp()) * 1000";
  // Inserts the chunk rows of p_data from byte `at` of file `fid`; the start of the last one.
  const insertChunks = (fid: string, at: string) => `
    INSERT INTO ${s}.chunks (file_id, off, data)
      SELECT ${fid}, ${at} + g, substring(p_data FROM g + 1 FOR ${CHUNK_BYTES})
      FROM generate_series(0, octet_length(p_data) - 1, ${CHUNK_BYTES}) AS g;
    last_start := ${at} + ((octet_length(p_data) - 1) / ${CHUNK_BYTES}) * ${CHUNK_BYTES};`;
  return `
CREATE SCHEMA IF NOT EXISTS ${s};

CREATE TABLE ${s}.schema_version (version integer NOT NULL);
INSERT INTO ${s}.schema_version VALUES (${SCHEMA_VERSION});

CREATE TABLE ${s}.files (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  path text COLLATE "C" NOT NULL UNIQUE,
  parent text COLLATE "C" NOT NULL,
  size bigint NOT NULL,
  last_off bigint NOT NULL,
  mtime_ms double precision NOT NULL
);
CREATE INDEX files_parent ON ${s}.files (parent);

CREATE TABLE ${s}.chunks (
  file_id bigint NOT NULL,
  off bigint NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (file_id, off)
);

CREATE FUNCTION ${s}.parent_dir(p text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN strpos(p, '/') = 0 THEN '' ELSE left(p, length(p) - strpos(reverse(p), '/')) END
$$;

-- A new file may not lie below a file, nor be a directory (the rules of a real file system).
CREATE FUNCTION ${s}.check_new_file(p_path text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  ancestor text;
BEGIN
  SELECT path INTO ancestor FROM ${s}.files WHERE path = ANY (
    SELECT array_to_string((string_to_array(p_path, '/'))[1:i], '/')
    FROM generate_series(1, array_length(string_to_array(p_path, '/'), 1) - 1) AS i
  ) LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'SK409', MESSAGE = format('cannot create file %s: %s is a file', to_json(p_path), to_json(ancestor));
  END IF;
  IF EXISTS (SELECT 1 FROM ${s}.files WHERE path >= p_path || '/' AND path < p_path || '0') THEN
    RAISE EXCEPTION USING ERRCODE = 'SK409', MESSAGE = format('cannot create file %s: it is a directory', to_json(p_path));
  END IF;
END $$;

-- The file's row, locked for this transaction; created (empty) when missing.
CREATE FUNCTION ${s}.lock_or_create(p_path text) RETURNS ${s}.files LANGUAGE plpgsql AS $$
DECLARE
  f ${s}.files;
BEGIN
  SELECT * INTO f FROM ${s}.files WHERE path = p_path FOR UPDATE;
  IF NOT FOUND THEN
    PERFORM ${s}.check_new_file(p_path);
    INSERT INTO ${s}.files (path, parent, size, last_off, mtime_ms)
      VALUES (p_path, ${s}.parent_dir(p_path), 0, 0, ${now}) ON CONFLICT (path) DO NOTHING;
    SELECT * INTO f FROM ${s}.files WHERE path = p_path FOR UPDATE;
  END IF;
  RETURN f;
END $$;

CREATE FUNCTION ${s}.append(p_path text, p_data bytea) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  f ${s}.files := ${s}.lock_or_create(p_path);
  last_start bigint := f.last_off;
BEGIN
  IF octet_length(p_data) > 0 THEN
    IF f.size > 0 AND f.size - f.last_off + octet_length(p_data) <= ${TOP_UP_BYTES} THEN
      UPDATE ${s}.chunks SET data = data || p_data WHERE file_id = f.id AND off = f.last_off;
    ELSE
      ${insertChunks("f.id", "f.size")}
    END IF;
  END IF;
  UPDATE ${s}.files SET size = f.size + octet_length(p_data), last_off = last_start, mtime_ms = greatest(f.mtime_ms, ${now})
    WHERE id = f.id;
  ${notify}
END $$;

-- Appends to several files in one transaction; callers pass the paths sorted, so that concurrent
-- batches lock the files' rows in one order and cannot deadlock.
CREATE FUNCTION ${s}.append_many(p_paths text[], p_data bytea[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_paths, 1), 0) LOOP
    PERFORM ${s}.append(p_paths[i], p_data[i]);
  END LOOP;
END $$;

CREATE FUNCTION ${s}.write(p_path text, p_data bytea) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  f ${s}.files := ${s}.lock_or_create(p_path);
  last_start bigint := 0;
BEGIN
  DELETE FROM ${s}.chunks WHERE file_id = f.id;
  IF octet_length(p_data) > 0 THEN
    ${insertChunks("f.id", "0")}
  END IF;
  UPDATE ${s}.files SET size = octet_length(p_data), last_off = last_start, mtime_ms = greatest(f.mtime_ms, ${now})
    WHERE id = f.id;
  ${notify}
END $$;

CREATE FUNCTION ${s}.truncate(p_path text, p_size bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  f ${s}.files;
  last_start bigint;
  last_length integer;
BEGIN
  SELECT * INTO f FROM ${s}.files WHERE path = p_path FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'SK404', MESSAGE = format('cannot truncate %s: no such file', to_json(p_path));
  END IF;
  IF p_size < 0 OR p_size > f.size THEN
    RAISE EXCEPTION USING ERRCODE = 'SK400', MESSAGE = format('cannot truncate %s (%s bytes) to %s bytes', to_json(p_path), f.size, p_size);
  END IF;
  DELETE FROM ${s}.chunks WHERE file_id = f.id AND off >= p_size;
  SELECT off, octet_length(data) INTO last_start, last_length FROM ${s}.chunks WHERE file_id = f.id ORDER BY off DESC LIMIT 1;
  IF FOUND AND last_start + last_length > p_size THEN
    UPDATE ${s}.chunks SET data = substring(data FROM 1 FOR (p_size - last_start)::integer) WHERE file_id = f.id AND off = last_start;
  END IF;
  UPDATE ${s}.files SET size = p_size, last_off = coalesce(last_start, 0), mtime_ms = greatest(f.mtime_ms, ${now})
    WHERE id = f.id;
  ${notify}
END $$;

CREATE FUNCTION ${s}.remove(p_path text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  removed bigint;
BEGIN
  DELETE FROM ${s}.files WHERE path = p_path RETURNING id INTO removed;
  IF FOUND THEN
    DELETE FROM ${s}.chunks WHERE file_id = removed;
    ${notify}
  END IF;
END $$;
`;
}

/**
 * Creates the schema when it is missing, under a transaction-level advisory lock so that
 * processes starting together create it once. Refuses a store written by a newer layout.
 */
export async function ensureSchema(pool: pg.Pool, schema: string): Promise<void> {
  const client = await pool.connect();
  let failure: unknown;
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`sessionkit schema ${schema}`]);
    const { rows } = await client.query<{ table: string | null }>("SELECT to_regclass($1)::text AS table", [`${schema}.schema_version`]);
    if (rows[0]?.table == null) {
      await client.query(ddl(schema));
    } else {
      const stored = await client.query<{ version: number }>(`SELECT version FROM ${schema}.schema_version`);
      const version = stored.rows[0]?.version;
      if (version !== SCHEMA_VERSION) {
        throw new StorageError(
          "unsupported",
          `PostgreSQL schema ${schema} has layout version ${version ?? "(none)"}; this sessionkit reads version ${SCHEMA_VERSION}`,
        );
      }
    }
    await client.query("COMMIT");
  } catch (error) {
    failure = error;
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release(failure instanceof StorageError || failure === undefined ? undefined : (failure as Error));
  }
}
