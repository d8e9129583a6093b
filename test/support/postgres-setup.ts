/**
 * Vitest global setup: the PostgreSQL cluster the store tests use. `.ci/run` starts one and
 * sets ZOTEUS_TEST_DATABASE_URL; without it a throwaway cluster is started here from the
 * server binaries (scripts/postgres-cluster.mjs) and stopped at the end. When neither works
 * the reason is handed to the tests, so each test that needs PostgreSQL fails saying how to
 * get it, and the others still run.
 */
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: { url: string } | { error: string };
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const given = process.env.ZOTEUS_TEST_DATABASE_URL;
  if (given) {
    project.provide('postgres', { url: given });
    return () => {};
  }
  // @ts-expect-error: a plain .mjs script of the repository, without types.
  const cluster = (await import('../../scripts/postgres-cluster.mjs')) as {
    startCluster(): Promise<{ url: string; stop(): void }>;
  };
  try {
    const started = await cluster.startCluster();
    project.provide('postgres', { url: started.url });
    return () => started.stop();
  } catch (error) {
    project.provide('postgres', { error: error instanceof Error ? error.message : String(error) });
    return () => {};
  }
}
