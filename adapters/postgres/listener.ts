/**
 * `watch` through LISTEN/NOTIFY: every mutation NOTIFYs the store's channel with its path when it
 * commits, from whichever process or machine made it; one connection per port LISTENs while any
 * watch is open and hands each path to the watchers of a directory at or above it.
 *
 * A dropped listening connection is re-established (backing off up to 5 s); since notifications
 * sent in between are lost, each watcher is then told its own directory changed (an overflow). A
 * connection that only goes silent (a stalled path keeps it open, and a LISTEN never answers
 * anything) is found by a ping every statementTimeoutMs / 2, under the statement deadline.
 */
import type pg from "pg";
import type { StorageWatch } from "../../src/port.js";
import { isAtOrBelow } from "../kit/watchers.js";
import { checkout, timedQuery, type Deadlines } from "./connection.js";
import { toStorageError } from "./errors.js";

interface Watcher {
  dir: string;
  onChange(path: string): void;
}

const MAX_RETRY_MS = 5000;

export class ChangeListener {
  private readonly watchers = new Set<Watcher>();
  private client: pg.PoolClient | undefined;
  private connecting: Promise<pg.PoolClient> | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private ping: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(
    private readonly pool: () => Promise<pg.Pool>,
    private readonly channel: string,
    private readonly deadlines: Deadlines,
  ) {}

  /** Resolves once the connection LISTENs: a change committed after that is reported. */
  async watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch> {
    this.closed = false;
    const watcher: Watcher = { dir, onChange };
    try {
      await this.listen();
    } catch (error) {
      throw toStorageError(error, "watch", dir);
    }
    this.watchers.add(watcher);
    return {
      close: async () => {
        if (!this.watchers.delete(watcher) || this.watchers.size > 0) return;
        await this.stop();
      },
    };
  }

  /** Stops listening and gives the connection back. */
  async stop(): Promise<void> {
    this.closed = true;
    this.watchers.clear();
    clearTimeout(this.retry);
    clearInterval(this.ping);
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    if (!client) return;
    client.removeAllListeners("notification");
    try {
      await timedQuery(client, this.deadlines, "unwatch", "", "UNLISTEN *");
      client.release();
    } catch (error) {
      client.release(error as Error);
    }
  }

  private listen(): Promise<pg.PoolClient> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      try {
        const client = await checkout(await this.pool(), this.deadlines, "watch", "");
        client.on("notification", (message) => this.deliver(message.payload ?? ""));
        client.on("error", () => this.lost(client));
        try {
          await timedQuery(client, this.deadlines, "watch", "", `LISTEN "${this.channel}"`);
        } catch (error) {
          client.release(error as Error);
          throw error;
        }
        this.client = client;
        this.keepChecking(client);
        return client;
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  private deliver(path: string): void {
    for (const { dir, onChange } of this.watchers) {
      // "" comes from a path too long for a payload: only "something changed" is known.
      if (path === "") notify(onChange, dir);
      else if (isAtOrBelow(path, dir)) notify(onChange, path);
    }
  }

  /** Pings the listening connection while it listens; one that does not answer is lost. */
  private keepChecking(client: pg.PoolClient): void {
    clearInterval(this.ping);
    let pinging = false;
    this.ping = setInterval(() => {
      if (pinging || this.client !== client) return;
      pinging = true;
      timedQuery(client, this.deadlines, "watch", "", "SELECT 1").then(
        () => (pinging = false),
        () => this.lost(client),
      );
    }, this.deadlines.statementMs / 2).unref();
  }

  private lost(client: pg.PoolClient): void {
    if (this.client !== client) return;
    clearInterval(this.ping);
    this.client = undefined;
    client.removeAllListeners("notification");
    client.release(new Error("the listening connection failed"));
    this.reconnect(100);
  }

  private reconnect(delayMs: number): void {
    if (this.closed || this.watchers.size === 0) return;
    this.retry = setTimeout(() => {
      this.listen().then(
        () => {
          for (const { dir, onChange } of this.watchers) notify(onChange, dir);
        },
        () => this.reconnect(Math.min(delayMs * 2, MAX_RETRY_MS)),
      );
    }, delayMs);
  }
}

/** Calls a watcher; what it throws is rethrown outside the client's message handling, which it would break. */
function notify(onChange: (path: string) => void, path: string): void {
  try {
    onChange(path);
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}
