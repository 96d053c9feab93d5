package ledger

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// memo keeps what the hot path would otherwise recompute per charge: the
// exact decimals of the costs and limits it is asked about (a session
// charges the same ε again and again), and the decoded accounts, keyed by
// their stored bytes. Both are pure functions of their keys, so a memo
// entry can never disagree with what decoding or parsing would give: an
// account is reused only when the bytes in the transaction are exactly
// those it was decoded from (a rolled-back write or another process's
// edit simply misses). The rationals in it are shared and so never
// changed in place (exact's operations all allocate).
type memo struct {
	mu       sync.Mutex
	decimals map[uint64]*big.Rat // math.Float64bits → budget.ExactDecimal
	accounts map[string]memoAccount
}

type memoAccount struct {
	stored []byte
	a      account
}

// memoLimit bounds each map: past it the map is dropped and refilled
// (the entries are cheap to recompute, and the hot set is small: the
// session ε values and the policy's limits, the active accounts).
const memoLimit = 1024

func newMemo() *memo {
	return &memo{decimals: map[uint64]*big.Rat{}, accounts: map[string]memoAccount{}}
}

// exactOf reads b as exact decimals (budget.ExactDecimal), through the memo.
func (m *memo) exactOf(b budget.Budget) (exact, error) {
	eps, err := m.decimal(b.Epsilon)
	if err != nil {
		return exact{}, fmt.Errorf("epsilon: %w", err)
	}
	delta, err := m.decimal(b.Delta)
	if err != nil {
		return exact{}, fmt.Errorf("delta: %w", err)
	}
	return exact{eps, delta}, nil
}

func (m *memo) decimal(f float64) (*big.Rat, error) {
	k := math.Float64bits(f)
	m.mu.Lock()
	r, ok := m.decimals[k]
	m.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := budget.ExactDecimal(f)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if len(m.decimals) >= memoLimit {
		clear(m.decimals)
	}
	m.decimals[k] = r
	m.mu.Unlock()
	return r, nil
}

// getAccount reads an account, or a zero one if it does not exist yet.
func (m *memo) getAccount(b *bolt.Bucket, key []byte) (account, error) {
	v := b.Get(key)
	if v == nil {
		return newAccount(), nil
	}
	m.mu.Lock()
	e, ok := m.accounts[string(key)]
	m.mu.Unlock()
	if ok && bytes.Equal(e.stored, v) {
		return e.a, nil
	}
	a, err := decodeAccount(v)
	if err != nil {
		return account{}, err
	}
	m.remember(key, bytes.Clone(v), a)
	return a, nil
}

// putAccount writes an account (and the budget digest), remembering it.
func (m *memo) putAccount(tx *bolt.Tx, key []byte, a account) error {
	v, err := a.encode()
	if err != nil {
		return err
	}
	if err := budgetPut(tx, bucketAccounts, key, v); err != nil {
		return err
	}
	// v is bbolt's until the transaction ends, and never changed: share.
	m.remember(key, v, a)
	return nil
}

func (m *memo) remember(key, stored []byte, a account) {
	m.mu.Lock()
	if len(m.accounts) >= memoLimit {
		clear(m.accounts)
	}
	m.accounts[string(key)] = memoAccount{stored: stored, a: a}
	m.mu.Unlock()
}
