package ledger

import (
	"encoding/binary"
	"hash/maphash"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// releaseKeys is the index of the release log (retention.go): the 64-bit
// hash of each stored release's cache key → its sequence number in the
// log. A fresh query looks its key up twice — before it runs (Lookup) and
// when it commits (did an identical query commit first?) — and the answer
// is almost always no: with no hash the key is certainly not in the file,
// and no bbolt read is made. A hash found leads to one record, whose own
// key is compared (getRelease): two keys under one hash (or an entry left
// by a checkpoint that failed) read as "not stored", so a repeat is
// charged again, which is safe.
//
// Every path that puts a release into the file adds its key (putRelease,
// for checkpoints, replay and Import), before the transaction commits and
// so before a checkpoint drops the release from the state's in-memory
// map: a reader that misses the map then finds the entry. The index is
// built at Open from the file and is never written back.
type releaseKeys struct {
	seed maphash.Seed
	mu   sync.RWMutex
	set  map[uint64]uint64
}

func newReleaseKeys() *releaseKeys {
	return &releaseKeys{seed: maphash.MakeSeed(), set: map[uint64]uint64{}}
}

// load indexes every release in the file's log and returns their bytes
// (keys and values).
func (k *releaseKeys) load(tx *bolt.Tx) (int64, error) {
	b := tx.Bucket(bucketReleaseLog)
	if b == nil {
		return 0, nil
	}
	var total int64
	c := b.Cursor()
	k.mu.Lock()
	defer k.mu.Unlock()
	for sk, v := c.First(); sk != nil; sk, v = c.Next() {
		_, key, val, err := decodeStored(v)
		if err != nil || len(sk) != 8 {
			return 0, damaged("release log entry %x is malformed", sk)
		}
		k.set[maphash.Bytes(k.seed, key)] = binary.BigEndian.Uint64(sk)
		total += int64(len(key) + len(val))
	}
	return total, nil
}

func (k *releaseKeys) add(key []byte, seq uint64) {
	h := maphash.Bytes(k.seed, key)
	k.mu.Lock()
	k.set[h] = seq
	k.mu.Unlock()
}

// remove drops key's entry if it still names seq (an evicted record).
func (k *releaseKeys) remove(key []byte, seq uint64) {
	h := maphash.Bytes(k.seed, key)
	k.mu.Lock()
	if k.set[h] == seq {
		delete(k.set, h)
	}
	k.mu.Unlock()
}

// seq returns the sequence number of the record that may hold key's
// release.
func (k *releaseKeys) seq(key []byte) (uint64, bool) { return k.get(maphash.Bytes(k.seed, key)) }

// may reports whether the file may hold a release under key (false: it
// certainly does not). maphash hashes a string as its bytes.
func (k *releaseKeys) may(key string) bool {
	_, ok := k.get(maphash.String(k.seed, key))
	return ok
}

func (k *releaseKeys) get(h uint64) (uint64, bool) {
	k.mu.RLock()
	s, ok := k.set[h]
	k.mu.RUnlock()
	return s, ok
}
