package wire

// Replicas behind one load balancer number themselves (listen.peer_id),
// and both front ends carry the number in the high bits of every
// connection's id — the PostgreSQL process id of a cancel key, the MySQL
// connection id — so the ids are unique across the replicas and name the
// replica that holds the connection: a cancel or KILL that reaches
// another replica can be forwarded there, or refused, never mistaken for
// a local connection of the same number. One layout for both.

// MaxPeerID is the largest replica number: 8 bits of a positive int32 id
// (clients keep both ids in signed ints).
const MaxPeerID = 255

// PeerShift places the replica number in an id; the bits under it tell
// the replica's own connections apart.
const PeerShift = 23

// WithPeer returns id with replica number peer in its high bits.
func WithPeer(peer int, id uint32) uint32 {
	return uint32(peer)<<PeerShift | id&(1<<PeerShift-1)
}

// PeerOf is the replica number an id carries.
func PeerOf(id uint32) int { return int(id >> PeerShift) }

// Peer is a configured replica number, or 0 (no peers) outside 1 to
// MaxPeerID.
func Peer(p int) int {
	if p > 0 && p <= MaxPeerID {
		return p
	}
	return 0
}
