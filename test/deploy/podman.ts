/**
 * podman for the deploy tests: whether it runs here (and why not), the local stand-in for the
 * base image where no registry can be reached (deploy/container/stand-in-base.sh), and the
 * service's image built once per run from the repository's Dockerfile.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findExecutable, run } from '../clients/client-scenario.js';
import type { RunResult } from '../clients/client-scenario.js';
import { repoRoot } from '../helpers/test-server.js';

export const PODMAN = findExecutable('podman');
/** The Dockerfile's base image, by the name podman stores it under. */
export const BASE_IMAGE = 'docker.io/library/node:24-bookworm-slim';
export const IMAGE = 'localhost/sis:test';
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/**
 * podman's settings: the machine's own, except on hosts with cgroups v1 or hybrid (no unified
 * hierarchy at the root), where crun refuses to run and the repository's containers.conf picks runc.
 */
const CGROUPS_V2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
const CONF =
  process.env['CONTAINERS_CONF'] ?? (CGROUPS_V2 ? undefined : join(repoRoot, 'deploy', 'container', 'containers.conf'));
export const PODMAN_ENV: Record<string, string> = CONF === undefined ? {} : { CONTAINERS_CONF: CONF };

export function podman(args: readonly string[], timeoutMs = 120_000): Promise<RunResult> {
  return run(PODMAN!, args, { env: PODMAN_ENV, timeoutMs });
}

export interface Status {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** podman with its exit status, never throwing on a non-zero one. */
export function podmanStatus(args: readonly string[], timeoutMs = 120_000): Promise<Status> {
  return new Promise((resolve) => {
    execFile(
      PODMAN!,
      args,
      { env: { ...process.env, ...PODMAN_ENV }, timeout: timeoutMs, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Why the container tests cannot run here, or false. */
export async function podmanMissing(): Promise<string | false> {
  if (PODMAN === null) return 'podman not found: install Debian’s podman and runc packages';
  if (process.getuid?.() !== 0) return 'podman tests run as root (rootless podman needs subuids set up)';
  try {
    await podman(['info', '--format', '{{.Host.OCIRuntime.Name}}'], 60_000);
  } catch (error) {
    return `podman does not run here: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}`;
  }
  return false;
}

let built: Promise<void> | null = null;

/**
 * The image, built once per process: the base is used as stored (a registry need not be
 * reachable); where it is not stored it is built from Debian's packages and Node 24 from the npm registry.
 */
export function buildImage(): Promise<void> {
  built ??= (async () => {
    const present = await podmanStatus(['image', 'exists', BASE_IMAGE]);
    if (present.code !== 0) {
      if (findExecutable('mmdebstrap') === null)
        throw new Error(`${BASE_IMAGE} is not stored and mmdebstrap is missing to build its stand-in`);
      await run('bash', [join(repoRoot, 'deploy', 'container', 'stand-in-base.sh')], {
        env: PODMAN_ENV,
        timeoutMs: 600_000,
      });
    }
    // Behind a TLS-intercepting proxy npm needs the machine's CA bundle (harmless elsewhere).
    const ca = existsSync(CA_BUNDLE)
      ? ['-v', `${CA_BUNDLE}:${CA_BUNDLE}:ro`, '--build-arg', `NODE_EXTRA_CA_CERTS=${CA_BUNDLE}`]
      : [];
    // --format docker keeps HEALTHCHECK (the OCI format has no such field).
    await podman(['build', '--format', 'docker', '--pull=never', ...ca, '-t', IMAGE, repoRoot], 1_200_000);
    // Earlier builds' untagged images (about 2 GB a build of changed sources); this build's stay, as its cache.
    await podmanStatus(['image', 'prune', '-f', '--filter', 'until=30m']);
  })();
  return built;
}
