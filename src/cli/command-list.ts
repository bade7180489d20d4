/**
 * Every `sis` sub-command by name, with the line `sis help` shows, each loaded only when it is
 * run or its usage asked for: `sis --help` and a bad setting then cost no database driver, no
 * Kysely, no HTTP stack (issue 22: every module loaded up front cost over a second of CPU a start).
 * A test holds each summary to its command's own.
 */
import type { Command } from './command.js';

export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  load(): Promise<Command>;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'serve',
    summary: 'run the web service (the default command)',
    load: async () => (await import('./serve-command.js')).serveCommand,
  },
  {
    name: 'check',
    summary: 'check the configuration, database, TLS, Redis and SMS gateway before a deploy',
    load: async () => (await import('./check-command.js')).checkCommand,
  },
  {
    name: 'import',
    summary: 'load a JSON dataset or a CSV table (students, devices, marks, push) streamed, all or nothing',
    load: async () => (await import('./import-command.js')).importCommand,
  },
  {
    name: 'export',
    summary: 'write the stored data as JSON or CSV, as `sis import` reads it',
    load: async () => (await import('./export-command.js')).exportCommand,
  },
  {
    name: 'stats',
    summary: 'count students, devices, auth codes and schools',
    load: async () => (await import('./report-commands.js')).statsCommand,
  },
  {
    name: 'schools',
    summary: 'list the school URLs with their numbers of students',
    load: async () => (await import('./report-commands.js')).schoolsCommand,
  },
  {
    name: 'students',
    summary: 'list the students of one school as CSV',
    load: async () => (await import('./report-commands.js')).studentsCommand,
  },
  {
    name: 'devices',
    summary: 'show, set or remove one device token',
    load: async () => (await import('./devices-command.js')).devicesCommand,
  },
  {
    name: 'migrate',
    summary: 'create the database or bring its schema up to date',
    load: async () => (await import('./migrate-command.js')).migrateCommand,
  },
  {
    name: 'outbox',
    summary: 'list, count and retry the SMS messages of AuthCode (codes masked)',
    load: async () => (await import('./outbox-command.js')).outboxCommand,
  },
  {
    name: 'sms',
    summary: 'stop or allow a number range for AuthCode during an SMS pumping incident',
    load: async () => (await import('./sms-command.js')).smsCommand,
  },
  {
    name: 'prune',
    summary: 'remove codes and finished SMS messages older than their retention',
    load: async () => (await import('./prune-command.js')).pruneCommand,
  },
  {
    name: 'shadow',
    summary: 'report the comparisons with the legacy service, accept known differences, gate the cut-over',
    load: async () => (await import('./shadow-command.js')).shadowCommand,
  },
  {
    name: 'hash-key',
    summary: 'make an API key and the hash SIS_API_KEYS holds',
    load: async () => (await import('./hash-key-command.js')).hashKeyCommand,
  },
];
