/** Store conformance, members and partition leases (cluster-store.ts; see ./index.ts). */
import { expect } from 'chai';
import { T0 } from '../fixtures';
import { ConformanceContext } from './context';

const TTL = 15_000;

export function describeCluster(ctx: ConformanceContext): void {
  describe('members', () => {
    it('heartbeatMember upserts; listLiveMembers lists those with expiresAt > now, by id', async () => {
      const s = ctx.store();
      expect(
        await s.heartbeatMember({ memberId: 'node-b', address: '10.0.0.2:8080', instance: 'ib', bus: 'redis' }, T0, TTL),
      ).to.deep.equal({
        held: true,
        member: { memberId: 'node-b', address: '10.0.0.2:8080', heartbeatAt: T0, expiresAt: T0 + TTL, instance: 'ib', bus: 'redis' },
      });
      await s.heartbeatMember({ memberId: 'node-a', instance: 'ia' }, T0 + 1000, TTL);
      expect((await s.listLiveMembers(T0 + 2000)).map((m) => [m.memberId, m.bus])).to.deep.equal([
        ['node-a', null],
        ['node-b', 'redis'],
      ]);
      // node-b expires at T0 + TTL exactly (not live at that instant), node-a a second later
      expect((await s.listLiveMembers(T0 + TTL)).map((m) => m.memberId)).to.deep.equal(['node-a']);
      expect(await s.listLiveMembers(T0 + TTL + 1000)).to.deep.equal([]);
      // a later heartbeat extends it and replaces the address and the bus
      await s.heartbeatMember({ memberId: 'node-b', address: null, instance: 'ib', bus: 'postgres' }, T0 + 10_000, TTL);
      const live = await s.listLiveMembers(T0 + TTL + 1000);
      expect(live).to.deep.equal([
        { memberId: 'node-b', address: null, heartbeatAt: T0 + 10_000, expiresAt: T0 + 10_000 + TTL, instance: 'ib', bus: 'postgres' },
      ]);
    });

    it('heartbeatMember: a live record of another instance is refused and left alone; an expired one is taken over', async () => {
      const s = ctx.store();
      await s.heartbeatMember({ memberId: 'dup', address: 'h1:1', instance: 'first', bus: 'redis' }, T0, TTL);
      const first = { memberId: 'dup', address: 'h1:1', heartbeatAt: T0, expiresAt: T0 + TTL, instance: 'first', bus: 'redis' };
      expect(await s.heartbeatMember({ memberId: 'dup', address: 'h2:2', instance: 'second', bus: 'none' }, T0 + 1000, TTL)).to.deep.equal({
        held: false,
        holder: first,
      });
      expect(await s.listLiveMembers(T0 + 1000)).to.deep.equal([first]);
      // the holder goes on heartbeating
      expect((await s.heartbeatMember({ memberId: 'dup', address: 'h1:1', instance: 'first' }, T0 + 5000, TTL)).held).to.equal(true);
      expect((await s.heartbeatMember({ memberId: 'dup', instance: 'second' }, T0 + 5000 + TTL - 1, TTL)).held).to.equal(false);
      // its record expired (no heartbeat for a TTL): the other instance takes the id over ...
      const taken = await s.heartbeatMember({ memberId: 'dup', address: 'h2:2', instance: 'second' }, T0 + 5000 + TTL, TTL);
      expect(taken).to.deep.equal({
        held: true,
        member: {
          memberId: 'dup',
          address: 'h2:2',
          heartbeatAt: T0 + 5000 + TTL,
          expiresAt: T0 + 5000 + 2 * TTL,
          instance: 'second',
          bus: null,
        },
      });
      // ... and the first, heartbeating late, is refused: fenced out
      const late = await s.heartbeatMember({ memberId: 'dup', address: 'h1:1', instance: 'first' }, T0 + 5000 + TTL + 1, TTL);
      expect(late.held).to.equal(false);
      if (!late.held) expect(late.holder.instance).to.equal('second');
    });

    it('removeMember deletes one member and says whether it existed; with an instance, only the record of that instance', async () => {
      const s = ctx.store();
      await s.heartbeatMember({ memberId: 'm1', instance: 'i1' }, T0, TTL);
      await s.heartbeatMember({ memberId: 'm2', instance: 'i2' }, T0, TTL);
      expect(await s.removeMember('m1')).to.equal(true);
      expect(await s.removeMember('m1')).to.equal(false);
      expect((await s.listLiveMembers(T0)).map((m) => m.memberId)).to.deep.equal(['m2']);
      expect(await s.removeMember('m2', 'someone-else')).to.equal(false);
      expect((await s.listLiveMembers(T0)).map((m) => m.memberId)).to.deep.equal(['m2']);
      expect(await s.removeMember('m2', 'i2')).to.equal(true);
      expect(await s.listLiveMembers(T0)).to.deep.equal([]);
    });
  });

  describe('partition leases', () => {
    it('acquireLease grants a never-leased partition with epoch 1, and refuses it while held (even to its holder)', async () => {
      const s = ctx.store();
      expect(await s.acquireLease(3, 'a', T0, TTL)).to.deep.equal({
        granted: true,
        lease: { partition: 3, owner: 'a', epoch: 1, expiresAt: T0 + TTL },
      });
      const refused = await s.acquireLease(3, 'b', T0 + TTL - 1, TTL);
      expect(refused).to.deep.equal({ granted: false, current: { partition: 3, owner: 'a', epoch: 1, expiresAt: T0 + TTL } });
      expect((await s.acquireLease(3, 'a', T0 + 1, TTL)).granted).to.equal(false);
      expect(await s.listLeases()).to.deep.equal([{ partition: 3, owner: 'a', epoch: 1, expiresAt: T0 + TTL }]);
    });

    it('an expired lease is granted to the next caller with epoch + 1; the old holder can no longer renew or release it', async () => {
      const s = ctx.store();
      await s.acquireLease(0, 'a', T0, TTL);
      const grant = await s.acquireLease(0, 'b', T0 + TTL, TTL);
      expect(grant).to.deep.equal({ granted: true, lease: { partition: 0, owner: 'b', epoch: 2, expiresAt: T0 + 2 * TTL } });
      expect(await s.renewLease(0, 'a', 1, T0 + TTL + 1, TTL)).to.equal(null);
      expect(await s.releaseLease(0, 'a', 1)).to.equal(false);
      expect(await s.listLeases()).to.deep.equal([{ partition: 0, owner: 'b', epoch: 2, expiresAt: T0 + 2 * TTL }]);
    });

    it('renewLease extends a held lease (compare-and-set on owner and epoch) and never shortens it', async () => {
      const s = ctx.store();
      await s.acquireLease(1, 'a', T0, TTL);
      expect(await s.renewLease(1, 'a', 1, T0 + 5000, TTL)).to.deep.equal({
        partition: 1,
        owner: 'a',
        epoch: 1,
        expiresAt: T0 + 5000 + TTL,
      });
      expect(await s.renewLease(1, 'a', 2, T0 + 6000, TTL)).to.equal(null); // wrong epoch
      expect(await s.renewLease(1, 'b', 1, T0 + 6000, TTL)).to.equal(null); // wrong owner
      // the holder's clock stepped back 10 s: the renewal succeeds but keeps the later expiry
      expect(await s.renewLease(1, 'a', 1, T0 - 5000, TTL)).to.deep.equal({
        partition: 1,
        owner: 'a',
        epoch: 1,
        expiresAt: T0 + 5000 + TTL,
      });
      // expired: lost, even though nobody took it yet
      expect(await s.renewLease(1, 'a', 1, T0 + 5000 + TTL, TTL)).to.equal(null);
    });

    it('releaseLease frees the partition at once and the next grant continues the epoch', async () => {
      const s = ctx.store();
      await s.acquireLease(2, 'a', T0, TTL);
      expect(await s.releaseLease(2, 'a', 1)).to.equal(true);
      expect(await s.renewLease(2, 'a', 1, T0 + 1, TTL)).to.equal(null);
      expect(await s.acquireLease(2, 'b', T0 + 1, TTL)).to.deep.equal({
        granted: true,
        lease: { partition: 2, owner: 'b', epoch: 2, expiresAt: T0 + 1 + TTL },
      });
      expect(await s.releaseLease(2, 'b', 2)).to.equal(true);
      expect(await s.acquireLease(2, 'a', T0 + 2, TTL)).to.deep.include({ granted: true });
      expect((await s.listLeases()).map((l) => [l.partition, l.owner, l.epoch])).to.deep.equal([[2, 'a', 3]]);
    });

    it('of two acquisitions of one expired lease with the same view, exactly one is granted', async () => {
      const s = ctx.store();
      await s.acquireLease(4, 'a', T0, TTL);
      const grants = await Promise.all([s.acquireLease(4, 'b', T0 + TTL, TTL), s.acquireLease(4, 'c', T0 + TTL, TTL)]);
      expect(grants.filter((g) => g.granted)).to.have.length(1);
      expect((await s.listLeases())[0].epoch).to.equal(2);
    });

    it('listLeases lists every lease record by partition', async () => {
      const s = ctx.store();
      await s.acquireLease(5, 'x', T0, TTL);
      await s.acquireLease(1, 'y', T0, TTL);
      await s.releaseLease(5, 'x', 1);
      expect(await s.listLeases()).to.deep.equal([
        { partition: 1, owner: 'y', epoch: 1, expiresAt: T0 + TTL },
        { partition: 5, owner: 'x', epoch: 1, expiresAt: 0 },
      ]);
    });
  });
}
