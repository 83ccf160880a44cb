package sdk

import "runtime/debug"

// safeCall runs fn, turning a panic into a *PanicError with the stack.
func safeCall(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: string(debug.Stack())}
		}
	}()
	return fn()
}

// SafeCall runs fn and turns a panic into a *PanicError carrying the panic
// value and stack. Runtimes use it around every call into connector code.
func SafeCall(fn func() error) error { return safeCall(fn) }
