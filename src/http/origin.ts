import type { IncomingMessage } from 'node:http';
import type { BlockList } from 'node:net';
import { isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { listed, unmapped } from '../address/client-network.js';
import type { Config } from '../config/config.js';
import { cidrBlockList } from '../config/parse-settings.js';

const HOST_RE = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The `scheme://host[:port]` a client used (decision 3): a configured public URL wins; then
 * X-Forwarded-Proto/Host, believed only from a trusted proxy; then the authority of an
 * absolute-form target (RFC 9112 3.2.2: it, not the Host header, names the host), else the Host
 * header with its port, as IIS does. A Host that is not a host name falls back to the local
 * address, so a hostile header can never inject markup into a WSDL.
 */
export function requestOrigin(req: IncomingMessage, config: Config): string {
  if (config.publicUrl !== null) return new URL(config.publicUrl).origin + stripPath(config.publicUrl);
  const trusted = isTrustedProxy(req.socket.remoteAddress, config.trustedProxies);
  const tls = (req.socket as Partial<TLSSocket>).encrypted === true;
  let scheme = tls ? 'https' : 'http';
  let host = absoluteFormAuthority(req.url ?? '/') ?? req.headers.host;
  if (trusted) {
    const proto = first(req.headers['x-forwarded-proto']);
    if (proto === 'http' || proto === 'https') scheme = proto;
    const fwdHost = first(req.headers['x-forwarded-host']);
    if (fwdHost !== undefined) host = fwdHost;
  }
  if (host === undefined || !HOST_RE.test(host)) {
    const addr = req.socket.localAddress ?? '127.0.0.1';
    host = `${addr.includes(':') ? `[${addr}]` : addr}:${req.socket.localPort ?? 80}`;
  }
  return `${scheme}://${host}`;
}

const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;

/**
 * A request target in origin form: `http://host/X.asmx?WSDL` (absolute form, RFC 9112 3.2.2,
 * which a server must accept) is served as `/X.asmx?WSDL`. Other targets are returned as they came.
 */
export function originForm(url: string): string {
  if (url.charCodeAt(0) === 47 /* / */) return url;
  const m = ABSOLUTE_FORM.exec(url);
  if (m === null) return url;
  const rest = url.slice(m[0].length);
  return rest.charCodeAt(0) === 47 ? rest : `/${rest}`;
}

/** The `host[:port]` of an absolute-form target, or undefined for any other form. */
function absoluteFormAuthority(url: string): string | undefined {
  if (url.charCodeAt(0) === 47) return undefined;
  return ABSOLUTE_FORM.exec(url)?.[1];
}

/** A public URL's own path (`https://x.example/app` mounts the service under /app). */
function stripPath(publicUrl: string): string {
  const path = new URL(publicUrl).pathname.replace(/\/+$/, '');
  return path;
}

function first(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v?.split(',')[0]?.trim() || undefined;
}

/** Each configuration's blocks, made once (the list is the config's own, never rebuilt). */
const proxyBlocks = new WeakMap<readonly string[], BlockList>();

function isTrustedProxy(address: string | undefined, trusted: readonly string[]): boolean {
  if (address === undefined || trusted.length === 0) return false;
  let blocks = proxyBlocks.get(trusted);
  if (blocks === undefined) {
    blocks = cidrBlockList(trusted);
    proxyBlocks.set(trusted, blocks);
  }
  return listed(blocks, address);
}

/** Loopback callers count as local (the .NET help page offers its test form only to them). */
export function isLocalAddress(address: string | undefined): boolean {
  return (
    address === '127.0.0.1' ||
    address === '::1' ||
    address === '::ffff:127.0.0.1' ||
    (address?.startsWith('127.') ?? false)
  );
}

/**
 * The client's address for access rules and rate limits: the peer, or, when the peer is a
 * trusted proxy, the nearest X-Forwarded-For entry that is not one (entries a client wrote
 * itself sit further left and are not believed). A hop that is not an IP address (a name, a
 * port, an empty entry) ends the walk: the proxy that wrote it cannot be believed to have
 * written the client's address, so the last address believed (a trusted proxy's) is the
 * client, and everyone behind it shares its limits rather than choosing their own. An IPv4-mapped
 * address is its IPv4 address (`::ffff:10.0.0.1` is 10.0.0.1, whichever socket family it came
 * on); what counts it (the rate limit, the SMS guard) does so by its clientKey.
 */
export function clientAddress(req: IncomingMessage, config: Config): string {
  const peer = unmapped(req.socket.remoteAddress ?? '');
  if (!isTrustedProxy(peer, config.trustedProxies)) return peer;
  const header = req.headers['x-forwarded-for'];
  if (header === undefined) return peer;
  const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
  let believed = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = unmapped(hops[i]!.trim());
    if (isIP(hop) === 0) return believed;
    if (!isTrustedProxy(hop, config.trustedProxies)) return hop;
    believed = hop;
  }
  return believed;
}
