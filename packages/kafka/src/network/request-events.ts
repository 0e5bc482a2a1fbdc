// kafkajs' instrumentation of the adapter's own clusters, turned into KafkaRequestEvents for whoever
// listens (the services' metrics). A failing listener is logged and does not disturb the others.
import type { Logger } from '@offsetsync/runtime';
import type { KafkaRequestEvent } from '../types.js';

/** kafkajs' `network.request` payload (src/network/instrumentationEvents.js): the parts used. */
interface RequestPayload {
  apiName: string;
  apiVersion: number;
  broker: string;
  duration: number;
  size: number;
}

/** The listeners of every request a broker answered for the adapter. */
export class RequestEvents {
  private readonly listeners = new Set<(event: KafkaRequestEvent) => void>();

  constructor(private readonly logger: Logger) {}

  /** Adds a listener; returns the function that removes it. */
  listen(listener: (event: KafkaRequestEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The instrumentation emitter handed to kafkajs' clusters. */
  emit(eventName: string, payload: unknown): void {
    if (eventName !== 'network.request' || this.listeners.size === 0) return;
    const event = requestEvent(payload as RequestPayload);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error: unknown) {
        this.logger.warn({ err: error }, 'a Kafka request listener failed');
      }
    }
  }
}

function requestEvent(p: RequestPayload): KafkaRequestEvent {
  return {
    apiName: p.apiName,
    apiVersion: p.apiVersion,
    broker: p.broker,
    durationMs: p.duration,
    sizeBytes: p.size,
  };
}
