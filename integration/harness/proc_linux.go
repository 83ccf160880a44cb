package harness

import "syscall"

// setDeathSignal makes the kernel kill the child when the test process
// dies, so that a crashed test leaves no java behind.
func setDeathSignal(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGKILL
}
