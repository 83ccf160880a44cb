package plugins

import "syscall"

// parentDeathAttr asks the kernel to kill the plugin if the host dies. It is
// a second line of defence: the SDK's parent watch is the guarantee (the
// kernel signal is tied to the thread that started the child).
func parentDeathAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
