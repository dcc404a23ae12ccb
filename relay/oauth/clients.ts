/**
 * Finding the client a request names: a registered client from the store, or a client ID
 * metadata document, kept in the store and fetched again once its copy is stale. Fetches of the
 * same address share one flight; at most DOCUMENT_FETCHES_AT_ONCE run at once.
 */
import type { OAuthStore, ClientRecord } from '../store/oauth.js';
import type { ClientMetadata } from './client-metadata.js';
import { DocumentRefusal, DOCUMENT_FETCHES_AT_ONCE, fetchClientDocument, isDocumentClientId } from './client-documents.js';

export interface Client {
  record: ClientRecord;
  metadata: ClientMetadata;
  document: boolean;
}

export interface ClientFinder {
  /** The client, undefined when no registered client has that id; a document that cannot be used throws DocumentRefusal. */
  find(clientId: string): Promise<Client | undefined>;
  /** The client as stored, without fetching (the token endpoint and approvals use the stored copy). */
  stored(clientId: string): Promise<Client | undefined>;
}

function asClient(record: ClientRecord): Client {
  return { record, metadata: JSON.parse(record.metadata) as ClientMetadata, document: record.kind === 'document' };
}

export function createClientFinder(store: OAuthStore, clock: () => number, allowLoopback: () => boolean): ClientFinder {
  const flights = new Map<string, Promise<Client>>();

  async function fetchAndKeep(clientId: string): Promise<Client> {
    const doc = await fetchClientDocument(clientId, allowLoopback());
    const now = clock();
    const record: ClientRecord = {
      clientId,
      kind: 'document',
      secretHash: null,
      authMethod: 'none',
      clientName: doc.metadata.client_name ?? null,
      metadata: JSON.stringify(doc.metadata),
      issuedAt: now,
      freshUntil: now + doc.keepSeconds * 1000,
    };
    await store.keepDocument(record);
    return asClient(await store.client(clientId) ?? record);
  }

  return {
    async stored(clientId) {
      const r = await store.client(clientId);
      return r ? asClient(r) : undefined;
    },
    async find(clientId) {
      const kept = await store.client(clientId);
      if (!isDocumentClientId(clientId, allowLoopback())) return kept && kept.kind === 'registered' ? asClient(kept) : undefined;
      if (kept && kept.freshUntil !== null && kept.freshUntil > clock()) return asClient(kept);
      let flight = flights.get(clientId);
      if (flight === undefined) {
        if (flights.size >= DOCUMENT_FETCHES_AT_ONCE) throw new DocumentRefusal('busy', 'client_id: too many client documents being fetched');
        flight = fetchAndKeep(clientId).finally(() => flights.delete(clientId));
        flights.set(clientId, flight);
      }
      return flight;
    },
  };
}
