/** Database URLs: which dialect, where, and how to show one without its password. */
import { SESSION_ATTRS } from '../postgres/postgres-hosts.js';
import type { PostgresHost, SessionAttrs } from '../postgres/postgres-hosts.js';

export type DatabaseTarget =
  | { readonly dialect: 'sqlite'; readonly path: string | ':memory:' }
  | {
      readonly dialect: 'postgres';
      /** The first host's connection string (without `schema`, `target_session_attrs`, `load_balance_hosts`). */
      readonly connectionString: string;
      readonly schema: string | null;
      /** libpq's host list (`a:5432,b:5432`), in order, each as its own connection string; one for a single host. */
      readonly hosts: readonly PostgresHost[];
      /** libpq's `target_session_attrs`; null when the URL names none (each use has its default). */
      readonly sessionAttrs: SessionAttrs | null;
      /** libpq's `load_balance_hosts=random`: the hosts tried in a random order for each new connection. */
      readonly loadBalance: boolean;
    };

export class DatabaseUrlError extends Error {
  readonly code = 'ERR_DATABASE_URL';
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseUrlError';
  }
}

/**
 * `sqlite:PATH`, `sqlite:///abs/path`, `sqlite::memory:`, a bare path, or `postgres://` /
 * `postgresql://` (whose `?schema=NAME` is taken out and becomes the search_path).
 */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (/^postgres(?:ql)?:\/\//i.test(url)) return parsePostgres(url);
  if (/^sqlite:/i.test(url)) {
    let path = url.slice('sqlite:'.length);
    if (path.startsWith('//')) path = path.slice(2); // sqlite:///abs/path -> /abs/path
    if (path === '') throw new DatabaseUrlError(`${url}: no database file after "sqlite:"`);
    return { dialect: 'sqlite', path: path === ':memory:' ? ':memory:' : path };
  }
  // A scheme of two or more letters is a URL we do not support (one letter may be a Windows drive).
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(url);
  if (scheme !== null && url !== ':memory:') {
    throw new DatabaseUrlError(
      `${redactDatabaseUrl(url)}: unsupported database URL scheme "${scheme[1]}:"; use sqlite:PATH or postgres://...`,
    );
  }
  if (url === '') throw new DatabaseUrlError('empty database URL');
  return { dialect: 'sqlite', path: url };
}

/**
 * A PostgreSQL URL as libpq reads it: `postgres://[user[:password]@]host[:port][,host[:port]...]/db?...`
 * (node-postgres parses no host list: each host becomes a URL of its own), with `schema` (ours),
 * `target_session_attrs` and `load_balance_hosts` (libpq's) taken out of what the driver is given.
 */
function parsePostgres(url: string): DatabaseTarget {
  // Edit the query string by hand: URLSearchParams would re-encode the other parameters.
  const q = url.indexOf('?');
  let schema: string | null = null;
  let sessionAttrs: SessionAttrs | null = null;
  let loadBalance = false;
  const kept: string[] = [];
  const value = (part: string, name: string): string => {
    try {
      return decodeURIComponent(part.slice(name.length + 1).replace(/\+/g, ' '));
    } catch {
      throw new DatabaseUrlError(`${redactDatabaseUrl(url)}: the ${name} parameter is not valid percent-encoding`);
    }
  };
  for (const part of q === -1 ? [] : url.slice(q + 1).split('&')) {
    if (part.startsWith('schema=')) {
      schema = value(part, 'schema');
      if (schema === '') schema = null;
    } else if (part.startsWith('target_session_attrs=')) {
      const attrs = value(part, 'target_session_attrs');
      if (!(SESSION_ATTRS as readonly string[]).includes(attrs))
        throw new DatabaseUrlError(
          `${redactDatabaseUrl(url)}: target_session_attrs=${attrs} is not one libpq knows; use one of ${SESSION_ATTRS.join(', ')}`,
        );
      sessionAttrs = attrs as SessionAttrs;
    } else if (part.startsWith('load_balance_hosts=')) {
      const mode = value(part, 'load_balance_hosts');
      if (mode !== 'disable' && mode !== 'random')
        throw new DatabaseUrlError(`${redactDatabaseUrl(url)}: load_balance_hosts=${mode}: use disable or random`);
      loadBalance = mode === 'random';
    } else if (part !== '') {
      kept.push(part);
    }
  }
  const base = q === -1 ? url : url.slice(0, q);
  const query = kept.length > 0 ? `?${kept.join('&')}` : '';
  // The authority: after the scheme, up to the path; the user part ends at its last '@'.
  const scheme = /^postgres(?:ql)?:\/\//i.exec(base)![0];
  const slash = base.indexOf('/', scheme.length);
  const authority = base.slice(scheme.length, slash === -1 ? undefined : slash);
  const path = slash === -1 ? '' : base.slice(slash);
  const at = authority.lastIndexOf('@');
  const user = at === -1 ? '' : authority.slice(0, at + 1);
  const list = authority.slice(at + 1);
  const names = list === '' ? [''] : list.split(',');
  if (names.some((name) => name === '' && names.length > 1))
    throw new DatabaseUrlError(`${redactDatabaseUrl(url)}: an empty host in the host list`);
  const hosts = names.map((name) => {
    const connectionString = `${scheme}${user}${name}${path}${query}`;
    const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(name);
    if (m === null) throw new DatabaseUrlError(`${redactDatabaseUrl(url)}: "${name}" is not a host[:port]`);
    return { where: `${m[1] || 'localhost'}:${m[2] || '5432'}`, connectionString };
  });
  return {
    dialect: 'postgres',
    connectionString: hosts[0]!.connectionString,
    schema,
    hosts,
    sessionAttrs,
    loadBalance,
  };
}

/** The URL with any password replaced by ***, fit for messages and logs. */
export function redactDatabaseUrl(url: string): string {
  return url
    .replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@:]*:)[^/?#@]*@/, '$1***@')
    .replace(/([?&]password=)[^&#]*/i, '$1***');
}
