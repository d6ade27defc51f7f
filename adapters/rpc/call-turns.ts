/**
 * When one client's port calls run: in the order they came, at most maxCallsInFlight at once, and
 * a read only when its share of maxHeldBytes is free of the other reads under way.
 */
import { StorageError } from "../../src/port.js";
import type { RpcCall } from "./protocol.js";

export class CallTurns {
  /** Port calls under way. */
  private inFlight = 0;
  /** Bytes the reads under way may still bring (each read's share of maxHeldBytes). */
  private reservedBytes = 0;
  /** Port calls waiting their turn, oldest first: each starts (returns true) or keeps waiting (false). */
  private readonly waiting: (() => boolean)[] = [];

  constructor(
    /** The server's caps on one client (StorageServerLimits; Infinity where unset). */
    private readonly limits: { maxCallsInFlight: number; maxHeldBytes: number },
    /** Bytes of reads the client holds now (snapshots not pulled, replies not returned). */
    private readonly heldBytes: () => number,
    /** Why the connection ended, or undefined while it lasts. */
    private readonly endReason: () => string | undefined,
  ) {}

  /**
   * Runs a port call in its turn: calls start in the order they came, at most maxCallsInFlight at
   * once, and a read only when its share of maxHeldBytes is free of other reads under way.
   * `run` gets that share (Infinity without a cap).
   */
  run<T>(call: RpcCall, run: (share: number) => Promise<T>): Promise<T> {
    const { maxCallsInFlight, maxHeldBytes } = this.limits;
    return new Promise<T>((resolve, reject) => {
      const start = (): boolean => {
        const endReason = this.endReason();
        if (endReason !== undefined) {
          reject(new StorageError("io", `${call.op}: ${endReason}`));
          return true;
        }
        if (this.inFlight >= maxCallsInFlight) return false;
        let share = Infinity;
        if (call.op === "read" && maxHeldBytes !== Infinity) {
          const held = this.heldBytes();
          const free = maxHeldBytes - held;
          if (free <= 0) {
            reject(new StorageError("limit", `read refused: this client holds ${held} bytes of reads (its limit: ${maxHeldBytes}); pull them (readMore) first`, { path: call.path }));
            return true;
          }
          // A read of unknown size takes all that is free: it waits for the reads under way.
          share = Math.min(call.range?.length ?? Infinity, free);
          if (this.reservedBytes + share > free) return false;
          this.reservedBytes += share;
        }
        this.inFlight++;
        const reserved = Number.isFinite(share) ? share : 0;
        run(share)
          .then(resolve, reject)
          .finally(() => {
            this.inFlight--;
            this.reservedBytes -= reserved;
            this.startWaiting();
          });
        return true;
      };
      if (this.waiting.length > 0 || !start()) this.waiting.push(start);
    });
  }

  /** Ends the calls still waiting: each fails, as the connection has ended. */
  endWaiting(): void {
    for (const start of this.waiting.splice(0)) start();
  }

  private startWaiting(): void {
    while (this.waiting.length > 0 && this.waiting[0]!()) this.waiting.shift();
  }
}
