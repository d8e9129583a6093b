/**
 * A fresh PostgreSQL database for one test file, in the cluster of postgres-setup.ts: each
 * suite starts from nothing and no two files see each other's rows. Fails (never skips) when
 * no cluster could be had, with the reason and how to get one.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export async function postgresUrl(): Promise<string> {
  const cluster = inject('postgres');
  if ('error' in cluster) throw new Error(cluster.error);
  const name = `zt_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client(cluster.url);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(cluster.url);
  url.pathname = `/${name}`;
  return url.toString();
}
