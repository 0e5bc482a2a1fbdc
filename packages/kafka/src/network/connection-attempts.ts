// kafkajs' ConnectionPool connects a connection whenever a request finds it disconnected, and its
// Connection.connect opens a new socket on every call made before the first one completed, keeping only
// the last in `connection.socket`. Two concurrent first requests of a kind (two Fetches to one broker:
// kafkajs sends Fetch over a connection of its own) thus opened two sockets; the one kafkajs forgot was
// never closed, and its close would later fail the live connection's requests. The pools the adapter uses
// share one attempt per connection instead.
import type { InternalConnectionPool } from '../protocol/kafkajs-internals.js';

const sharedPools = new WeakSet<InternalConnectionPool>();

/** Makes concurrent `getConnection(index)` calls of `pool` wait for one connect. Idempotent. */
export function shareConnectionAttempts(pool: InternalConnectionPool): void {
  if (sharedPools.has(pool)) return;
  sharedPools.add(pool);
  const getConnection = pool.getConnection.bind(pool);
  const attempts = new Map<number, Promise<unknown>>();
  pool.getConnection = (index = 0) => {
    const pending = attempts.get(index);
    if (pending !== undefined) return pending;
    const attempt = getConnection(index).finally(() => attempts.delete(index));
    attempts.set(index, attempt);
    return attempt;
  };
}
