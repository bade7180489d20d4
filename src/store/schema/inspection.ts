/** What `sis check` learns of a database without changing it (open/inspect-database.ts). */
import type { SchemaStatus } from './migrations.js';

export type DatabaseInspection =
  | { readonly state: 'memory' }
  /** A SQLite file not made yet (the service makes it; its directory is writable). */
  | { readonly state: 'missing'; readonly path: string }
  | (SchemaStatus & { readonly where: string });
