/**
 * The PostgreSQL schema of a store, created on first use and versioned.
 *
 *   <schema>.schema_version  one row: the layout version below (another one is refused)
 *   <schema>.files           one row per file: path, parent dir, size, mtime, where its last chunk starts
 *   <schema>.chunks          the bytes: (file_id, off) → data, at most CHUNK_BYTES each
 *   <schema>.locks           writer locks: a lease and a fencing token each (writer.ts)
 *
 * Every mutation is one call of a function below, so it is one statement and one transaction
 * (a write over 1 MiB is several in one transaction, writer.ts): it locks the file's row (concurrent appends from any number of connections queue there),
 * changes chunks and the file row, and NOTIFYs `<schema>_changes` with the path, which
 * PostgreSQL delivers to listeners only if the transaction commits.
 *
 * An append adds one chunk row at the file's end; when the last chunk plus the new bytes stay
 * within TOP_UP_BYTES it tops up that chunk instead (`data || new`), so a session written an entry
 * at a time keeps a few rows per 16 KiB while no append rewrites more than 16 KiB.
 */
import type pg from "pg";
import { StorageError } from "../../src/port.js";
import { checkout, isTimedOut, timedQuery, type Deadlines } from "./connection.js";

/** The layout this code reads and writes: 2 added the lock leases and the writers' fencing tokens. */
const SCHEMA_VERSION = 2;

/** Largest chunk row: writes and large appends are cut into rows of this size. */
export const CHUNK_BYTES = 256 << 10;

/** An append tops up the last chunk while that chunk stays within this many bytes. */
export const TOP_UP_BYTES = 16 << 10;

/** Longest path NOTIFY carries (its payload limit is 8000 bytes); a longer one notifies "" (the root). */
const NOTIFY_PATH_BYTES = 7900;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,39}$/;

/**
 * PostgreSQL's reserved key words (`pg_get_keywords()` categories R and T, PostgreSQL 15): quoted,
 * they would work here, but every hand-written query on the store would have to quote them too.
 */
const RESERVED = new Set(
  ("all analyse analyze and any array as asc asymmetric authorization binary both case cast check collate collation column " +
    "concurrently constraint create cross current_catalog current_date current_role current_schema current_time " +
    "current_timestamp current_user default deferrable desc distinct do else end except false fetch for foreign freeze " +
    "from full grant group having ilike in initially inner intersect into is isnull join lateral leading left like limit " +
    "localtime localtimestamp natural not notnull null offset on only or order outer overlaps placing primary references " +
    "returning right select session_user similar some symmetric table tablesample then to trailing true union unique user " +
    "using variadic verbose when where window with").split(" "),
);

/**
 * The schema name, checked: 1-40 of a-z, 0-9 and _, not a reserved word, and not a schema the
 * server or everyone else uses (`public`, `information_schema`, `pg_*`), which the store's tables
 * and functions would clutter.
 */
export function checkSchemaName(schema: string): string {
  const refuse = (why: string) => new StorageError("invalid", `invalid PostgreSQL schema name ${JSON.stringify(schema)}: ${why}`);
  if (!SCHEMA_NAME.test(schema)) throw refuse("use 1-40 of a-z, 0-9, _ (not starting with a digit)");
  if (RESERVED.has(schema)) throw refuse("a reserved word in SQL");
  if (schema === "public" || schema === "information_schema" || schema.startsWith("pg_")) throw refuse("a schema of the server or of every user; give the store one of its own");
  return schema;
}

/** The schema as a quoted identifier, for SQL text (the name is checked, so it holds no quote). */
export function quoted(schema: string): string {
  return `"${schema}"`;
}

/** The NOTIFY channel of a store. */
export function changeChannel(schema: string): string {
  return `${schema}_changes`;
}

function ddl(schema: string): string {
  const s = quoted(schema);
  // Advisory lock keys of the store: its name is in each, so two stores never share one.
  const nameKey = (path: string) => `hashtextextended('${schema} name ' || ${path}, 0)`;
  const liveKey = (token: string) => `hashtextextended('${schema} live ' || ${token}, 0)`;
  const channel = `'${changeChannel(schema)}'`;
  const notify = `PERFORM pg_notify(${channel}, CASE WHEN octet_length(p_path) <= ${NOTIFY_PATH_BYTES} THEN p_path ELSE '' END);`;
  const now = "extract(epoch FROM clock_timestamp()) * 1000";
  // Every mutation waits for row and advisory locks at most p_lock_ms (0: without end), for this transaction only.
  const lockWait = `PERFORM set_config('lock_timeout', p_lock_ms || 'ms', true);`;
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

-- Writers' locks: a lease its holder renews, and a fencing token that changes with each holder.
-- While the holder's connection lives (and it is not behind a pooler) it holds the session
-- advisory lock live_key, so a holder that died frees its lock at once; a holder that stopped
-- renewing (suspended, cut off) loses it once its lease has lapsed.
CREATE TABLE ${s}.locks (
  key text COLLATE "C" PRIMARY KEY,
  token bigint NOT NULL,
  owner text NOT NULL,
  lease_ms integer NOT NULL,
  renewed_at timestamptz NOT NULL,
  live_key bigint
);
CREATE SEQUENCE ${s}.lock_tokens;

CREATE FUNCTION ${s}.parent_dir(p text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN strpos(p, '/') = 0 THEN '' ELSE left(p, length(p) - strpos(reverse(p), '/')) END
$$;

-- The backend holding a lock's live_key (null when none does, or the lock has none).
CREATE FUNCTION ${s}.live_pid(p_live_key bigint) RETURNS integer LANGUAGE sql STABLE AS $$
  SELECT pid FROM pg_locks
  WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = p_live_key
  LIMIT 1
$$;

-- Who holds a lock, for messages: its owner, and its backend and client address while it lives.
CREATE FUNCTION ${s}.lock_holder(l ${s}.locks) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT l.owner || coalesce(
    (SELECT format(' (backend pid %s, client %s)', a.pid, coalesce(host(a.client_addr), 'local socket'))
     FROM pg_stat_activity a WHERE a.pid = ${s}.live_pid(l.live_key)),
    format(' (lease renewed %s ms ago)', round(extract(epoch FROM clock_timestamp() - l.renewed_at) * 1000)))
$$;

-- Takes the lock on p_key: returns its new token, or null and who holds it. A lock is free when
-- missing, when its lease has lapsed, when the holder's connection is gone, or when it is the
-- caller's own lost lock (p_replace). A holder whose lease lapsed while its backend lives
-- (suspended, half-connected) has that backend ended, so it cannot finish a write either.
CREATE FUNCTION ${s}.acquire_lock(p_key text, p_owner text, p_lease_ms integer, p_direct boolean, p_replace bigint, p_lock_ms integer)
RETURNS TABLE (token bigint, holder text) LANGUAGE plpgsql AS $$
DECLARE
  l ${s}.locks;
  live integer;
  t bigint;
  lk bigint;
BEGIN
  ${lockWait}
  LOOP
    SELECT * INTO l FROM ${s}.locks WHERE key = p_key FOR UPDATE;
    IF FOUND THEN
      live := ${s}.live_pid(l.live_key);
      IF l.token IS DISTINCT FROM p_replace AND clock_timestamp() < l.renewed_at + l.lease_ms * interval '1 millisecond'
         AND (l.live_key IS NULL OR live IS NOT NULL) THEN
        RETURN QUERY SELECT NULL::bigint, ${s}.lock_holder(l);
        RETURN;
      END IF;
      IF live IS NOT NULL AND live <> pg_backend_pid() THEN
        BEGIN
          PERFORM pg_terminate_backend(live);
        EXCEPTION WHEN insufficient_privilege THEN
          NULL; -- another role's backend: its writes are refused by the token all the same
        END;
      END IF;
    END IF;
    t := nextval('${s}.lock_tokens');
    lk := CASE WHEN p_direct THEN ${liveKey("t")} END;
    IF FOUND THEN
      UPDATE ${s}.locks SET token = t, owner = p_owner, lease_ms = p_lease_ms, renewed_at = clock_timestamp(), live_key = lk WHERE key = p_key;
    ELSE
      INSERT INTO ${s}.locks VALUES (p_key, t, p_owner, p_lease_ms, clock_timestamp(), lk) ON CONFLICT (key) DO NOTHING;
      CONTINUE WHEN NOT FOUND; -- another writer created it meanwhile: look again
    END IF;
    IF lk IS NOT NULL THEN
      PERFORM pg_advisory_lock(lk);
    END IF;
    RETURN QUERY SELECT t, NULL::text;
    RETURN;
  END LOOP;
END $$;

-- Renews the leases of the given locks; returns the keys still held with their token.
CREATE FUNCTION ${s}.renew_locks(p_keys text[], p_tokens bigint[]) RETURNS SETOF text LANGUAGE sql AS $$
  UPDATE ${s}.locks l SET renewed_at = clock_timestamp()
  FROM unnest(p_keys, p_tokens) AS r(key, token)
  WHERE l.key = r.key AND l.token = r.token
  RETURNING l.key
$$;

-- Gives a lock up (when its token is still the one held), and the live_key this backend holds for it.
CREATE FUNCTION ${s}.release_lock(p_key text, p_token bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  lk bigint := ${liveKey("p_token")};
BEGIN
  DELETE FROM ${s}.locks WHERE key = p_key AND token = p_token;
  IF ${s}.live_pid(lk) = pg_backend_pid() THEN
    PERFORM pg_advisory_unlock(lk);
  END IF;
END $$;

-- A write under a lock carries its token: refused once another writer has taken the lock. Called
-- with the file's row locked, so a takeover commits either before this check or after the write.
CREATE FUNCTION ${s}.check_token(p_path text, p_token bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  l ${s}.locks;
BEGIN
  IF p_token IS NULL THEN
    RETURN;
  END IF;
  SELECT * INTO l FROM ${s}.locks WHERE key = p_path;
  IF NOT FOUND OR l.token <> p_token THEN
    RAISE EXCEPTION USING ERRCODE = 'SK423', MESSAGE = format('%s is locked by %s: this writer''s lock on it lapsed and was taken over',
      to_json(p_path), CASE WHEN FOUND THEN ${s}.lock_holder(l) ELSE 'no one now' END);
  END IF;
END $$;

-- A new file may not lie below a file, nor be a directory (the rules of a real file system). The
-- check holds against concurrent creations: a creator holds its path exclusively and each
-- ancestor shared (transaction advisory locks), so "d/x" and "d/x/y" are created one after the other.
CREATE FUNCTION ${s}.check_new_file(p_path text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  parts text[] := string_to_array(p_path, '/');
  ancestor text;
BEGIN
  FOR i IN 1 .. array_length(parts, 1) - 1 LOOP
    PERFORM pg_advisory_xact_lock_shared(${nameKey("array_to_string(parts[1:i], '/')")});
  END LOOP;
  PERFORM pg_advisory_xact_lock(${nameKey("p_path")});
  SELECT path INTO ancestor FROM ${s}.files WHERE path = ANY (
    SELECT array_to_string(parts[1:i], '/') FROM generate_series(1, array_length(parts, 1) - 1) AS i
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

CREATE FUNCTION ${s}.append(p_path text, p_data bytea, p_token bigint, p_lock_ms integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  f ${s}.files;
  last_start bigint;
BEGIN
  ${lockWait}
  f := ${s}.lock_or_create(p_path);
  PERFORM ${s}.check_token(p_path, p_token);
  last_start := f.last_off;
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
CREATE FUNCTION ${s}.append_many(p_paths text[], p_data bytea[], p_tokens bigint[], p_lock_ms integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_paths, 1), 0) LOOP
    PERFORM ${s}.append(p_paths[i], p_data[i], p_tokens[i], p_lock_ms);
  END LOOP;
END $$;

CREATE FUNCTION ${s}.write(p_path text, p_data bytea, p_token bigint, p_lock_ms integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  f ${s}.files;
  last_start bigint := 0;
BEGIN
  ${lockWait}
  f := ${s}.lock_or_create(p_path);
  PERFORM ${s}.check_token(p_path, p_token);
  DELETE FROM ${s}.chunks WHERE file_id = f.id;
  IF octet_length(p_data) > 0 THEN
    ${insertChunks("f.id", "0")}
  END IF;
  UPDATE ${s}.files SET size = octet_length(p_data), last_off = last_start, mtime_ms = greatest(f.mtime_ms, ${now})
    WHERE id = f.id;
  ${notify}
END $$;

CREATE FUNCTION ${s}.truncate(p_path text, p_size bigint, p_token bigint, p_lock_ms integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  f ${s}.files;
  last_start bigint;
  last_length integer;
BEGIN
  ${lockWait}
  SELECT * INTO f FROM ${s}.files WHERE path = p_path FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'SK404', MESSAGE = format('cannot truncate %s: no such file', to_json(p_path));
  END IF;
  PERFORM ${s}.check_token(p_path, p_token);
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

CREATE FUNCTION ${s}.remove(p_path text, p_token bigint, p_lock_ms integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  removed bigint;
BEGIN
  ${lockWait}
  DELETE FROM ${s}.files WHERE path = p_path RETURNING id INTO removed;
  IF FOUND THEN
    PERFORM ${s}.check_token(p_path, p_token);
    DELETE FROM ${s}.chunks WHERE file_id = removed;
    ${notify}
  END IF;
END $$;
`;
}

/**
 * Creates the schema when it is missing, under a transaction-level advisory lock so that
 * processes starting together create it once. Refuses a store written by another layout.
 */
export async function ensureSchema(pool: pg.Pool, schema: string, deadlines: Deadlines): Promise<void> {
  const action = `open schema ${schema}`;
  const client = await checkout(pool, deadlines, action, "");
  const query = <Row extends pg.QueryResultRow>(text: string, values?: unknown[]) => timedQuery<Row>(client, deadlines, action, "", text, values);
  let failure: unknown;
  try {
    await query("BEGIN");
    await query(`SET LOCAL lock_timeout = ${deadlines.lockMs}`);
    await query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`sessionkit schema ${schema}`]);
    const { rows } = await query<{ table: string | null }>("SELECT to_regclass($1)::text AS table", [`${quoted(schema)}.schema_version`]);
    if (rows[0]?.table == null) {
      await query(ddl(schema));
    } else {
      const stored = await query<{ version: number }>(`SELECT version FROM ${quoted(schema)}.schema_version`);
      const version = stored.rows[0]?.version;
      if (version !== SCHEMA_VERSION) {
        throw new StorageError(
          "unsupported",
          `PostgreSQL schema ${schema} has layout version ${version ?? "(none)"}; this sessionkit reads version ${SCHEMA_VERSION}` +
            (version !== undefined && version < SCHEMA_VERSION ? " (export its sessions with the sessionkit that wrote them, and import them into a new schema)" : ""),
        );
      }
    }
    await query("COMMIT");
  } catch (error) {
    failure = error;
    if (!isTimedOut(error)) await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release(failure instanceof StorageError && !isTimedOut(failure) ? undefined : (failure as Error | undefined));
  }
}
