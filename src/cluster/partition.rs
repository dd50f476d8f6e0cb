//! Which partition a host belongs to, and which partitions a node holds.
//!
//! Pure. A crawl has a fixed number of host partitions, set when it is created
//! ([`defaults::PARTITIONS`](crate::defaults::PARTITIONS)); [`partition_of`] is
//! a fixed-key hash of the lower-cased host, the same on every node and run, so
//! a host lives in one partition for the whole crawl, as it lives in one shard
//! of a node (`keys::shard_for`). The two hashes must not agree: were the
//! partition `h % P` and the shard `h % S` of one hash `h`, a node holding only
//! even partitions would put all its hosts on even shards. So the partition
//! comes from the high bits of a differently seeded FNV-1a, mixed, and the
//! shard from the low bits of the plain one (`partitions_do_not_pick_the_shard`
//! checks the spread).
//!
//! [`assign`] spreads the partitions over the live nodes: at most
//! ⌈P / n⌉ each, every partition to the first node under that cap in its
//! own rendezvous order (a hash of node and partition), so the spread is
//! even within one partition and a node that joins or leaves moves few
//! partitions besides its own share.

/// Most partitions a crawl may have: each is a stream, a lease and a
/// done log in Redis, and a few atomics on every node.
pub(crate) const MAX_PARTITIONS: u32 = 1 << 16;

/// FNV-1a's 64-bit offset basis, xored with a constant of this module's
/// own, so that partitions and shards come from unrelated hashes.
const SEED: u64 = 0xcbf2_9ce4_8422_2325 ^ 0x7061_7274_6974_696f;
const PRIME: u64 = 0x0100_0000_01b3;

/// splitmix64's finaliser: every input bit moves every output bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The partition of `host`, in `0..partitions` (0 if `partitions` is 0).
pub(crate) fn partition_of(host: &str, partitions: u32) -> u32 {
    let mut hash = SEED;
    for byte in host.bytes() {
        hash ^= u64::from(byte.to_ascii_lowercase());
        hash = hash.wrapping_mul(PRIME);
    }
    // Multiply-shift range reduction: the high bits of the mixed hash.
    ((u128::from(mix(hash)) * u128::from(partitions)) >> 64) as u32
}

/// Rendezvous weight of `node` for `partition`.
fn weight(node: &str, partition: u32) -> u64 {
    let mut hash = SEED;
    for byte in node.bytes().chain(partition.to_le_bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(PRIME);
    }
    mix(hash)
}

/// The owner of each partition (`result[p]` an index into `nodes`) when
/// `nodes` are the live nodes: at most ⌈partitions / n⌉ each. Depends only
/// on the set of nodes, not their order. Empty if there is no node.
#[allow(
    clippy::indexing_slicing,
    reason = "every index is below nodes.len(), the length of order and held"
)]
pub(crate) fn assign<S: AsRef<str>>(nodes: &[S], partitions: u32) -> Vec<usize> {
    if nodes.is_empty() {
        return Vec::new();
    }
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| nodes[a].as_ref().cmp(nodes[b].as_ref()));
    let cap = (partitions as usize).div_ceil(nodes.len());
    let mut held = vec![0usize; nodes.len()];
    let mut ranked: Vec<(u64, usize)> = Vec::with_capacity(nodes.len());
    (0..partitions)
        .map(|p| {
            ranked.clear();
            ranked.extend(order.iter().map(|&i| (weight(nodes[i].as_ref(), p), i)));
            ranked.sort_unstable_by(|a, b| b.cmp(a));
            let owner = ranked
                .iter()
                .map(|&(_, i)| i)
                .find(|&i| held[i] < cap)
                .unwrap_or(order[0]);
            held[owner] += 1;
            owner
        })
        .collect()
}

/// The partitions `nodes[me]` holds under [`assign`].
pub(crate) fn share<S: AsRef<str>>(nodes: &[S], me: usize, partitions: u32) -> Vec<u32> {
    assign(nodes, partitions)
        .into_iter()
        .zip(0..)
        .filter(|&(owner, _)| owner == me)
        .map(|(_, p)| p)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::shard_for;

    #[test]
    fn a_host_has_one_partition_whatever_its_case() {
        let p = partition_of("Example.COM", 256);
        assert_eq!(p, partition_of("example.com", 256));
        assert!(p < 256);
        assert_eq!(partition_of("example.com", 1), 0);
        assert_eq!(partition_of("example.com", 0), 0);
    }

    #[test]
    fn the_partition_of_a_host_is_pinned() {
        // A crawl's partitions must be the same on every node and in every
        // release that joins it: a change here splits running crawls.
        let pinned: Vec<u32> = ["a.test", "b.test", "example.com"]
            .iter()
            .map(|h| partition_of(h, 256))
            .collect();
        assert_eq!(pinned, PINNED.to_vec());
    }
    const PINNED: [u32; 3] = [251, 161, 155];

    #[test]
    fn hosts_spread_evenly_over_partitions() {
        let mut count = vec![0u32; 256];
        for i in 0..256_000 {
            count[partition_of(&format!("h{i}.endless.test"), 256) as usize] += 1;
        }
        let (min, max) = (count.iter().min().unwrap(), count.iter().max().unwrap());
        assert!(
            *min > 850 && *max < 1150,
            "{min}..{max} hosts a partition, 1000 expected"
        );
    }

    #[test]
    fn partitions_do_not_pick_the_shard() {
        // The hosts of the even partitions, as one node of two might hold:
        // both shards of a two-core node get about half of them.
        let mut shards = [0u32; 2];
        for i in 0..100_000 {
            let host = format!("h{i}.endless.test");
            if partition_of(&host, 256).is_multiple_of(2) {
                shards[shard_for(&host, 2)] += 1;
            }
        }
        let share = f64::from(shards[0]) / f64::from(shards[0] + shards[1]);
        assert!((0.45..0.55).contains(&share), "{shards:?}");
    }

    #[test]
    fn every_partition_has_one_owner_and_the_spread_is_even() {
        for n in 1..=7 {
            let nodes: Vec<String> = (0..n).map(|i| format!("node-{i}")).collect();
            let owners = assign(&nodes, 256);
            assert_eq!(owners.len(), 256);
            let mut held = vec![0usize; n];
            for &o in &owners {
                held[o] += 1;
            }
            let cap = 256usize.div_ceil(n);
            assert!(
                held.iter().all(|&h| h <= cap && h + n >= cap),
                "{n} nodes: {held:?}"
            );
            let shares: usize = (0..n).map(|i| share(&nodes, i, 256).len()).sum();
            assert_eq!(shares, 256);
        }
        assert!(assign::<&str>(&[], 256).is_empty());
    }

    #[test]
    fn the_assignment_does_not_depend_on_the_order_nodes_are_listed() {
        let a = ["n-a", "n-b", "n-c"];
        let b = ["n-c", "n-a", "n-b"];
        let by_name = |nodes: &[&str]| -> Vec<String> {
            assign(nodes, 256)
                .into_iter()
                .map(|i| nodes[i].to_string())
                .collect()
        };
        assert_eq!(by_name(&a), by_name(&b));
    }

    #[test]
    fn a_node_that_joins_moves_few_partitions_besides_its_share() {
        let three = ["n-a", "n-b", "n-c"];
        let four = ["n-a", "n-b", "n-c", "n-d"];
        let before = assign(&three, 256);
        let after = assign(&four, 256);
        let moved_between_old = before
            .iter()
            .zip(&after)
            .filter(|&(&b, &a)| a != 3 && a != b)
            .count();
        let to_new = after.iter().filter(|&&a| a == 3).count();
        assert_eq!(to_new, 64);
        assert!(
            moved_between_old < 40,
            "{moved_between_old} moved between old nodes"
        );
    }
}
