package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/internal/testlog"
)

// TestLogBufferBatchesAndFlushes: info lines wait in memory (no write
// per line) until the flush interval, a warning is written at once with
// everything before it, and Close loses nothing.
func TestLogBufferBatchesAndFlushes(t *testing.T) {
	var sink testlog.Sink
	b := newLogBuffer(&sink, time.Hour)
	log, err := newLogger(b, "text", "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("private query", "n", 1)
	log.Info("private query", "n", 2)
	if s := sink.String(); s != "" {
		t.Fatalf("info lines were written before the flush interval: %q", s)
	}
	log.Warn("backend slow")
	if s := sink.String(); strings.Count(s, "private query") != 2 || !strings.Contains(s, "backend slow") {
		t.Fatalf("a warning did not flush the lines before it and itself: %q", s)
	}
	log.Info("private query", "n", 3)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if s := sink.String(); !strings.Contains(s, "n=3") {
		t.Fatalf("Close lost a line: %q", s)
	}
	log.Info("after close")
	if s := sink.String(); !strings.Contains(s, "after close") {
		t.Fatalf("a line after Close was not written through: %q", s)
	}
}

// TestLogBufferFlushesOnInterval: a line reaches the writer within the
// interval without any further write, and the next line re-arms it.
func TestLogBufferFlushesOnInterval(t *testing.T) {
	var sink testlog.Sink
	b := newLogBuffer(&sink, 5*time.Millisecond)
	defer b.Close()
	log := slog.New(slog.NewTextHandler(b, nil))
	for i, want := range []string{"first", "second"} {
		log.Info(want)
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(sink.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("line %d was not flushed by the timer: %q", i, sink.String())
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestLogBufferBound: past logBufferMax the buffer is written without
// waiting for the timer.
func TestLogBufferBound(t *testing.T) {
	var sink testlog.Sink
	b := newLogBuffer(&sink, time.Hour)
	defer b.Close()
	line := strings.Repeat("x", 1023) + "\n"
	for range logBufferMax / len(line) {
		if _, err := b.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(sink.String()); n < logBufferMax {
		t.Fatalf("%d bytes written after %d buffered, want all", n, logBufferMax)
	}
}

// TestServeLogSurvivesShutdown: the per-query lines buffered in the
// serving process reach stderr when it stops on SIGTERM (main closes the
// buffer before it exits).
func TestServeLogSurvivesShutdown(t *testing.T) {
	files, err := demo.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	text, err := os.ReadFile(files.Policy)
	if err != nil {
		t.Fatal(err)
	}
	text = bytes.Replace(text, []byte("postgres: 127.0.0.1:15432"), []byte("postgres: "+addr), 1)
	text = bytes.Replace(text, []byte("mysql: 127.0.0.1:13306"), []byte("mysql: \"off\""), 1)
	if err := os.WriteFile(files.Policy, text, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainHelper$")
	cmd.Env = append(os.Environ(), envMainArgs+"="+joinArgs("serve", "--policy", files.Policy))
	stderr := &testlog.Sink{}
	cmd.Stderr = stderr
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	var conn *pgx.Conn
	for deadline := time.Now().Add(60 * time.Second); ; {
		if conn, err = pgx.Connect(context.Background(), fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", addr)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %v\n%s", err, stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var n int64
	err = conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM people").Scan(&n)
	conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v\n%s", err, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve ignored SIGTERM\n%s", stderr)
	}
	if !strings.Contains(stderr.String(), `msg="private query"`) {
		t.Fatalf("the private query's log line was lost at shutdown:\n%s", stderr)
	}
}
