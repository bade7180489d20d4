/**
 * Kysely table types: the one description of the tables both dialects share.
 * Column names keep the wire's spelling (fullName, ShowActive) so rows map to records without renaming.
 */
import type { Generated } from 'kysely';

export interface StudentsTable {
  id_student: string;
  fullName: string | null;
  id_device: string | null;
  ShowActive: string | null;
  school_base_url: string | null;
  /** Position of the first import; upserts leave it alone so answers keep the original order. */
  seq: number;
}

export interface DevicesTable {
  id: string;
  token: string | null;
}

export interface AuthCodesTable {
  id: Generated<number>;
  code: string | null;
  phone: string | null;
  /** ISO 8601 in UTC; a timestamptz column on PostgreSQL, text on SQLite. */
  created_at: string;
}

export interface MigrationsTable {
  version: number;
  name: string;
  applied_at: string;
}

export interface Database {
  students: StudentsTable;
  devices: DevicesTable;
  auth_codes: AuthCodesTable;
  sis_migrations: MigrationsTable;
}

export type DialectName = 'sqlite' | 'postgres';
