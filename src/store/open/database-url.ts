/** Database URLs: which dialect, where, and how to show one without its password. */

export type DatabaseTarget =
  | { readonly dialect: 'sqlite'; readonly path: string | ':memory:' }
  | { readonly dialect: 'postgres'; readonly connectionString: string; readonly schema: string | null };

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

function parsePostgres(url: string): DatabaseTarget {
  // Edit the query string by hand: URLSearchParams would re-encode the other parameters.
  const q = url.indexOf('?');
  if (q === -1) return { dialect: 'postgres', connectionString: url, schema: null };
  let schema: string | null = null;
  const kept: string[] = [];
  for (const part of url.slice(q + 1).split('&')) {
    if (part.startsWith('schema=')) {
      try {
        schema = decodeURIComponent(part.slice('schema='.length).replace(/\+/g, ' '));
      } catch {
        throw new DatabaseUrlError(`${redactDatabaseUrl(url)}: the schema parameter is not valid percent-encoding`);
      }
      if (schema === '') schema = null;
    } else if (part !== '') {
      kept.push(part);
    }
  }
  const base = url.slice(0, q);
  return { dialect: 'postgres', connectionString: kept.length > 0 ? `${base}?${kept.join('&')}` : base, schema };
}

/** The URL with any password replaced by ***, fit for messages and logs. */
export function redactDatabaseUrl(url: string): string {
  return url
    .replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@:]*:)[^/?#@]*@/, '$1***@')
    .replace(/([?&]password=)[^&#]*/i, '$1***');
}
