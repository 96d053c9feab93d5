//go:build !linux

package main

import "os/exec"

// dieWithParent: only Linux has a parent-death signal.
func dieWithParent(*exec.Cmd) {}
