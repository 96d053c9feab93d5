package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The budget digest protects what the budget arithmetic rests on — every
// account and pending record, key and value — against changes that keep
// the file well-formed: a flipped byte in an account key moves that
// account's spent total to another name (the real user's budget would read
// as unspent), a flipped element count on a page drops records, a flipped
// digit changes a total. bbolt has no checksums on data pages, and the
// budget invariants Check tests catch only some of these.
//
// The digest is the XOR, over every record r of those two buckets, of the
// first 16 bytes of SHA-256(bucket ‖ len(key) ‖ key ‖ value). XOR makes it
// incremental: a write removes the old record's hash and adds the new one,
// in the same transaction as the write, so it is exactly as durable. It
// lives in the meta bucket (keyDigest) from format version 2 on; Open adds
// it to a version 1 file. Releases are not covered: a damaged release is a
// wrong answer, not a forgotten charge.
type digest [16]byte

var keyDigest = []byte("budget_digest")

func recordHash(bucket, k, v []byte) digest {
	// One buffer and sha256.Sum256: a streaming hash.Hash allocates
	// several times per record, and this runs four times per charge.
	buf := make([]byte, 0, len(bucket)+1+binary.MaxVarintLen64+len(k)+len(v))
	buf = append(buf, bucket...)
	buf = append(buf, 0)
	buf = binary.AppendUvarint(buf, uint64(len(k)))
	buf = append(buf, k...)
	buf = append(buf, v...)
	sum := sha256.Sum256(buf)
	var d digest
	copy(d[:], sum[:])
	return d
}

func (d *digest) xor(o digest) {
	for i := range d {
		d[i] ^= o[i]
	}
}

// budgetPut writes k = v to a digested bucket and updates the digest.
func budgetPut(tx *bolt.Tx, bucket, k, v []byte) error {
	return budgetChange(tx, bucket, k, v)
}

// budgetDelete deletes k from a digested bucket and updates the digest.
func budgetDelete(tx *bolt.Tx, bucket, k []byte) error {
	return budgetChange(tx, bucket, k, nil)
}

func budgetChange(tx *bolt.Tx, bucket, k, v []byte) error {
	b := tx.Bucket(bucket)
	d, err := storedDigest(tx)
	if err != nil {
		return err
	}
	if old := b.Get(k); old != nil {
		d.xor(recordHash(bucket, k, old))
	}
	if v == nil {
		err = b.Delete(k)
	} else {
		d.xor(recordHash(bucket, k, v))
		err = b.Put(k, v)
	}
	if err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(keyDigest, d[:])
}

func storedDigest(tx *bolt.Tx) (digest, error) {
	var d digest
	v := tx.Bucket(bucketMeta).Get(keyDigest)
	if len(v) != len(d) {
		return d, damaged("the budget digest is missing or malformed (%d bytes)", len(v))
	}
	copy(d[:], v)
	return d, nil
}

var digestedBuckets = [][]byte{bucketAccounts, bucketPending}

// computeDigest hashes every digested record.
func computeDigest(tx *bolt.Tx) digest {
	var d digest
	for _, name := range digestedBuckets {
		_ = tx.Bucket(name).ForEach(func(k, v []byte) error {
			d.xor(recordHash(name, k, v))
			return nil
		})
	}
	return d
}

// checkDigest compares the stored digest with the records (format
// version 2; a version 1 file has none yet).
func checkDigest(tx *bolt.Tx) error {
	if string(tx.Bucket(bucketMeta).Get(keyVersion)) == formatVersion1 {
		return nil
	}
	stored, err := storedDigest(tx)
	if err != nil {
		return err
	}
	if got := computeDigest(tx); got != stored {
		return damaged("the budget records do not match the budget digest (stored %s, records hash to %s): "+
			"an account or reservation was changed, lost or added outside ddp-proxy", hex.EncodeToString(stored[:]), hex.EncodeToString(got[:]))
	}
	return nil
}

// upgradeV1 adds the budget digest to a sound version 1 ledger and marks
// it version 2 (Open, after every check passed; upgradeV2 follows).
func upgradeV1(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if string(meta.Get(keyVersion)) != formatVersion1 {
		return nil
	}
	if meta.Get(keyDigest) != nil {
		return errors.New("a version 1 ledger with a budget digest")
	}
	d := computeDigest(tx)
	if err := meta.Put(keyDigest, d[:]); err != nil {
		return fmt.Errorf("add the budget digest: %w", err)
	}
	return meta.Put(keyVersion, []byte(formatVersion2))
}

// upgradeV2 marks a sound version 2 ledger version 3: nothing to rewrite,
// its JSON records are read as they are (codec.go), but from now on
// binary records may be written, which a ddp-proxy that reads only
// version 2 must refuse by version rather than call damage.
func upgradeV2(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if string(meta.Get(keyVersion)) != formatVersion2 {
		return nil
	}
	return meta.Put(keyVersion, []byte(formatVersion3))
}
