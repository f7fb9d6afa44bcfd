/**
 * Cluster reads (read-only). listLiveMembers — input: now; output: members with expires_at > now,
 * by id (a TTL index may or may not have removed the dead ones: the filter decides). listLeases —
 * output: every lease document (held, expired or released), by partition.
 */
import { MemberRecord, PartitionLease } from '../../cluster-store';
import type { MemberDoc, MongoCollections } from '../collections';
import { leaseFromDoc } from './acquire-lease';

export function memberFromDoc(d: MemberDoc): MemberRecord {
  return {
    memberId: d._id,
    address: d.address ?? null,
    heartbeatAt: d.heartbeat_at,
    expiresAt: d.expires_at,
    instance: d.instance ?? null,
    bus: d.bus ?? null,
  };
}

export async function listLiveMembers(c: MongoCollections, now: number): Promise<MemberRecord[]> {
  const docs = await c.members
    .find({ expires_at: { $gt: now } })
    .sort({ _id: 1 })
    .toArray();
  return docs.map(memberFromDoc);
}

export async function listLeases(c: MongoCollections): Promise<PartitionLease[]> {
  return (await c.leases.find({}).sort({ _id: 1 }).toArray()).map(leaseFromDoc);
}
