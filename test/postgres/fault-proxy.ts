/**
 * A TCP proxy on loopback that a test puts between a port and the server, and then breaks the
 * way networks break:
 *
 *   pass               forward both ways (the start)
 *   stall              stop forwarding, keep every socket open (a hung middlebox or peer);
 *                      new connections are accepted and never forwarded
 *   half-close         end the client side of each open connection (FIN), keep the server side
 *                      open and silent; new connections as in stall
 *   reset-client-side  reset the client side of each open connection (RST, as a NAT or load
 *                      balancer that forgot it), keep the server side open; new connections as in
 *                      stall
 *
 * A connection open when the mode leaves "pass" never forwards again; setting "pass" again
 * forwards the connections made from then on, so a port may reconnect through it.
 */
import { Socket, createServer, type Server } from "node:net";

type FaultMode = "pass" | "stall" | "half-close" | "reset-client-side";

export interface FaultProxy {
  /** postgres://… through the proxy: `url` with its port replaced. */
  url: string;
  port: number;
  /** Connections the proxy ever accepted. */
  readonly accepted: number;
  setMode(mode: FaultMode): void;
  close(): Promise<void>;
}

interface Link {
  client: Socket;
  server: Socket | undefined;
  /** Bytes from the client not yet sent while the server side connects. */
  pending: Buffer[];
  /** Caught by a fault: forwards nothing from then on. */
  broken: boolean;
}

/** A proxy on 127.0.0.1 to the server of `url` (a postgres:// URL). */
export async function startFaultProxy(url: string): Promise<FaultProxy> {
  const target = new URL(url);
  const links = new Set<Link>();
  let mode: FaultMode = "pass";
  let accepted = 0;

  const forwarding = (link: Link) => !link.broken;

  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    accepted++;
    const link: Link = { client, server: undefined, pending: [], broken: mode !== "pass" };
    links.add(link);
    client.on("error", () => {});
    if (link.broken) {
      // A peer that accepts and never answers: the socket stays open, bytes go nowhere.
      client.on("data", () => {});
      return;
    }
    const upstream = new Socket();
    link.server = upstream;
    upstream.on("error", () => forwarding(link) && client.destroy());
    upstream.connect(Number(target.port), target.hostname, () => {
      for (const chunk of link.pending.splice(0)) upstream.write(chunk);
    });
    client.on("data", (chunk: Buffer) => {
      if (!forwarding(link)) return;
      if (upstream.connecting) link.pending.push(chunk);
      else upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (forwarding(link)) client.write(chunk);
    });
    // While passing, a close on one side closes the other, as a plain connection would.
    client.on("end", () => forwarding(link) && upstream.end());
    upstream.on("end", () => forwarding(link) && client.end());
    client.on("close", () => forwarding(link) && upstream.destroy());
    upstream.on("close", () => forwarding(link) && client.destroy());
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const proxied = new URL(url);
  proxied.hostname = "127.0.0.1";
  proxied.port = String(port);

  return {
    url: proxied.toString(),
    port,
    get accepted() {
      return accepted;
    },
    setMode(next) {
      mode = next;
      if (next !== "pass") for (const link of links) link.broken = true;
      if (next === "half-close") for (const link of links) link.client.end();
      if (next === "reset-client-side") for (const link of links) link.client.resetAndDestroy();
    },
    close: async () => {
      for (const link of links) {
        link.client.destroy();
        link.server?.destroy();
      }
      links.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
