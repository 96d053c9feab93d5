package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logFlushEvery bounds how long a log line waits in memory before it is
// written; logBufferMax bounds how much waits.
const (
	logFlushEvery = 100 * time.Millisecond
	logBufferMax  = 64 << 10
)

// logBuffer is the process's stderr (main builds one). Writes collect in
// memory and reach the underlying writer at most logFlushEvery after the
// first of them, when logBufferMax bytes wait, on Flush (every line at
// warn or above: flushingHandler) and on Close. At info every private
// query is a line, so writing each at once cost one write system call per
// answer; batched, a busy proxy writes stderr about ten times a second.
// A clean exit loses nothing (main closes the buffer before it exits); a
// crash or kill -9 can lose the info lines of the last logFlushEvery.
type logBuffer struct {
	mu     sync.Mutex
	w      io.Writer
	every  time.Duration
	buf    []byte
	timer  *time.Timer
	armed  bool // the timer will flush
	closed bool // writes go straight through
}

func newLogBuffer(w io.Writer, every time.Duration) *logBuffer {
	return &logBuffer{w: w, every: every}
}

// Write buffers p. Its error is that of an earlier write that failed,
// if any (a failing stderr has nowhere to report to).
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) >= logBufferMax {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if !b.armed {
		if b.timer == nil {
			b.timer = time.AfterFunc(b.every, b.tick)
		} else {
			b.timer.Reset(b.every)
		}
		b.armed = true
	}
	return len(p), nil
}

func (b *logBuffer) tick() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = false
	_ = b.flushLocked()
}

// Flush writes what waits.
func (b *logBuffer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

func (b *logBuffer) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	b.buf = b.buf[:0]
	if cap(b.buf) > 4*logBufferMax {
		b.buf = nil // a burst's buffer is not kept
	}
	return err
}

// Close writes what waits; later writes go straight through.
func (b *logBuffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
		b.armed = false
	}
	return b.flushLocked()
}

// flushingHandler flushes its writer after every record at warn or
// above: those are rare and an operator (or a crash) should not wait for
// them.
type flushingHandler struct {
	slog.Handler
	f interface{ Flush() error }
}

// withFlush returns h, flushing w after warnings and errors when w
// buffers (a logBuffer).
func withFlush(h slog.Handler, w io.Writer) slog.Handler {
	if f, ok := w.(interface{ Flush() error }); ok {
		return flushingHandler{h, f}
	}
	return h
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		_ = h.f.Flush()
	}
	return err
}

func (h flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingHandler{h.Handler.WithAttrs(attrs), h.f}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{h.Handler.WithGroup(name), h.f}
}
