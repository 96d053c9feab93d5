package parser

import "container/list"

// lru is a map bounded by number and, with sizeOf set, by the summed
// sizes of its keys; the least recently used entries leave first. It is
// not safe for concurrent use: Cache.mu guards Cache's three.
type lru[K comparable, V any] struct {
	max     int
	maxSize int         // with sizeOf: bound on size
	sizeOf  func(K) int // nil: bounded by number only
	size    int         // the sum of sizeOf over the keys
	order   *list.List  // front = most recently used; values are *lruEntry
	items   map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key K
	val V
}

func newLRU[K comparable, V any](max, maxSize int, sizeOf func(K) int) *lru[K, V] {
	return &lru[K, V]{max: max, maxSize: maxSize, sizeOf: sizeOf, order: list.New(), items: map[K]*list.Element{}}
}

// get returns the value of k and makes it the most recently used.
func (l *lru[K, V]) get(k K) (V, bool) {
	el, ok := l.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	l.order.MoveToFront(el)
	return el.Value.(*lruEntry[K, V]).val, true
}

// add stores v under k unless k is there already (whoever computed it
// first wins: the values are equal), then evicts past the bounds.
func (l *lru[K, V]) add(k K, v V) {
	if _, ok := l.items[k]; ok {
		return
	}
	l.items[k] = l.order.PushFront(&lruEntry[K, V]{key: k, val: v})
	if l.sizeOf != nil {
		l.size += l.sizeOf(k)
	}
	for l.order.Len() > l.max || l.sizeOf != nil && l.size > l.maxSize {
		last := l.order.Back()
		old := last.Value.(*lruEntry[K, V]).key
		delete(l.items, old)
		if l.sizeOf != nil {
			l.size -= l.sizeOf(old)
		}
		l.order.Remove(last)
	}
}
