package plugins

import "syscall"

// parentDeathAttr asks the kernel to kill the plugin if the host dies, and
// puts the plugin in a process group of its own, so that killGroup also
// reaches the processes it started. The kernel signal is a second line of
// defence: the SDK's parent watch is the guarantee (the signal is tied to
// the thread that started the child).
func parentDeathAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// killGroup kills the process group of the plugin whose process id is pid.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
