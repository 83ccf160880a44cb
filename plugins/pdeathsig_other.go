//go:build !linux

package plugins

import "syscall"

func parentDeathAttr() *syscall.SysProcAttr { return nil }

func killGroup(int) {}
