package ledger

import (
	"hash/maphash"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// releaseKeys remembers which cache keys have a release in the bbolt file,
// as 64-bit hashes. A fresh query looks its key up twice — before it runs
// (Lookup) and when it commits (did an identical query commit first?) —
// and the answer is almost always no; each no used to be a bbolt read,
// the commit's under the state lock that every charge takes. With no hash
// the key is certainly not in the file and the read is skipped; a hash
// says maybe (a collision, or a release evicted since), and the file is
// read as before.
//
// Every path that puts a release into the file adds its key (putRelease,
// for checkpoints and replay; Import), before the transaction commits and
// so before a checkpoint drops the release from the state's in-memory
// map: a reader that misses the map then finds the hash. The set is built
// at Open from the file and is never written back.
type releaseKeys struct {
	seed maphash.Seed
	mu   sync.RWMutex
	set  map[uint64]struct{}
}

func newReleaseKeys() *releaseKeys {
	return &releaseKeys{seed: maphash.MakeSeed(), set: map[uint64]struct{}{}}
}

// load adds every key of the file's releases.
func (k *releaseKeys) load(tx *bolt.Tx) error {
	b := tx.Bucket(bucketReleases)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, _ := c.First(); key != nil; key, _ = c.Next() {
		k.set[maphash.Bytes(k.seed, key)] = struct{}{}
	}
	return nil
}

func (k *releaseKeys) add(key []byte) {
	h := maphash.Bytes(k.seed, key)
	k.mu.Lock()
	k.set[h] = struct{}{}
	k.mu.Unlock()
}

// may reports whether the file may hold a release under key (false: it
// certainly does not).
func (k *releaseKeys) may(key string) bool { return k.has(maphash.String(k.seed, key)) }

func (k *releaseKeys) mayBytes(key []byte) bool { return k.has(maphash.Bytes(k.seed, key)) }

func (k *releaseKeys) has(h uint64) bool {
	k.mu.RLock()
	_, ok := k.set[h]
	k.mu.RUnlock()
	return ok
}
